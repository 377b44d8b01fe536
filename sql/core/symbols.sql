-- requires: none
-- loaded: with every run
-- input: kallsyms, printk_formats  each host's symbol tables (sql/views.py)

-- Kernel addresses in events -> names, as trace-cmd report resolves them: a pointer to a
-- function (workqueue_execute_start.function, timer_expire_entry.function, the ip of
-- ftrace's print / bprint) through the recording host's kallsyms, a pointer to a string
-- (bputs.str, bprint.fmt, rcu_utilization.s) through its printk formats. Both tables come
-- from the host's own trace.dat (views `kallsyms`, `printk_formats`, built by the loader).

-- kallsyms_ranges: one row = a (host, address) where a symbol that can name an address
-- starts; the address ranges of libtraceevent's resolution: a symbol names the addresses
-- from its own up to the next symbol's, and the highest one only its own (its end is not
-- known). Absolute symbols (type A / a) and ARM mapping symbols ($a, $d, ...) name nothing.
--   host          host directory name
--   address       where the symbol starts (UBIGINT, the kernel's address)
--   next_address  where the next symbol starts; NULL for the highest
--   name          the symbol (of several at one address, the first in the section)
--   module        its module; NULL for the kernel's own symbols
CREATE OR REPLACE VIEW kallsyms_ranges AS
SELECT host, address, lead(address) OVER (PARTITION BY host ORDER BY address) AS next_address, name, module
FROM (
    SELECT host, address, arg_min(name, seq) AS name, arg_min(module, seq) AS module
    FROM kallsyms
    WHERE type NOT IN ('A', 'a') AND NOT starts_with(name, '$')
    GROUP BY host, address
);

-- ksym(h, addr): the name of the kernel symbol address addr lies in, on host h's kernel
-- (NULL when none does); ksym_offset(h, addr): bytes from that symbol's start (trace-cmd's
-- %pS prints name+0x<offset>). For many rows, the same as an ASOF join on kallsyms_ranges:
--   ... ASOF LEFT JOIN kallsyms_ranges k ON e.host = k.host AND e.function >= k.address
--   (then keep k.name where e.function < k.next_address OR e.function = k.address).
CREATE OR REPLACE MACRO ksym(h, addr) AS (
    SELECT r.name FROM kallsyms_ranges r
    WHERE r.host = h AND r.address <= addr
      AND (addr < r.next_address OR (r.next_address IS NULL AND addr = r.address))
);
-- ksym_offset(host, address): bytes from the start of the symbol the address lies in (NULL if none).
CREATE OR REPLACE MACRO ksym_offset(h, addr) AS (
    SELECT addr - r.address FROM kallsyms_ranges r
    WHERE r.host = h AND r.address <= addr
      AND (addr < r.next_address OR (r.next_address IS NULL AND addr = r.address))
);

-- printk_format(h, addr): the string at address addr in host h's printk formats (the
-- text between the quotes, escapes as the kernel wrote them: \n, \t, \"); NULL when the
-- section does not hold it. Of two lines for one address, the first.
CREATE OR REPLACE MACRO printk_format(h, addr) AS (
    SELECT arg_min(p.format, p.seq) FROM printk_formats p WHERE p.host = h AND p.address = addr
);
