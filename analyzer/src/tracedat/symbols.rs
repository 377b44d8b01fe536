//! The trace file's kallsyms section (the recording host's /proc/kallsyms) and its
//! printk-formats section (the kernel's `printk_formats`: the strings trace_printk and
//! tracepoint_string() point at, by address). Read as libtraceevent reads them, so that
//! an address resolves to the same symbol or string as in `trace-cmd report`.

/// Both sections of one trace file. The kallsyms section (megabytes) is read when first
/// needed, which is off the conversion's critical path (`symbol_files` writes it while
/// the CPUs are decoded).
#[derive(Debug, Default)]
pub struct TraceSymbols {
    kallsyms_text: Vec<u8>,
    kallsyms: std::sync::OnceLock<Kallsyms>,
    pub printk: PrintkFormats,
}

impl TraceSymbols {
    pub fn new(kallsyms: Vec<u8>, printk: &[u8]) -> TraceSymbols {
        TraceSymbols { kallsyms_text: kallsyms, kallsyms: std::sync::OnceLock::new(), printk: PrintkFormats::parse(printk) }
    }

    pub fn kallsyms(&self) -> &Kallsyms {
        self.kallsyms.get_or_init(|| Kallsyms::parse(&self.kallsyms_text))
    }
}

/// One line of kallsyms: `ffffffff81000000 T _text` or `... t name\t[module]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Symbol<'a> {
    pub address: u64,
    /// The symbol type letter (`T`, `t`, `D`, ...).
    pub kind: u8,
    pub name: &'a str,
    pub module: Option<&'a str>,
}

/// Every symbol of the section in file order, stored column-wise (a kallsyms has some
/// 100,000 lines: one allocation per column, not per name), and an index sorted by
/// address of the ones that can name an address, made when first needed.
#[derive(Clone, Debug, Default)]
pub struct Kallsyms {
    pub addresses: Vec<u64>,
    pub kinds: Vec<u8>,
    /// The names one after another; `name_ends[i]` is where name i ends.
    pub names: String,
    pub name_ends: Vec<u32>,
    /// The modules likewise (empty for the kernel's own symbols).
    pub modules: String,
    pub module_ends: Vec<u32>,
    /// Lines that are not `ADDRESS TYPE NAME [\t[MODULE]]` (skipped).
    pub bad_lines: u64,
    by_address: std::sync::OnceLock<Vec<u32>>,
}

/// libtraceevent's rule: absolute symbols (type `A`/`a`: per-CPU offsets on x86-64) and
/// ARM's `$a`/`$d` mapping symbols never name an address.
pub fn resolvable(s: &Symbol) -> bool {
    !s.name.starts_with('$') && s.kind != b'A' && s.kind != b'a'
}

fn span(ends: &[u32], i: usize) -> std::ops::Range<usize> {
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    start..ends[i] as usize
}

impl Kallsyms {
    pub fn parse(text: &[u8]) -> Kallsyms {
        let mut k = Kallsyms::default();
        // Sized for the usual line (`ffffffff81000000 T name`, ~40 bytes): no regrowth.
        let lines = text.len() / 32 + 1;
        k.addresses.reserve(lines);
        k.kinds.reserve(lines);
        k.name_ends.reserve(lines);
        k.module_ends.reserve(lines);
        k.names.reserve(text.len() / 2);
        for line in String::from_utf8_lossy(text).split('\n') {
            if line.is_empty() {
                continue;
            }
            match parse_symbol(line) {
                Some((address, kind, name, module)) => {
                    k.addresses.push(address);
                    k.kinds.push(kind);
                    k.names.push_str(name);
                    k.name_ends.push(k.names.len() as u32);
                    k.modules.push_str(module);
                    k.module_ends.push(k.modules.len() as u32);
                }
                None => k.bad_lines += 1,
            }
        }
        k
    }

    pub fn len(&self) -> usize {
        self.addresses.len()
    }

    pub fn is_empty(&self) -> bool {
        self.addresses.is_empty()
    }

