//! The text of ftrace's own message events, as `trace-cmd report` prints it after the
//! event's `ip` symbol (`<ip>: <text>`):
//! - `ftrace:print` (trace_marker writes): the `buf` bytes up to the first NUL;
//! - `ftrace:bputs` (trace_puts): the string at address `str` in the file's printk formats;
//! - `ftrace:bprint` (trace_printk): the printk format at address `fmt`, its arguments
//!   taken from `buf`, the binary buffer the kernel's vbin_printf packed them into.
//! Like trace-cmd, one trailing newline is not part of the text, and a printk format is
//! used without its trailing `\n` and with libtraceevent's escapes (`\n`, `\t`, `\r`,
//! `\\`; `\X` is X).
//!
//! The arguments are read as the kernel packed them: integers at their C size (`%hhd` 1
//! byte, `%hd` 2, `%d` 4, `%ld` the kernel's long, `%lld` 8), each aligned to its size
//! (8-byte ones to 4), strings inline up to their NUL, `%p` with a suffix the kernel
//! prints itself (`%pM`, `%pI4` ...) as the string it stored. Each conversion is then
//! printed as C's printf prints it (flags, width, precision, `*` from the buffer), `%p` as
//! libtraceevent does (`0x...`, `(nil)`; `%ps`/`%pf` the symbol, `%pS`/`%pF`
//! `symbol+0xoffset`, from the file's kallsyms). A width or precision above `MAX_WIDTH` is
//! taken as `MAX_WIDTH` (a format or argument from the file must not make one record's
//! text megabytes). libtraceevent 1.7 reads a few
//! conversions otherwise: `%c` (it prints `>c<`), `%h`-sized integers (it consumes no
//! argument) and `%ld` of a negative value in a 32-bit trace (it prints 2^32 - n); there
//! the text is the kernel's.

use crate::tracedat::bytes::Endian;
use crate::tracedat::symbols::TraceSymbols;

/// The widest field a conversion pads to, and the longest precision.
pub const MAX_WIDTH: usize = 4096;

/// One piece of a parsed printk format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Literal bytes (escapes already applied).
    Lit(Vec<u8>),
    Conv(Conv),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Count {
    None,
    Fixed(usize),
    /// `*`: an int argument.
    Arg,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conv {
    pub left: bool,
    pub plus: bool,
    pub space: bool,
    pub alt: bool,
    pub zero: bool,
    pub width: Count,
    pub precision: Count,
    /// Argument size for integer conversions: 1, 2, 4, 8, or 0 for the kernel's long.
    pub size: usize,
    /// d i u o x X c s p, or another byte (printed as is).
    pub conv: u8,
    /// The alphanumeric suffix of `%p` (`S`, `s`, `M`, `I4` ...).
    pub ext: String,
}

/// Parses a printk format as libtraceevent holds it (escapes not yet applied).
pub fn parse_format(fmt: &str) -> Vec<Piece> {
    let b = fmt.as_bytes();
    let mut out = Vec::new();
    let mut lit = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\\' && i + 1 < b.len() {
            lit.push(match b[i + 1] {
                b'n' => b'\n',
                b't' => b'\t',
                b'r' => b'\r',
                other => other,
            });
            i += 2;
            continue;
        }
        if c != b'%' {
            lit.push(c);
            i += 1;
            continue;
        }
        if b.get(i + 1) == Some(&b'%') {
            lit.push(b'%');
            i += 2;
            continue;
        }
        let (conv, next) = parse_conv(b, i + 1);
        match conv {
            Some(conv) => {
                if !lit.is_empty() {
                    out.push(Piece::Lit(std::mem::take(&mut lit)));
                }
                out.push(Piece::Conv(conv));
            }
            // A lone '%' at the end: printed as is.
            None => lit.extend_from_slice(&b[i..next]),
        }
        i = next;
    }
    if !lit.is_empty() {
        out.push(Piece::Lit(lit));
    }
    out
}

