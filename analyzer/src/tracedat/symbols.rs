//! The trace file's kallsyms section (the recording host's /proc/kallsyms) and its
//! printk-formats section (the kernel's `printk_formats`: the strings trace_printk and
//! tracepoint_string() point at, by address). Read as libtraceevent reads them, so that
//! an address resolves to the same symbol or string as in `trace-cmd report`.

/// Both sections of one trace file.
#[derive(Clone, Debug, Default)]
pub struct TraceSymbols {
    pub kallsyms: Kallsyms,
    pub printk: PrintkFormats,
}

/// One line of kallsyms: `ffffffff81000000 T _text` or `... t name\t[module]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub address: u64,
    /// The symbol type letter (`T`, `t`, `D`, ...).
    pub kind: char,
    pub name: String,
    pub module: Option<String>,
}

/// Every symbol of the section in file order, and an index sorted by address of the ones
/// an address resolves to.
#[derive(Clone, Debug, Default)]
pub struct Kallsyms {
    pub symbols: Vec<Symbol>,
    /// Lines that are not `ADDRESS TYPE NAME [\t[MODULE]]` (skipped).
    pub bad_lines: u64,
    /// Indices into `symbols` of the resolvable ones, by address (see `resolvable`).
    by_address: Vec<u32>,
}

/// libtraceevent's rule: absolute symbols (type `A`/`a`: per-CPU offsets on x86-64) and
/// ARM's `$a`/`$d` mapping symbols never name an address.
pub fn resolvable(s: &Symbol) -> bool {
    !s.name.starts_with('$') && s.kind != 'A' && s.kind != 'a'
}

impl Kallsyms {
    pub fn parse(text: &[u8]) -> Kallsyms {
        let mut k = Kallsyms::default();
        for line in text.split(|&b| b == b'\n') {
            if line.is_empty() {
                continue;
            }
            match parse_symbol(line) {
                Some(s) => k.symbols.push(s),
                None => k.bad_lines += 1,
            }
        }
        let mut idx: Vec<u32> = (0..k.symbols.len() as u32).filter(|&i| resolvable(&k.symbols[i as usize])).collect();
        // Stable: of several symbols at one address the first in the file wins.
        idx.sort_by_key(|&i| k.symbols[i as usize].address);
        k.by_address = idx;
        k
    }

    /// The symbol an address lies in: the last resolvable one at or below it, unless the
    /// address is at or above the highest symbol's (no end is known there; libtraceevent
    /// resolves it to nothing either). Returns (symbol, offset into it).
    pub fn resolve(&self, address: u64) -> Option<(&Symbol, u64)> {
        let n = self.by_address.partition_point(|&i| self.symbols[i as usize].address <= address);
        if n == 0 {
            return None;
        }
        let sym = &self.symbols[self.by_address[n - 1] as usize];
        // The first of the symbols at that address.
        let first = self.by_address[..n].partition_point(|&i| self.symbols[i as usize].address < sym.address);
        let sym = &self.symbols[self.by_address[first] as usize];
        if n == self.by_address.len() && address != sym.address {
            return None;
        }
        Some((sym, address - sym.address))
    }
}

/// `%16llx %c %s[\t[%s]]` as libtraceevent's tep_parse_kallsyms scans it.
fn parse_symbol(line: &[u8]) -> Option<Symbol> {
    let text = std::str::from_utf8(line).ok()?;
    let mut parts = text.splitn(3, |c: char| c == ' ');
    let addr = parts.next()?;
    let kind = parts.next()?;
    let rest = parts.next()?;
    if addr.is_empty() || addr.len() > 16 || kind.chars().count() != 1 {
        return None;
    }
    let address = u64::from_str_radix(addr, 16).ok()?;
    let (name, module) = match rest.split_once('\t') {
        Some((n, m)) => (n, m.strip_prefix('[').map(|m| m.strip_suffix(']').unwrap_or(m).to_string())),
        None => (rest, None),
    };
    let name = name.trim_end();
    if name.is_empty() {
        return None;
    }
    Some(Symbol { address, kind: kind.chars().next()?, name: name.to_string(), module })
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
        assert_eq!(k.symbols.len(), 5);
        assert_eq!(k.bad_lines, 1);
        assert_eq!(k.symbols[1], Symbol { address: 0xffffffff81001000, kind: 't', name: "helper".into(), module: Some("nvme_tcp".into()) });
        // Below the lowest resolvable symbol: nothing (the absolute symbol at 0 never names).
        assert_eq!(k.resolve(0x10), None);
        // Two symbols at one address: the first in the file.
        let (s, off) = k.resolve(0xffffffff81000010).unwrap();
        assert_eq!((s.name.as_str(), off), ("_text", 0x10));
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