    pub fn get(&self, i: usize) -> Symbol<'_> {
        let module = &self.modules[span(&self.module_ends, i)];
        Symbol { address: self.addresses[i], kind: self.kinds[i], name: &self.names[span(&self.name_ends, i)], module: (!module.is_empty()).then_some(module) }
    }

    /// Indices of the resolvable symbols by address, as libtraceevent orders them: it keeps
    /// the symbols in a list it prepends to and sorts them stably (glibc's qsort) by
    /// address, so of several at one address the last in the file comes first.
    fn by_address(&self) -> &[u32] {
        self.by_address.get_or_init(|| {
            let mut idx: Vec<u32> = (0..self.len() as u32).rev().filter(|&i| resolvable(&self.get(i as usize))).collect();
            idx.sort_by_key(|&i| self.addresses[i as usize]);
            idx
        })
    }

    /// The symbol an address lies in, found as libtraceevent finds it (`__find_func`: glibc's
    /// bsearch over `by_address` with `func_bcmp`): an entry matches the address when it
    /// starts there, or when the address lies after its start and before the next entry's
    /// (the highest entry's next is 0, so it names only its own address). Inside a symbol
    /// that has several names this is the first name in the file; at their address, the one
    /// the search meets first, which depends on where they sit in the table (checked against
    /// trace-cmd on 150 random tables). Returns (symbol, offset into it).
    pub fn resolve(&self, address: u64) -> Option<(Symbol<'_>, u64)> {
        let idx = self.by_address();
        let at = |j: usize| self.addresses[idx[j] as usize];
        let (mut lo, mut hi) = (0, idx.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            let start = at(mid);
            let next = if mid + 1 < idx.len() { at(mid + 1) } else { 0 };
            if address == start || (address > start && address < next) {
                return Some((self.get(idx[mid] as usize), address - start));
            }
            if address < start {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        None
    }
}

/// `%16llx %c %s[\t[%s]]` as libtraceevent's tep_parse_kallsyms scans it: (address,
/// type, name, module or "").
fn parse_symbol(line: &str) -> Option<(u64, u8, &str, &str)> {
    let mut parts = line.splitn(3, ' ');
    let addr = parts.next()?;
    let kind = parts.next()?;
    let rest = parts.next()?;
    if addr.is_empty() || addr.len() > 16 || kind.len() != 1 {
        return None;
    }
    let address = u64::from_str_radix(addr, 16).ok()?;
    let (name, module) = match rest.split_once('\t') {
        Some((n, m)) => (n, m.strip_prefix('[').map(|m| m.strip_suffix(']').unwrap_or(m)).unwrap_or("")),
        None => (rest, ""),
    };
    let name = name.trim_end();
    if name.is_empty() {
        return None;
    }
    Some((address, kind.as_bytes()[0], name, module))
}

/// One line of printk formats: `0xffffffff82a0c5e8 : "Start context switch"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintkFormat {
    pub address: u64,
    /// The text between the quotes, as the file has it (the kernel writes a newline as
    /// `\n`, a tab as `\t` and a quote as `\"`).
    pub format: String,
}

#[derive(Clone, Debug, Default)]
pub struct PrintkFormats {
    pub formats: Vec<PrintkFormat>,
    pub bad_lines: u64,
    /// Index into `formats` by address (the first line of an address wins).
    by_address: std::collections::HashMap<u64, u32>,
}

impl PrintkFormats {
    pub fn parse(text: &[u8]) -> PrintkFormats {
        let mut p = PrintkFormats::default();
        for line in text.split(|&b| b == b'\n') {
            if line.is_empty() {
                continue;
            }
            let line = String::from_utf8_lossy(line);
            let Some((addr, rest)) = line.split_once(':') else {
                p.bad_lines += 1;
                continue;
            };
            let addr = addr.trim();
            let hex = addr.strip_prefix("0x").or_else(|| addr.strip_prefix("0X")).unwrap_or(addr);
            let Ok(address) = u64::from_str_radix(hex, 16) else {
                p.bad_lines += 1;
                continue;
            };
            // "ADDR : "..."": one space after the colon, then the quoted text.
            let quoted = rest.strip_prefix(' ').unwrap_or(rest);
            let inner = quoted.strip_prefix('"').unwrap_or(quoted);
            let inner = if quoted.starts_with('"') { inner.strip_suffix('"').unwrap_or(inner) } else { inner };
            p.by_address.entry(address).or_insert(p.formats.len() as u32);
            p.formats.push(PrintkFormat { address, format: inner.to_string() });
        }
        p
    }

