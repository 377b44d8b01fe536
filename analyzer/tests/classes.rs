//! Exact answers on the event classes others' recordings bring (src/synth_classes.rs), in
//! little- and big-endian, 64- and 32-bit layouts: ftrace print / bprint / bputs text,
//! bprint's packed arguments kept byte for byte, byte arrays as lists, field names used
//! twice, a system named with `-`, every invalid UTF-8 value counted, the kallsyms and
//! printk formats written beside the events, and `--strict` exiting 0 although a type
//! without records could not be converted.

mod common;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use common::*;
use ntscope::synth::Abi;
use ntscope::synth_classes::*;
use ntscope::tracedat::bytes::Endian;
use ntscope::tracedat::source::Codec;

const ABIS: [Abi; 4] = [
    Abi { endian: Endian::Little, long_size: 8 },
    Abi { endian: Endian::Big, long_size: 8 },
    Abi { endian: Endian::Little, long_size: 4 },
    Abi { endian: Endian::Big, long_size: 4 },
];

fn col<'a>(b: &'a RecordBatch, name: &str) -> &'a dyn Array {
    b.column_by_name(name).unwrap_or_else(|| panic!("no column {}", name)).as_ref()
}

fn strings(a: &dyn Array) -> Vec<Option<String>> {
    let d = a.as_dictionary::<Int32Type>();
    let values = d.values().as_string::<i32>();
    (0..d.len()).map(|i| d.is_valid(i).then(|| values.value(d.keys().value(i) as usize).to_string())).collect()
}

fn binary(a: &dyn Array) -> Vec<Vec<u8>> {
    let b = a.as_binary::<i32>();
    (0..b.len()).map(|i| b.value(i).to_vec()).collect()
}

/// An integer column's values as i64 (u64 values as their bits).
fn ints(a: &dyn Array) -> Vec<i64> {
    use arrow_schema::DataType as T;
    macro_rules! of {
        ($t:ty) => {
            a.as_primitive::<$t>().values().iter().map(|&v| v as i64).collect()
        };
    }
    match a.data_type() {
        T::Int8 => of!(Int8Type),
        T::Int16 => of!(Int16Type),
        T::Int32 => of!(Int32Type),
        T::Int64 => of!(Int64Type),
        T::UInt8 => of!(UInt8Type),
        T::UInt16 => of!(UInt16Type),
        T::UInt32 => of!(UInt32Type),
        T::UInt64 => of!(UInt64Type),
        t => panic!("not an integer column: {}", t),
    }
}