/// A conversion starting after its '%' at `b[i]`; returns it and where the format goes on.
fn parse_conv(b: &[u8], mut i: usize) -> (Option<Conv>, usize) {
    let mut c = Conv { left: false, plus: false, space: false, alt: false, zero: false, width: Count::None, precision: Count::None, size: 4, conv: 0, ext: String::new() };
    while let Some(&f) = b.get(i) {
        match f {
            b'-' => c.left = true,
            b'+' => c.plus = true,
            b' ' => c.space = true,
            b'#' => c.alt = true,
            b'0' => c.zero = true,
            _ => break,
        }
        i += 1;
    }
    let number = |i: &mut usize| -> Count {
        if b.get(*i) == Some(&b'*') {
            *i += 1;
            return Count::Arg;
        }
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        std::str::from_utf8(&b[start..*i]).ok().and_then(|s| s.parse::<usize>().ok().or((*i > start).then_some(MAX_WIDTH))).map_or(Count::None, |n| Count::Fixed(n.min(MAX_WIDTH)))
    };
    c.width = number(&mut i);
    if b.get(i) == Some(&b'.') {
        i += 1;
        c.precision = match number(&mut i) {
            Count::None => Count::Fixed(0),
            n => n,
        };
    }
    let mut hs = 0;
    let mut ls = 0;
    while let Some(&m) = b.get(i) {
        match m {
            b'h' => hs += 1,
            b'l' => ls += 1,
            b'L' | b'q' | b'j' => ls = 2,
            b'z' | b'Z' | b't' => ls = 1,
            _ => break,
        }
        i += 1;
    }
    c.size = match (hs, ls) {
        (_, 1) => 0,
        (_, l) if l >= 2 => 8,
        (1, _) => 2,
        (h, _) if h >= 2 => 1,
        _ => 4,
    };
    let Some(&conv) = b.get(i) else { return (None, i) };
    i += 1;
    c.conv = conv;
    if conv == b'p' {
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_alphanumeric) {
            i += 1;
        }
        c.ext = String::from_utf8_lossy(&b[start..i]).into_owned();
    }
    (Some(c), i)
}

/// What rendering needs of the trace: how it stores numbers, and its symbol tables.
pub struct TextContext<'a> {
    pub endian: Endian,
    /// The kernel's long (the ring buffer's commit word).
    pub long_size: usize,
    /// The printk formats, and the kallsyms for `%pS` (read when a record first needs it).
    pub symbols: &'a TraceSymbols,
}

/// Reads the packed arguments of one bprint record.
struct Args<'a> {
    buf: &'a [u8],
    pos: usize,
    endian: Endian,
}

impl Args<'_> {
    /// An integer of `size` bytes aligned to its size (8-byte ones to 4), or None when the
    /// buffer ends first.
    fn int(&mut self, size: usize) -> Option<u64> {
        let align = size.min(4);
        let at = self.pos.div_ceil(align) * align;
        let bytes = self.buf.get(at..at + size)?;
        self.pos = at + size;
        Some(self.endian.read_uint(bytes, 0, size))
    }
    /// A NUL-terminated string (no alignment), without its NUL.
    fn string(&mut self) -> Option<&[u8]> {
        let rest = self.buf.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        let len = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        self.pos += (len + 1).min(rest.len());
        Some(&rest[..len])
    }
}

/// Appends the text of one bprint record: `pieces` (the parsed format at its `fmt`
/// address) with the arguments packed in `buf`. Stops at the first conversion whose
/// argument the buffer does not hold.
pub fn render_bprint(pieces: &[Piece], buf: &[u8], ctx: &TextContext, out: &mut Vec<u8>) {
    let mut args = Args { buf, pos: 0, endian: ctx.endian };
    for p in pieces {
        let c = match p {
            Piece::Lit(l) => {
                out.extend_from_slice(l);
                continue;
            }
            Piece::Conv(c) => c,
        };
        let mut c = c.clone();
        if c.width == Count::Arg {
            let Some(w) = args.int(4) else { return };
            let w = w as u32 as i32;
            if w < 0 {
                c.left = true;
            }
            c.width = Count::Fixed((w.unsigned_abs() as usize).min(MAX_WIDTH));
        }
        if c.precision == Count::Arg {
            let Some(p) = args.int(4) else { return };
            let p = p as u32 as i32;
            c.precision = if p < 0 { Count::None } else { Count::Fixed((p as usize).min(MAX_WIDTH)) };
        }
        let size = if c.size == 0 { ctx.long_size } else { c.size };
        match c.conv {
            b'd' | b'i' | b'u' | b'o' | b'x' | b'X' => {
                let Some(v) = args.int(size) else { return };
                format_int(&c, v, size, out);
            }
            b'c' => {
                let Some(v) = args.int(1) else { return };
                pad(&c, &[v as u8], out);
            }
            b's' => {
                let Some(s) = args.string() else { return };
                let s = match c.precision {
                    Count::Fixed(p) => &s[..p.min(s.len())],
                    _ => s,
                };
                pad(&c, s, out);
            }
            b'p' => {
                let first = c.ext.as_bytes().first().copied();
                let pointer = matches!(first, None | Some(b'S' | b's' | b'F' | b'f' | b'x' | b'K' | b'e'));
                if pointer {
                    let Some(v) = args.int(ctx.long_size) else { return };
                    format_pointer(first, v, ctx, out);
                } else {
                    // The kernel printed it when recording and stored the string.
                    let Some(s) = args.string() else { return };
                    out.extend_from_slice(s);
                }
            }
            other => out.push(other),
        }
    }
}

