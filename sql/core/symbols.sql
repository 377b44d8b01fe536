-- requires: none
-- loaded: with every run
-- input: kallsyms, printk_formats  each host's symbol tables (sql/views.py)

-- Kernel addresses in events -> names, as trace-cmd report resolves them: a pointer to a
-- function (workqueue_execute_start.function, timer_expire_entry.function, the ip of
-- ftrace's print / bprint) through the recording host's kallsyms, a pointer to a string
-- (bputs.str, bprint.fmt, rcu_utilization.s) through its printk formats. Both tables come
-- from the host's own trace.dat (views `kallsyms`, `printk_formats`, built by the loader).

-- kallsyms_table: libtraceevent's table of a host's symbols (func_map): those that can name
-- an address (not absolute, type A / a, nor ARM mapping symbols, $a, $d, ...), in the order
-- it searches them: it prepends each to a list and sorts the list stably by address, so of
-- several at one address the last in the section comes first.
--   host, pos (0..), address, name, module, seq (its line in the section)
--   n             the table's size (per host)
CREATE OR REPLACE VIEW kallsyms_table AS
SELECT host, row_number() OVER (PARTITION BY host ORDER BY address, seq DESC) - 1 AS pos, address, name, module, seq,
       count(*) OVER (PARTITION BY host) AS n
FROM kallsyms
WHERE type NOT IN ('A', 'a') AND NOT starts_with(name, '$');

-- kallsyms_exact: one row per (host, address) that several symbols name: the one libtraceevent
-- gives for that very address. Its search (glibc's bsearch with func_bcmp) stops at the first
-- table entry it probes that starts there, which depends on where the names sit in the table
-- (analyzer/src/tracedat/symbols.rs Kallsyms::resolve does the same; both checked against
-- trace-cmd). Each such address is searched here probe by probe (a view: tens of ms that only
-- a query of symbols pays).
--   host, address, name, module
CREATE OR REPLACE VIEW kallsyms_exact AS
WITH RECURSIVE t AS MATERIALIZED (
    SELECT * FROM kallsyms_table
), dup AS (
    SELECT host, address, any_value(n) AS n FROM t GROUP BY host, address HAVING count(*) > 1
), search AS (
    SELECT host, address, 0::BIGINT AS lo, n AS hi, NULL::BIGINT AS hit FROM dup
    UNION ALL
    -- one probe: the middle entry; a hit when it starts at the address, else the half the
    -- address lies in (an address that several name is never inside another entry's range)
    SELECT s.host, s.address,
           CASE WHEN p.address < s.address THEN (s.lo + s.hi) // 2 + 1 ELSE s.lo END,
           CASE WHEN p.address > s.address THEN (s.lo + s.hi) // 2 ELSE s.hi END,
           CASE WHEN p.address = s.address THEN p.pos END
    FROM search s JOIN t p ON p.host = s.host AND p.pos = (s.lo + s.hi) // 2
    WHERE s.hit IS NULL AND s.lo < s.hi
)
SELECT s.host, s.address, p.name, p.module
FROM search s JOIN t p ON p.host = s.host AND p.pos = s.hit;

-- kallsyms_ranges: one row = a (host, address) where a symbol that can name an address
-- starts; the address ranges of libtraceevent's resolution: a symbol names the addresses
-- from its own up to the next symbol's, and the highest one only its own (its end is not
-- known). Absolute symbols (type A / a) and ARM mapping symbols ($a, $d, ...) name nothing.
--   host          host directory name
--   address       where the symbol starts (UBIGINT, the kernel's address)
--   next_address  where the next symbol starts; NULL for the highest
--   name          the symbol an address inside the range is given (of several at one
--                 address, the first in the section: the last in kallsyms_table's order)
--   module        its module; NULL for the kernel's own symbols
--   exact_name, exact_module   the symbol the address itself is given: name, unless several
--                 name it (kallsyms_exact)
CREATE OR REPLACE VIEW kallsyms_ranges AS
SELECT r.host, r.address, lead(r.address) OVER (PARTITION BY r.host ORDER BY r.address) AS next_address, r.name, r.module,
       coalesce(x.name, r.name) AS exact_name, CASE WHEN x.host IS NULL THEN r.module ELSE x.module END AS exact_module
FROM (
    SELECT host, address, arg_min(name, seq) AS name, arg_min(module, seq) AS module
    FROM kallsyms_table
    GROUP BY host, address
) r
LEFT JOIN kallsyms_exact x USING (host, address);

-- ksym(h, addr): the name of the kernel symbol address addr lies in, on host h's kernel
-- (NULL when none does); ksym_offset(h, addr): bytes from that symbol's start (trace-cmd's
-- %pS prints name+0x<offset>). For many rows, the same as an ASOF join on kallsyms_ranges:
--   ... ASOF LEFT JOIN kallsyms_ranges k ON e.host = k.host AND e.function >= k.address
--   (then keep k.exact_name where e.function = k.address, k.name where e.function <
--   k.next_address).
CREATE OR REPLACE MACRO ksym(h, addr) AS (
    SELECT CASE WHEN addr = r.address THEN r.exact_name ELSE r.name END FROM kallsyms_ranges r
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
