//! A known-answer trace of the event classes recordings made by others bring (tests and
//! the differential test against libtracecmd): ftrace's message events (print in its old
//! `char buf` and new `char buf[]` form, bprint with the kernel's packed arguments, bputs)
//! with the kallsyms and printk-formats sections they need, a system named with a `-`
//! (`xhci-hcd`), field names used twice (`regmap:regcache_sync`, old
//! `sys_enter_io_submit`), byte arrays that are not text (`unsigned char line[32]`),
//! invalid UTF-8 in a text field, fields of size 0 (the rest of the record), and a type
//! whose field name cannot be a column but that holds no records. In any byte order and
//! kernel long size (`Abi`), so big-endian and 32-bit layouts are covered.

use crate::synth::{common_abi, format_text, format_text_printing, Abi, PageWriter, SynthBuffer, SynthTrace};
use crate::tracedat::source::Codec;

pub const PRINT_ID: u16 = 5;
pub const BPRINT_ID: u16 = 6;
pub const BPUTS_ID: u16 = 14;
pub const KERNEL_STACK_ID: u16 = 4;
pub const RAW_DATA_ID: u16 = 15;
pub const XHCI_ID: u16 = 950;
pub const REGCACHE_ID: u16 = 951;
pub const IO_SUBMIT_ID: u16 = 952;
pub const PROTOCOL_DUMP_ID: u16 = 953;
pub const BAD_FIELD_ID: u16 = 954;

/// Where the kernel's text and data would be.
fn text_base(abi: Abi) -> u64 {
    if abi.long_size == 8 {
        0xffff_ffff_8100_0000
    } else {
        0xc000_8000
    }
}

fn printk_base(abi: Abi) -> u64 {
    if abi.long_size == 8 {
        0xffff_ffff_8200_0000
    } else {
        0xc070_0000
    }
}

/// Symbol addresses: `tracing_mark_write` (where print's ip points), `my_debug_fn` (a
/// module's function, bprint's ip), and three names at one address (`dup_*`, as a kernel's
/// aliases are: `__do_softirq` and `__softirqentry_text_start`), which libtraceevent names
/// by its own rule (`Kallsyms::resolve`).
pub fn symbol(abi: Abi, name: &str) -> u64 {
    let off = match name {
        "_stext" => 0,
        "tracing_mark_write" => 0x100,
        "dup_first" | "dup_second" | "dup_third" => 0x180,
        "my_debug_fn" => 0x200,
        "zz_last" => 0x300,
        _ => panic!("no synthetic symbol {}", name),
    };
    text_base(abi) + off
}

fn kallsyms(abi: Abi) -> String {
    let w = 2 * abi.long_size;
    let mut s = String::new();
    if abi.long_size == 8 {
        s.push_str("0000000000000000 A fixed_percpu_data\n");
    }
    for (kind, name, module) in [("T", "_stext", ""), ("T", "tracing_mark_write", ""), ("t", "dup_first", ""), ("T", "dup_second", ""), ("W", "dup_third", ""), ("t", "my_debug_fn", "\t[dbg]"), ("T", "zz_last", "")] {
        s.push_str(&format!("{:0w$x} {} {}{}\n", symbol(abi, name), kind, name, module, w = w));
    }
    s
}

/// The printk formats, as the kernel's printk_formats file writes them (a newline as
/// `\n`, a tab as `\t`, a quote as `\"`, a backslash as itself), and the argument each
/// bprint record packs for them. Conversions libtraceevent 1.7 reads otherwise than the
/// kernel (`%c`, `%h`, the `-`, `+` and space flags) are left to the unit tests.
pub const FORMATS: [&str; 10] = [
    "plain %d %u %x %X %o|\\n",
    "longs %ld %lu %lx %lld %llu %llx\\n",
    "widths [%5d] [%05d] [%.3d] [%#x] [%#o] [%08.3x] [%#010lx]\\n",
    "strings [%s] [%10s] [%.2s] %s\\n",
    "pointers %pS %ps %p %p %pF %pf\\n",
    "star [%*d] [%.*s]\\n",
    "escapes tab\\there \\\"quoted\\\" 100%% done\\n",
    "no newline at end %d",
    "hello from trace_puts\\n",
    "tab\\tin a string",
];