/// `%p` as libtraceevent prints it: a symbol for `%ps`/`%pf` (`+0xoffset` for `%pS`/`%pF`)
/// when the address is in kallsyms, else `0x...`; a plain `%p` as glibc does.
fn format_pointer(ext: Option<u8>, v: u64, ctx: &TextContext, out: &mut Vec<u8>) {
    use std::io::Write;
    match ext {
        Some(e @ (b'S' | b's' | b'F' | b'f')) => match ctx.symbols.kallsyms().resolve(v) {
            Some((sym, off)) => {
                out.extend_from_slice(sym.name.as_bytes());
                if matches!(e, b'S' | b'F') {
                    let _ = write!(out, "+0x{:x}", off);
                }
            }
            None => {
                let _ = write!(out, "0x{:x}", v);
            }
        },
        _ if v == 0 => out.extend_from_slice(b"(nil)"),
        _ => {
            let _ = write!(out, "0x{:x}", v);
        }
    }
}

/// An integer conversion (d i u o x X) of a `size`-byte argument, as C's printf.
pub fn format_int(c: &Conv, raw: u64, size: usize, out: &mut Vec<u8>) {
    let bits = 8 * size as u32;
    let masked = if bits >= 64 { raw } else { raw & ((1u64 << bits) - 1) };
    let (neg, mag) = if matches!(c.conv, b'd' | b'i') {
        let shift = 64 - bits;
        let v = ((masked << shift) as i64) >> shift;
        (v < 0, v.unsigned_abs())
    } else {
        (false, masked)
    };
    let mut digits = match c.conv {
        b'o' => format!("{:o}", mag),
        b'x' => format!("{:x}", mag),
        b'X' => format!("{:X}", mag),
        _ => mag.to_string(),
    }
    .into_bytes();
    if c.precision == Count::Fixed(0) && mag == 0 {
        digits.clear();
    }
    if let Count::Fixed(p) = c.precision {
        if digits.len() < p {
            let mut z = vec![b'0'; p - digits.len()];
            z.extend_from_slice(&digits);
            digits = z;
        }
    }
    let mut prefix: Vec<u8> = Vec::new();
    if matches!(c.conv, b'd' | b'i') {
        if neg {
            prefix.push(b'-');
        } else if c.plus {
            prefix.push(b'+');
        } else if c.space {
            prefix.push(b' ');
        }
    }
    if c.alt {
        match c.conv {
            b'o' if digits.first() != Some(&b'0') => digits.insert(0, b'0'),
            b'x' if mag != 0 => prefix.extend_from_slice(b"0x"),
            b'X' if mag != 0 => prefix.extend_from_slice(b"0X"),
            _ => {}
        }
    }
    let width = match c.width {
        Count::Fixed(w) => w,
        _ => 0,
    };
    let len = prefix.len() + digits.len();
    if len >= width {
        out.extend_from_slice(&prefix);
        out.extend_from_slice(&digits);
    } else if c.left {
        out.extend_from_slice(&prefix);
        out.extend_from_slice(&digits);
        out.resize(out.len() + width - len, b' ');
    } else if c.zero && c.precision == Count::None {
        out.extend_from_slice(&prefix);
        out.resize(out.len() + width - len, b'0');
        out.extend_from_slice(&digits);
    } else {
        out.resize(out.len() + width - len, b' ');
        out.extend_from_slice(&prefix);
        out.extend_from_slice(&digits);
    }
}