    pub fn get(&self, address: u64) -> Option<&PrintkFormat> {
        self.by_address.get(&address).map(|&i| &self.formats[i as usize])
    }
}

impl PrintkFormat {
    /// The string as libtraceevent registers it (what `trace-cmd report` prints for a
    /// pointer to it): the file's text without one trailing `\n` escape.
    pub fn registered(&self) -> &str {
        self.format.strip_suffix("\\n").unwrap_or(&self.format)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kallsyms_lines_and_modules() {
        let k = Kallsyms::parse(b"ffffffff81000000 T _text\nffffffff81001000 t helper\t[nvme_tcp]\n0000000000000000 A fixed_percpu_data\nbad line\nffffffff81000000 T startup_64\nc0008000 t $a\n");
        assert_eq!(k.len(), 5);
        assert_eq!(k.bad_lines, 1);
        assert_eq!(k.get(1), Symbol { address: 0xffffffff81001000, kind: b't', name: "helper", module: Some("nvme_tcp") });
        assert_eq!(k.get(0).module, None);
        // Below the lowest resolvable symbol: nothing (the absolute symbol at 0 never names).
        assert_eq!(k.resolve(0x10), None);
        // Two symbols at one address: inside, the first in the file; at it, the one the binary
        // search meets (the table is [startup_64, _text, helper]: the middle one first)
        let (s, off) = k.resolve(0xffffffff81000010).unwrap();
        assert_eq!((s.name, off), ("_text", 0x10));
        assert_eq!(k.resolve(0xffffffff81000000).unwrap().0.name, "_text");
        let k4 = Kallsyms::parse(b"ffffffff81000000 T a\nffffffff81000000 T b\nffffffff81000000 T c\nffffffff81000100 T d\n");
        // [c, b, a, d]: the search meets a (index 2) first; inside, a (the file's first)
        assert_eq!(k4.resolve(0xffffffff81000000).unwrap().0.name, "a");
        let k5 = Kallsyms::parse(b"ffffffff81000000 T a\nffffffff81000000 T b\nffffffff81000000 T c\nffffffff81000100 T d\nffffffff81000200 T e\nffffffff81000300 T f\n");
        // [c, b, a, d, e, f]: index 3 (d) is above, then index 1: b
        assert_eq!(k5.resolve(0xffffffff81000000).unwrap().0.name, "b");
        assert_eq!(k5.resolve(0xffffffff81000008).unwrap().0.name, "a");
        // At the highest symbol exactly: it; past it: nothing (its end is unknown).
        assert_eq!(k.resolve(0xffffffff81001000).unwrap().0.name, "helper");
        assert_eq!(k.resolve(0xffffffff81001004), None);
        assert_eq!(k.resolve(0xc0008000), None, "ARM mapping symbols never name an address");
    }

    #[test]
    fn printk_lines() {
        let p = PrintkFormats::parse(b"0xc070f5b0 : \"cluster=%d freq=%d\\n\"\n0xffffffff82a0c5e8 : \"Start context switch\"\nnonsense\n0xc070f5b0 : \"second\"\n");
        assert_eq!(p.formats.len(), 3);
        assert_eq!(p.bad_lines, 1);
        let f = p.get(0xc070f5b0).unwrap();
        assert_eq!(f.format, "cluster=%d freq=%d\\n");
        assert_eq!(f.registered(), "cluster=%d freq=%d");
        assert_eq!(p.get(0xffffffff82a0c5e8).unwrap().registered(), "Start context switch");
        assert!(p.get(1).is_none());
    }
}