pub fn format_address(abi: Abi, i: usize) -> u64 {
    printk_base(abi) + 0x40 * i as u64
}

fn printk(abi: Abi) -> String {
    let w = 2 * abi.long_size;
    FORMATS.iter().enumerate().map(|(i, f)| format!("0x{:0w$x} : \"{}\"\n", format_address(abi, i), f, w = w)).collect()
}

/// One argument of a bprint record, packed as the kernel's vbin_printf packs it.
#[derive(Clone, Debug)]
pub enum Arg {
    Int(u32),
    Long(u64),
    LongLong(u64),
    Str(&'static str),
}

/// The packed argument buffer: integers at their size and alignment (8-byte ones at 4),
/// strings inline with their NUL.
pub fn pack(abi: Abi, args: &[Arg]) -> Vec<u8> {
    let mut b: Vec<u8> = Vec::new();
    let align = |b: &mut Vec<u8>| b.resize(b.len().div_ceil(4) * 4, 0);
    for a in args {
        match a {
            Arg::Int(v) => {
                align(&mut b);
                b.extend_from_slice(&abi.u32(*v));
            }
            Arg::Long(v) => {
                align(&mut b);
                b.extend_from_slice(&abi.long(*v));
            }
            Arg::LongLong(v) => {
                align(&mut b);
                b.extend_from_slice(&abi.u64(*v));
            }
            Arg::Str(s) => {
                b.extend_from_slice(s.as_bytes());
                b.push(0);
            }
        }
    }
    align(&mut b);
    b
}

/// The bprint records: (format index, arguments, the text trace-cmd prints).
pub fn bprint_records(abi: Abi) -> Vec<(usize, Vec<Arg>, String)> {
    let neg = |v: i32| v as u32;
    let long_neg = |v: i64| if abi.long_size == 8 { v as u64 } else { v as u32 as u64 };
    let lx = if abi.long_size == 8 { "fffffffffffffffe" } else { "fffffffe" };
    let lu_neg = if abi.long_size == 8 { "18446744073709551614" } else { "4294967294" };
    let sym = |name: &str, off: u64| symbol(abi, name) + off;
    vec![
        (0, vec![Arg::Int(neg(-5)), Arg::Int(neg(-5)), Arg::Int(255), Arg::Int(255), Arg::Int(8)], "plain -5 4294967291 ff FF 10|".to_string()),
        (
            1,
            // %ld of a negative value is left out: libtraceevent 1.7 prints it as unsigned in
            // a 32-bit trace (the unit tests hold the kernel's answer).
            vec![Arg::Long(1_234_567), Arg::Long(long_neg(-2)), Arg::Long(long_neg(-2)), Arg::LongLong(-3i64 as u64), Arg::LongLong(1 << 40), Arg::LongLong(0xdead_beef_0000)],
            format!("longs 1234567 {} {} -3 1099511627776 deadbeef0000", lu_neg, lx),
        ),
        (
            2,
            vec![Arg::Int(42), Arg::Int(neg(-42)), Arg::Int(7), Arg::Int(255), Arg::Int(8), Arg::Int(0xab), Arg::Long(0xbeef)],
            "widths [   42] [-0042] [007] [0xff] [010] [     0ab] [0x0000beef]".to_string(),
        ),
        (3, vec![Arg::Str("abc"), Arg::Str("right"), Arg::Str("truncated"), Arg::Str("")], "strings [abc] [     right] [tr] ".to_string()),
        (
            4,
            vec![Arg::Long(sym("my_debug_fn", 0x10)), Arg::Long(sym("tracing_mark_write", 0)), Arg::Long(0x1234), Arg::Long(0), Arg::Long(sym("my_debug_fn", 4)), Arg::Long(sym("zz_last", 0))],
            "pointers my_debug_fn+0x10 tracing_mark_write 0x1234 (nil) my_debug_fn+0x4 zz_last".to_string(),
        ),
        (
            // three names at one address: inside it the first of the file, at it the one
            // libtraceevent's binary search meets (trace-cmd prints these)
            4,
            vec![Arg::Long(sym("dup_first", 0x10)), Arg::Long(sym("dup_first", 0)), Arg::Long(0x1234), Arg::Long(0), Arg::Long(sym("dup_first", 0)), Arg::Long(sym("dup_first", 4))],
            "pointers dup_first+0x10 dup_second 0x1234 (nil) dup_second+0x0 dup_first".to_string(),
        ),
        (5, vec![Arg::Int(6), Arg::Int(12), Arg::Int(3), Arg::Str("abcdef")], "star [    12] [abc]".to_string()),
        (6, vec![], "escapes tab\there \"quoted\" 100% done".to_string()),
        (7, vec![Arg::Int(9)], "no newline at end 9".to_string()),
    ]
}

/// ftrace:print texts (as written to trace_marker) and the text trace-cmd prints.
pub fn print_records() -> Vec<(&'static [u8], &'static str)> {
    vec![
        (b"first marker\n", "first marker"),
        (b"second marker, no newline", "second marker, no newline"),
        (b"two newlines\n\n", "two newlines\n"),
        ("utf-8 caf\u{e9}\n".as_bytes(), "utf-8 caf\u{e9}"),
        (b"bad \xff\xfe bytes\n", "bad \u{fffd}\u{fffd} bytes"),
    ]
}

fn ftrace_formats(abi: Abi) -> Vec<(String, String)> {
    let l = abi.long_size;
    let ip = format!("field:unsigned long ip;\toffset:8;\tsize:{};\tsigned:0;", l);
    // Old kernels declare print's buffer `char buf` (size 0), newer ones `char buf[]`.
    let print_buf = if l == 8 { "field:char buf[];\toffset:16;\tsize:0;\tsigned:0;".to_string() } else { "field:char buf;\toffset:12;\tsize:0;\tsigned:0;".to_string() };
    let fmt = format!("field:const char * fmt;\toffset:{};\tsize:{};\tsigned:0;", 8 + l, l);
    let str_ = format!("field:const char * str;\toffset:{};\tsize:{};\tsigned:0;", 8 + l, l);
    let bbuf = format!("field:u32 buf[];\toffset:{};\tsize:0;\tsigned:0;", 8 + 2 * l);
    let caller = format!("field:unsigned long caller;\toffset:{};\tsize:0;\tsigned:0;", caller_offset(abi));
    let f = |name: &str, id: u16, fields: &[&str]| ("ftrace".to_string(), format_text(name, id as u32, fields));
    // The kernel's print formats of the message events: libtraceevent prints by them.
    let msg = |name: &str, id: u16, fields: &[&str], arg: &str| {
        ("ftrace".to_string(), format_text_printing(name, id as u32, fields, &format!("\"%ps: %s\", (void *)REC->ip, REC->{}", arg)))
    };
    vec![
        msg("print", PRINT_ID, &[&ip, &print_buf], "buf"),
        msg("bprint", BPRINT_ID, &[&ip, &fmt, &bbuf], "fmt"),
        msg("bputs", BPUTS_ID, &[&ip, &str_], "str"),
        f("kernel_stack", KERNEL_STACK_ID, &["field:int size;\toffset:8;\tsize:4;\tsigned:1;", &caller]),
        f("raw_data", RAW_DATA_ID, &["field:unsigned int id;\toffset:8;\tsize:4;\tsigned:0;", "field:char buf[];\toffset:12;\tsize:0;\tsigned:0;"]),
    ]
}

/// Where kernel_stack's callers start: after `int size`, aligned to a long.
fn caller_offset(abi: Abi) -> usize {
    if abi.long_size == 8 {
        16
    } else {
        12
    }
}

fn event_formats(abi: Abi) -> Vec<(String, String)> {
    let l = abi.long_size;
    let sys = |s: &str, name: &str, id: u16, fields: &[&str]| (s.to_string(), format_text(name, id as u32, fields));
    vec![
        sys(
            "xhci-hcd",
            "xhci_urb_enqueue",
            XHCI_ID,
            &[
                &format!("field:void * urb;\toffset:8;\tsize:{};\tsigned:0;", l),
                &format!("field:unsigned int pipe;\toffset:{};\tsize:4;\tsigned:0;", 8 + l),
                &format!("field:int stream;\toffset:{};\tsize:4;\tsigned:1;", 12 + l),
            ],
        ),
        // `type` twice, and a field already named `type_2`: columns type, type_3, type_2.
        sys(
            "regmap",
            "regcache_sync",
            REGCACHE_ID,
            &[
                "field:__data_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;",
                "field:__data_loc char[] type;\toffset:12;\tsize:4;\tsigned:0;",
                "field:int type;\toffset:16;\tsize:4;\tsigned:1;",
                "field:int type_2;\toffset:20;\tsize:4;\tsigned:1;",
            ],
        ),
        sys(
            "syscalls",
            "sys_enter_io_submit",
            IO_SUBMIT_ID,
            &["field:int nr;\toffset:8;\tsize:4;\tsigned:1;", &format!("field:long nr;\toffset:{};\tsize:{};\tsigned:1;", 8 + l, l)],
        ),
        sys(
            "9p",
            "9p_protocol_dump",
            PROTOCOL_DUMP_ID,
            &[
                &format!("field:void * clnt;\toffset:8;\tsize:{};\tsigned:0;", l),
                &format!("field:__u8 type;\toffset:{};\tsize:1;\tsigned:0;", 8 + l),
                &format!("field:__u16 tag;\toffset:{};\tsize:2;\tsigned:0;", 10 + l),
                &format!("field:unsigned char line[32];\toffset:{};\tsize:32;\tsigned:0;", 12 + l),
                &format!("field:char name[8];\toffset:{};\tsize:8;\tsigned:0;", 44 + l),
            ],
        ),
        // A field name no column can have: the type is skipped; it has no records.
        sys("ntscope_test", "bad_field", BAD_FIELD_ID, &["field:int bad-name;\toffset:8;\tsize:4;\tsigned:1;"]),
    ]
}

/// The protocol dump's `line` (bytes, NULs and all) and `name` (invalid UTF-8 on every
/// row: each is counted, also when the value repeats) of record `i`.
pub fn protocol_dump_values(i: u64) -> ([u8; 32], [u8; 8]) {
    let mut line = [0u8; 32];
    for (k, b) in line.iter_mut().enumerate() {
        *b = (k as u64 * 37 + i) as u8;
    }
    line[3] = 0; // a NUL inside: still part of the bytes
    (line, *b"bad\xc3(\0\0\0")
}

/// Records per CPU: everything above on CPU 0, the protocol dumps again on CPU 1. The
/// bputs records of a big-endian trace only `with_be_bputs` (see below).
pub fn classes_trace(abi: Abi, version: u32, codec: Codec, with_be_bputs: bool) -> SynthTrace {
    let l = abi.long_size;
    let mut t = SynthTrace::new(version, codec);
    t.abi = abi;
    t.formats = ftrace_formats(abi).into_iter().chain(event_formats(abi)).collect();
    t.kallsyms = kallsyms(abi);
    t.printk = printk(abi);
    t.cmdlines = "100 marker-writer\n".into();
    t.options.push((4, b"local global [mono] tai\0".to_vec()));
    t.options.push((8, abi.u32(2).to_vec()));
    let mut ts = 5_000_000_000u64;
    let mut w = PageWriter::with_abi(t.page_size, abi);
    let mut push = |w: &mut PageWriter, p: Vec<u8>| {
        ts += 1_000;
        w.push(ts, &p);
    };
    for (text, _) in print_records() {
        let mut p = common_abi(abi, PRINT_ID, 100);
        p.extend_from_slice(&abi.long(symbol(abi, "tracing_mark_write") + 0x1c));
        p.extend_from_slice(text);
        p.push(0);
        // Stale bytes after the NUL, as a reused ring-buffer slot has.
        p.extend_from_slice(&[0xff, 0x73]);
        push(&mut w, p);
    }
    for (fi, args, _) in bprint_records(abi) {
        let mut p = common_abi(abi, BPRINT_ID, 100);
        p.extend_from_slice(&abi.long(symbol(abi, "my_debug_fn") + 0x30));
        p.extend_from_slice(&abi.long(format_address(abi, fi)));
        p.extend_from_slice(&pack(abi, &args));
        push(&mut w, p);
    }
    // A format the file does not hold: text null.
    let mut p = common_abi(abi, BPRINT_ID, 100);
    p.extend_from_slice(&abi.long(symbol(abi, "my_debug_fn")));
    p.extend_from_slice(&abi.long(format_address(abi, 99)));
    p.extend_from_slice(&pack(abi, &[Arg::Int(1)]));
    push(&mut w, p);
    // libtraceevent 1.7 reads a pointer field (bputs's str) in the host's byte order: a
    // big-endian trace's bputs text cannot be checked against it (the unit tests do).
    let bputs: &[usize] = if abi.endian == crate::tracedat::bytes::Endian::Little || with_be_bputs { &[8, 9, 99] } else { &[] };
    for &fi in bputs {
        let mut p = common_abi(abi, BPUTS_ID, 100);
        p.extend_from_slice(&abi.long(symbol(abi, "my_debug_fn")));
        p.extend_from_slice(&abi.long(format_address(abi, fi)));
        push(&mut w, p);
    }
    // kernel_stack (old layout): the callers fill the rest of the record.
    let mut p = common_abi(abi, KERNEL_STACK_ID, 100);
    p.extend_from_slice(&abi.u32(3));
    p.resize(caller_offset(abi), 0);
    for a in [symbol(abi, "my_debug_fn"), symbol(abi, "_stext") + 8, symbol(abi, "zz_last")] {
        p.extend_from_slice(&abi.long(a));
    }
    push(&mut w, p);
    let mut p = common_abi(abi, RAW_DATA_ID, 100);
    p.extend_from_slice(&abi.u32(7));
    p.extend_from_slice(b"\x00\x01raw\xffbytes");
    push(&mut w, p);
    for i in 0..3u32 {
        let mut p = common_abi(abi, XHCI_ID, 100);
        p.extend_from_slice(&abi.long(0xdead_0000 + i as u64));
        p.extend_from_slice(&abi.u32(0x8000_0000 | i));
        p.extend_from_slice(&abi.u32((-(i as i32)) as u32));
        push(&mut w, p);
    }
    for i in 0..2i32 {
        let mut p = common_abi(abi, REGCACHE_ID, 100);
        p.resize(24, 0);
        p[16..20].copy_from_slice(&abi.u32((-1 - i) as u32));
        p[20..24].copy_from_slice(&abi.u32(40 + i as u32));
        let name_at = p.len();
        p.extend_from_slice(b"codec\0");
        let type_at = p.len();
        p.extend_from_slice(b"flat\0");
        p[8..12].copy_from_slice(&abi.u32(6 << 16 | name_at as u32));
        p[12..16].copy_from_slice(&abi.u32(5 << 16 | type_at as u32));
        push(&mut w, p);
    }
    let mut p = common_abi(abi, IO_SUBMIT_ID, 100);
    p.extend_from_slice(&abi.u32(209));
    p.resize(8 + l, 0);
    p.extend_from_slice(&abi.long(-4i64 as u64));
    push(&mut w, p);
    let dump = |cpu_w: &mut PageWriter, i: u64, ts: u64| {
        let (line, name) = protocol_dump_values(i);
        let mut p = common_abi(abi, PROTOCOL_DUMP_ID, 100);
        p.extend_from_slice(&abi.long(0xfeed));
        p.push(i as u8);
        p.push(0);
        p.extend_from_slice(&abi.u16(i as u16));
        p.extend_from_slice(&line);
        p.extend_from_slice(&name);
        cpu_w.push(ts, &p);
    };
    for i in 0..3 {
        ts += 1_000;
        dump(&mut w, i, ts);
    }
    let mut w1 = PageWriter::with_abi(t.page_size, abi);
    for i in 3..6 {
        dump(&mut w1, i, 5_000_000_000 + i * 777);
    }
    t.buffers.push(SynthBuffer { name: String::new(), clock: "mono".into(), cpus: vec![w.finish(), w1.finish()] });
    t
}