/// Bytes padded with spaces to the conversion's width.
fn pad(c: &Conv, s: &[u8], out: &mut Vec<u8>) {
    let width = match c.width {
        Count::Fixed(w) => w,
        _ => 0,
    };
    let fill = width.saturating_sub(s.len());
    if !c.left {
        out.resize(out.len() + fill, b' ');
    }
    out.extend_from_slice(s);
    if c.left {
        out.resize(out.len() + fill, b' ');
    }
}

/// `text` without one trailing newline (trace-cmd prints each event on one line).
#[inline]
pub fn without_newline(text: &[u8]) -> &[u8] {
    text.strip_suffix(b"\n").unwrap_or(text)
}

/// Which of ftrace's message events an event type is, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageKind {
    Print,
    Bprint,
    Bputs,
}

impl MessageKind {
    pub fn of(system: &str, event: &str) -> Option<MessageKind> {
        match (system, event) {
            ("ftrace", "print") => Some(MessageKind::Print),
            ("ftrace", "bprint") => Some(MessageKind::Bprint),
            ("ftrace", "bputs") => Some(MessageKind::Bputs),
            _ => None,
        }
    }
}

/// Convenience for tests and callers holding no parsed cache: the text of a bprint
/// record whose format is at `fmt_addr`, or None when the file has no such format.
pub fn bprint_text(fmt_addr: u64, buf: &[u8], ctx: &TextContext) -> Option<Vec<u8>> {
    let f = ctx.symbols.printk.get(fmt_addr)?;
    let mut out = Vec::new();
    render_bprint(&parse_format(f.registered()), buf, ctx, &mut out);
    Some(without_newline(&out).to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c_fmt(spec: &str, v: u64, size: usize) -> String {
        let pieces = parse_format(spec);
        let Piece::Conv(c) = &pieces[0] else { panic!("{:?}", pieces) };
        let mut out = Vec::new();
        format_int(c, v, size, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn integers_as_c_printf() {
        // Each expected value is what glibc's printf prints for the same spec and value.
        assert_eq!(c_fmt("%d", (-5i32) as u32 as u64, 4), "-5");
        assert_eq!(c_fmt("%u", (-5i32) as u32 as u64, 4), "4294967291");
        assert_eq!(c_fmt("%5d", 42, 4), "   42");
        assert_eq!(c_fmt("%-5d|", 42, 4), "42   ");
        assert_eq!(c_fmt("%05d", (-42i32) as u32 as u64, 4), "-0042");
        assert_eq!(c_fmt("%+d", 7, 4), "+7");
        assert_eq!(c_fmt("% d", 7, 4), " 7");
        assert_eq!(c_fmt("%.3d", 7, 4), "007");
        assert_eq!(c_fmt("%08.3d", 7, 4), "     007");
        assert_eq!(c_fmt("%.0d", 0, 4), "");
        assert_eq!(c_fmt("%#x", 255, 4), "0xff");
        assert_eq!(c_fmt("%#X", 255, 4), "0XFF");
        assert_eq!(c_fmt("%#x", 0, 4), "0");
        assert_eq!(c_fmt("%#o", 8, 4), "010");
        assert_eq!(c_fmt("%#o", 0, 4), "0");
        assert_eq!(c_fmt("%#010x", 255, 4), "0x000000ff");
        assert_eq!(c_fmt("%llx", u64::MAX, 8), "ffffffffffffffff");
        assert_eq!(c_fmt("%lld", i64::MIN as u64, 8), "-9223372036854775808");
        assert_eq!(c_fmt("%hhd", 0xff, 1), "-1");
        assert_eq!(c_fmt("%hu", 0x1ffff, 2), "65535");
    }

    #[test]
    fn formats_parse_with_escapes_and_sizes() {
        let p = parse_format("a\\tb %%\\\\ %-08.3lx %*d %pS%pM %s\\\"");
        assert_eq!(p[0], Piece::Lit(b"a\tb %\\ ".to_vec()));
        let Piece::Conv(c) = &p[1] else { panic!() };
        assert!(c.left && c.zero && c.width == Count::Fixed(8) && c.precision == Count::Fixed(3) && c.size == 0 && c.conv == b'x');
        let Piece::Conv(c) = &p[3] else { panic!() };
        assert_eq!((c.width.clone(), c.conv), (Count::Arg, b'd'));
        let Piece::Conv(c) = &p[5] else { panic!() };
        assert_eq!((c.conv, c.ext.as_str()), (b'p', "S"));
        let Piece::Conv(c) = &p[6] else { panic!() };
        assert_eq!(c.ext, "M");
        assert_eq!(p.last(), Some(&Piece::Lit(b"\"".to_vec())));
    }

    #[test]
    fn bprint_arguments_as_the_kernel_packs_them() {
        let k = b"ffffffff81000000 T start\nffffffff81000100 t work_fn\nffffffff81000200 T end\n".to_vec();
        let syms = TraceSymbols::new(k.clone(), b"0x10 : \"c=%c h=%hd s=%s n=%d ll=%lld l=%lu p=%pS q=%ps r=%p z=%p w=%*d|\\n\"\n");
        let ctx = TextContext { endian: Endian::Little, long_size: 8, symbols: &syms };
        let mut b = Vec::new();
        b.push(b'x'); // %c: 1 byte
        b.push(0); // align 2
        b.extend_from_slice(&(-3i16).to_le_bytes()); // %hd
        b.extend_from_slice(b"ab\0"); // %s: no alignment
        b.push(0); // align 4
        b.extend_from_slice(&(-7i32).to_le_bytes()); // %d
        b.extend_from_slice(&(-9i64).to_le_bytes()); // %lld at 4-byte alignment
        b.extend_from_slice(&5u64.to_le_bytes()); // %lu: the kernel's long
        b.extend_from_slice(&0xffffffff81000104u64.to_le_bytes()); // %pS
        b.extend_from_slice(&0xffffffff81000104u64.to_le_bytes()); // %ps
        b.extend_from_slice(&0x1234u64.to_le_bytes()); // %p
        b.extend_from_slice(&0u64.to_le_bytes()); // %p of NULL
        b.extend_from_slice(&4i32.to_le_bytes()); // * width
        b.extend_from_slice(&9i32.to_le_bytes());
        let t = bprint_text(0x10, &b, &ctx).unwrap();
        assert_eq!(String::from_utf8(t).unwrap(), "c=x h=-3 s=ab n=-7 ll=-9 l=5 p=work_fn+0x4 q=work_fn r=0x1234 z=(nil) w=   9|");
        // A short buffer: the text stops at the first argument it does not hold.
        let t = bprint_text(0x10, &b[..12], &ctx).unwrap();
        assert_eq!(String::from_utf8(t).unwrap(), "c=x h=-3 s=ab n=-7 ll=");
        assert_eq!(bprint_text(0x11, &b, &ctx), None);
        // Big-endian, 32-bit kernel: %lu is 4 bytes.
        let syms = TraceSymbols::new(k, b"0x20 : \"%lu %llu %x\"\n");
        let ctx = TextContext { endian: Endian::Big, long_size: 4, symbols: &syms };
        let mut b = Vec::new();
        b.extend_from_slice(&7u32.to_be_bytes());
        b.extend_from_slice(&(1u64 << 40).to_be_bytes());
        b.extend_from_slice(&0xabu32.to_be_bytes());
        assert_eq!(bprint_text(0x20, &b, &ctx).unwrap(), b"7 1099511627776 ab");
    }

    #[test]
    fn widths_and_precisions_are_bounded() {
        assert_eq!(c_fmt("%99999999999999999999999d", 1, 4).len(), MAX_WIDTH);
        assert_eq!(c_fmt("%.1000000d", 1, 4).len(), MAX_WIDTH);
        let syms = TraceSymbols::new(Vec::new(), b"0x30 : \"[%*d]\"\n");
        let ctx = TextContext { endian: Endian::Little, long_size: 8, symbols: &syms };
        let mut b = i32::MIN.to_le_bytes().to_vec();
        b.extend_from_slice(&7u32.to_le_bytes());
        let t = bprint_text(0x30, &b, &ctx).unwrap();
        assert_eq!(t.len(), MAX_WIDTH + 2, "a width of -2^31 from the buffer");
        assert!(t.starts_with(b"[7 "));
    }

    #[test]
    fn one_trailing_newline_is_dropped() {
        assert_eq!(without_newline(b"a\n\n"), b"a\n");
        assert_eq!(without_newline(b"a"), b"a");
    }
}