#[test]
fn message_texts_and_raw_arguments_in_every_layout() {
    for abi in ABIS {
        let d = TempDir::new(&format!("classes-{:?}-{}", abi.endian, abi.long_size));
        let r = convert_bytes(&d.0, &classes_trace(abi, 7, Codec::Zstd, true).to_bytes(), false).unwrap();
        let out = d.0.join("parquet");
        let what = format!("{:?} {}-byte long", abi.endian, abi.long_size);

        let print = read_parquet(&out.join("ftrace/print.parquet"));
        let want: Vec<(&[u8], &str)> = print_records();
        let bufs: Vec<Option<String>> = want.iter().map(|(raw, _)| Some(String::from_utf8_lossy(raw).into_owned())).collect();
        assert_eq!(strings(col(&print, "buf")), bufs, "{}", what);
        let texts: Vec<Option<String>> = want.iter().map(|(_, t)| Some(t.to_string())).collect();
        assert_eq!(strings(col(&print, "text")), texts, "{}", what);

        let bprint = read_parquet(&out.join("ftrace/bprint.parquet"));
        let records = bprint_records(abi);
        let mut texts: Vec<Option<String>> = records.iter().map(|(_, _, t)| Some(t.clone())).collect();
        texts.push(None); // its format is not in the file
        assert_eq!(strings(col(&bprint, "text")), texts, "{}", what);
        let mut raw: Vec<Vec<u8>> = records.iter().map(|(_, args, _)| pack(abi, args)).collect();
        raw.push(pack(abi, &[Arg::Int(1)]));
        assert_eq!(binary(col(&bprint, "buf")), raw, "{}: the arguments byte for byte", what);
        let fmts: Vec<i64> = records.iter().map(|(i, _, _)| format_address(abi, *i) as i64).chain([format_address(abi, 99) as i64]).collect();
        assert_eq!(ints(col(&bprint, "fmt")), fmts, "{}", what);

        let bputs = read_parquet(&out.join("ftrace/bputs.parquet"));
        assert_eq!(strings(col(&bputs, "text")), [Some("hello from trace_puts".into()), Some("tab\\tin a string".into()), None], "{}", what);
        assert_eq!(r.metadata["printk_formats_missing"], 2, "{}", what);

        // Byte arrays are lists, NULs and all; text fields are UTF-8 with every bad value counted.
        let dump = read_parquet(&out.join("9p/9p_protocol_dump.parquet"));
        let lines = col(&dump, "line").as_list::<i32>();
        let tags = ints(col(&dump, "tag"));
        for row in 0..dump.num_rows() {
            let (line, _) = protocol_dump_values(tags[row] as u64);
            assert_eq!(lines.value(row).as_primitive::<UInt8Type>().values().to_vec(), line.to_vec(), "{} row {}", what, row);
        }
        assert_eq!(strings(col(&dump, "name")), vec![Some("bad\u{fffd}(".to_string()); 6], "{}", what);
        // 6 protocol dumps (each, though they repeat) + the print with bad bytes: its buf and text.
        assert_eq!(r.metadata["invalid_utf8_strings"], 8, "{}", what);

        // Field names used twice: every field, under its documented column.
        let sync = read_parquet(&out.join("regmap/regcache_sync.parquet"));
        let names: Vec<String> = sync.schema().fields().iter().skip(6).map(|f| f.name().clone()).collect();
        assert_eq!(names, ["name", "type", "type_3", "type_2"], "{}", what);
        assert_eq!(strings(col(&sync, "type")), vec![Some("flat".to_string()); 2]);
        assert_eq!(ints(col(&sync, "type_3")), [-1, -2], "{}", what);
        assert_eq!(ints(col(&sync, "type_2")), [40, 41], "{}", what);
        let submit = read_parquet(&out.join("syscalls/sys_enter_io_submit.parquet"));
        assert_eq!((ints(col(&submit, "nr")), ints(col(&submit, "nr_2"))), (vec![209], vec![-4]), "{}", what);

        // A system named with '-'.
        let xhci = read_parquet(&out.join("xhci-hcd/xhci_urb_enqueue.parquet"));
        assert_eq!(ints(col(&xhci, "stream")), [0, -1, -2], "{}", what);

        // Fields of size 0: the rest of the record.
        let stack = read_parquet(&out.join("ftrace/kernel_stack.parquet"));
        let callers = col(&stack, "caller").as_list::<i32>().value(0);
        let callers: Vec<u64> = if abi.long_size == 8 {
            callers.as_primitive::<UInt64Type>().values().to_vec()
        } else {
            callers.as_primitive::<UInt32Type>().values().iter().map(|&v| v as u64).collect()
        };
        assert_eq!(callers, [symbol(abi, "my_debug_fn"), symbol(abi, "_stext") + 8, symbol(abi, "zz_last")], "{}", what);
        let raw_data = read_parquet(&out.join("ftrace/raw_data.parquet"));
        // The rest of the record: the bytes written, then the ring buffer's padding to 4.
        assert_eq!(binary(col(&raw_data, "buf"))[0], b"\x00\x01raw\xffbytes\x00".to_vec(), "{}", what);

        // The symbol tables beside the events.
        let k = read_parquet(&out.join("kallsyms.parquet"));
        let names: Vec<String> = (0..k.num_rows()).map(|i| col(&k, "name").as_string::<i32>().value(i).to_string()).collect();
        let expect: Vec<&str> = if abi.long_size == 8 { vec!["fixed_percpu_data", "_stext", "tracing_mark_write", "dup_first", "dup_second", "dup_third", "my_debug_fn", "zz_last"] } else { vec!["_stext", "tracing_mark_write", "dup_first", "dup_second", "dup_third", "my_debug_fn", "zz_last"] };
        assert_eq!(names, expect, "{}", what);
        let module = col(&k, "module").as_string::<i32>();
        assert_eq!(module.value(expect.len() - 2), "dbg");
        assert!(module.is_null(0));
        let p = read_parquet(&out.join("printk_formats.parquet"));
        let formats: Vec<String> = (0..p.num_rows()).map(|i| col(&p, "format").as_string::<i32>().value(i).to_string()).collect();
        assert_eq!(formats, FORMATS.iter().map(|f| f.to_string()).collect::<Vec<_>>(), "{}", what);
        assert_eq!(ints(col(&p, "address"))[2], format_address(abi, 2) as i64);

        // The type whose field name cannot be a column holds no records: a warning, no loss.
        assert_eq!(r.metadata["skipped_event_types"][0]["event"], "bad_field");
        assert_eq!(r.metadata["skipped_event_types"][0]["records"], 0);
        assert!(r.data_loss.is_empty(), "{}: {:?}", what, r.data_loss);
        assert!(r.warnings.iter().any(|w| w.contains("ntscope_test:bad_field") && w.contains("no data lost")), "{:?}", r.warnings);
    }
}

#[test]
fn strict_exits_0_when_only_a_type_without_records_was_skipped_and_1_when_it_has_records() {
    let d = TempDir::new("classes-strict");
    let trace = d.0.join("trace.dat");
    let bin = env!("CARGO_BIN_EXE_ntscope-analyzer");
    let run = |t: &ntscope::synth::SynthTrace| {
        std::fs::write(&trace, t.to_bytes()).unwrap();
        let o = std::process::Command::new(bin).args(["convert", trace.to_str().unwrap(), "--out", d.0.join("out").to_str().unwrap(), "--strict"]).output().unwrap();
        (o.status.code().unwrap(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let mut t = classes_trace(Abi::LE64, 7, Codec::Zstd, false);
    let (code, err) = run(&t);
    assert_eq!(code, 0, "{}", err);
    assert!(err.contains("warning") && err.contains("ntscope_test:bad_field"), "{}", err);
    // The same type with a record: now a loss.
    let mut w = ntscope::synth::PageWriter::with_abi(t.page_size, Abi::LE64);
    let mut p = ntscope::synth::common(BAD_FIELD_ID, 100);
    p.extend_from_slice(&7u32.to_le_bytes());
    w.push(1, &p);
    t.buffers[0].cpus[1] = w.finish();
    let (code, err) = run(&t);
    assert_eq!(code, 1, "{}", err);
    assert!(err.contains("1 records of event id 954") && err.contains("were not converted"), "{}", err);
}

/// Kernels >= 5.x declare `ftrace:kernel_stack`'s callers `unsigned long caller[8]` and write as
/// many as the stack has (`int size` of them): every frame is kept, a stack of 3 is no short
/// record and one of 12 is not cut to 8.
#[test]
fn kernel_stacks_keep_every_frame_whatever_the_declared_eight() {
    use ntscope::synth::{common_abi, format_text, PageWriter, SynthBuffer, SynthTrace};
    for abi in ABIS {
        let l = abi.long_size;
        let what = format!("{:?}", abi);
        let mut t = SynthTrace::new(7, Codec::Zstd);
        t.abi = abi;
        let size = "field:int size;\toffset:8;\tsize:4;\tsigned:1;".to_string();
        let caller = format!("field:unsigned long caller[8];\toffset:{};\tsize:{};\tsigned:0;", if l == 8 { 16 } else { 12 }, 8 * l);
        t.formats = vec![("ftrace".to_string(), format_text("kernel_stack", KERNEL_STACK_ID as u32, &[&size, &caller]))];
        let mut w = PageWriter::with_abi(t.page_size, abi);
        let frames = |n: u64| (0..n).map(|i| 0xc000_0000 + 0x10 * i).collect::<Vec<u64>>();
        for (i, n) in [3u64, 12, 8].into_iter().enumerate() {
            let mut p = common_abi(abi, KERNEL_STACK_ID, 100);
            p.extend_from_slice(&abi.u32(n as u32));
            p.resize(if l == 8 { 16 } else { 12 }, 0);
            for a in frames(n) {
                p.extend_from_slice(&abi.long(a));
            }
            w.push(5_000_000_000 + 1_000 * i as u64, &p);
        }
        t.buffers.push(SynthBuffer { name: String::new(), clock: "mono".into(), cpus: vec![w.finish()] });
        let d = TempDir::new("kstack");
        let r = convert_bytes(&d.0, &t.to_bytes(), false).unwrap();
        assert_eq!(r.metadata["short_records"], 0, "{}", what);
        let stack = read_parquet(&d.0.join("parquet/ftrace/kernel_stack.parquet"));
        let lists = col(&stack, "caller").as_list::<i32>();
        let got: Vec<Vec<u64>> = (0..stack.num_rows()).map(|i| {
            let v = lists.value(i);
            if l == 8 { v.as_primitive::<UInt64Type>().values().to_vec() } else { v.as_primitive::<UInt32Type>().values().iter().map(|&x| x as u64).collect() }
        }).collect();
        assert_eq!(got, vec![frames(3), frames(12), frames(8)], "{}", what);
        assert_eq!(ints(col(&stack, "size")), [3, 12, 8], "{}", what);
    }
}
