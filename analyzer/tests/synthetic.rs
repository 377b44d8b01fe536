//! Exact-answer tests on synthetic trace.dat files (v6/v7, none/zlib/zstd, instances,
//! timestamp options, missed events): every value written is checked after conversion.

mod common;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use common::*;
use ntscope::convert::ConvertOptions;
use ntscope::synth::*;
use ntscope::tracedat::source::Codec;

fn col<'a>(b: &'a RecordBatch, name: &str) -> &'a dyn Array {
    b.column_by_name(name).unwrap_or_else(|| panic!("no column {}", name)).as_ref()
}

fn strings(a: &dyn Array) -> Vec<Option<String>> {
    let d = a.as_dictionary::<Int32Type>();
    let values = d.values().as_string::<i32>();
    d.keys().iter().map(|k| k.map(|k| values.value(k as usize).to_string())).collect()
}

/// Checks every row of the all_kinds and tick tables of a converted known trace.
fn check_known(dir: &std::path::Path, cpus: u32, n: u64, ts_of: impl Fn(u32, u64) -> i64) {
    let t = read_parquet(&dir.join("ntscope_test/all_kinds.parquet"));
    assert_eq!(t.num_rows() as u64, cpus as u64 * ((n + 1) / 2));
    let schema = t.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        names,
        ["ts", "cpu", "pid", "comm", "common_flags", "common_preempt_count", "a_s8", "a_s16", "a_s32", "a_s64", "a_u64", "name", "raw", "pair", "msg", "vals", "rel", "field_pid"]
    );
    let ts = col(&t, "ts").as_primitive::<Int64Type>();
    let cpu = col(&t, "cpu").as_primitive::<Int32Type>();
    let pid = col(&t, "pid").as_primitive::<Int32Type>();
    let comm = strings(col(&t, "comm"));
    let s8 = col(&t, "a_s8").as_primitive::<Int8Type>();
    let s16 = col(&t, "a_s16").as_primitive::<Int16Type>();
    let s32 = col(&t, "a_s32").as_primitive::<Int32Type>();
    let s64 = col(&t, "a_s64").as_primitive::<Int64Type>();
    let u64c = col(&t, "a_u64").as_primitive::<UInt64Type>();
    let name = strings(col(&t, "name"));
    let raw = col(&t, "raw").as_list::<i32>();
    let pair = col(&t, "pair").as_list::<i32>();
    let msg = strings(col(&t, "msg"));
    let vals = col(&t, "vals").as_list::<i32>();
    let rel = strings(col(&t, "rel"));
    let fpid = col(&t, "field_pid").as_primitive::<Int32Type>();
    let mut seen = std::collections::HashSet::new();
    for r in 0..t.num_rows() {
        let c = cpu.value(r) as u32;
        // Recover i from the message text, then check every field against it.
        let m = msg[r].clone().unwrap();
        let i: u64 = m.rsplit('-').next().unwrap().parse().unwrap();
        assert!(seen.insert((c, i)), "row {} duplicated", r);
        let v = all_kinds_values(c, i);
        assert_eq!(m, v.msg);
        assert_eq!(ts.value(r), ts_of(c, i), "ts of cpu {} i {}", c, i);
        assert_eq!(pid.value(r), v.common_pid);
        let want_comm = match v.common_pid {
            100 => Some("proc-a".to_string()),
            101 => Some("proc-b".to_string()),
            _ => None,
        };
        assert_eq!(comm[r], want_comm);
        assert_eq!(s8.value(r), v.a_s8);
        assert_eq!(s16.value(r), v.a_s16);
        assert_eq!(s32.value(r), v.a_s32);
        assert_eq!(s64.value(r), v.a_s64);
        assert_eq!(u64c.value(r), v.a_u64);
        assert_eq!(name[r].as_deref(), Some(v.name.as_str()));
        assert_eq!(raw.value(r).as_primitive::<UInt8Type>().values().to_vec(), v.raw.to_vec());
        assert_eq!(pair.value(r).as_primitive::<Int16Type>().values().to_vec(), v.pair.to_vec());
        assert_eq!(vals.value(r).as_primitive::<UInt32Type>().values().to_vec(), v.vals);
        assert_eq!(rel[r].as_deref(), Some(v.rel.as_str()));
        assert_eq!(fpid.value(r), v.pid);
    }
    // Rows of one CPU are in time order.
    for c in 0..cpus as i32 {
        let t_c: Vec<i64> = (0..t.num_rows()).filter(|&r| cpu.value(r) == c).map(|r| ts.value(r)).collect();
        assert!(t_c.windows(2).all(|w| w[0] <= w[1]), "cpu {} rows out of time order", c);
    }
    let tick = read_parquet(&dir.join("ntscope_test/tick.parquet"));
    assert_eq!(tick.num_rows() as u64, cpus as u64 * (n / 2));
    let seq = col(&tick, "seq").as_primitive::<UInt32Type>();
    let tts = col(&tick, "ts").as_primitive::<Int64Type>();
    let tcpu = col(&tick, "cpu").as_primitive::<Int32Type>();
    for r in 0..tick.num_rows() {
        assert_eq!(tts.value(r), ts_of(tcpu.value(r) as u32, seq.value(r) as u64));
    }
}

fn plain_ts(c: u32, i: u64) -> i64 {
    raw_ts(c, i) as i64
}

#[test]
fn v6_and_v7_in_every_compression_decode_exactly() {
    for (version, codec) in [(6, Codec::None), (7, Codec::None), (7, Codec::Zstd), (7, Codec::Zlib)] {
        let d = TempDir::new(&format!("known-{}-{:?}", version, codec));
        let bytes = known_trace(version, codec, 2, 3001, false).to_bytes();
        let r = convert_bytes(&d.0, &bytes, false).unwrap_or_else(|e| panic!("v{} {:?}: {}", version, codec, e));
        assert_eq!(r.events, 2 * 3001, "v{} {:?}", version, codec);
        assert!(r.data_loss.is_empty(), "{:?}", r.data_loss);
        check_known(&d.0.join("parquet"), 2, 3001, plain_ts);
        let md = &r.metadata;
        assert_eq!(md["file_version"], version);
        assert_eq!(md["trace_clock"], "mono");
        assert_eq!(md["uname"], "Linux synth 6.1.0 x86_64");
        assert_eq!(md["cpu_count"], 2);
        assert_eq!(md["source"]["sha256"].as_str().unwrap().len(), 64);
    }
}

#[test]
fn instances_go_to_their_own_files() {
    for (version, codec) in [(6, Codec::None), (7, Codec::Zstd)] {
        let d = TempDir::new(&format!("inst-{}", version));
        let bytes = known_trace(version, codec, 2, 400, true).to_bytes();
        let r = convert_bytes(&d.0, &bytes, false).unwrap();
        assert_eq!(r.events, 2 * 400 + 200);
        check_known(&d.0.join("parquet"), 2, 400, plain_ts);
        let inst = read_parquet(&d.0.join("parquet/instances/inst/ntscope_test/all_kinds.parquet"));
        assert_eq!(inst.num_rows(), 100);
    }
}

#[test]
fn date_and_offset_options_shift_timestamps() {
    // DATE is in microseconds (hex, as trace-cmd writes it); OFFSET in nanoseconds.
    let mut t = known_trace(7, Codec::Zstd, 1, 100, false);
    t.options.push((1, b"0x10\0".to_vec()));
    t.options.push((7, b"-500\0".to_vec()));
    let d = TempDir::new("offsets");
    convert_bytes(&d.0, &t.to_bytes(), false).unwrap();
    check_known(&d.0.join("parquet"), 1, 100, |c, i| raw_ts(c, i) as i64 + 16_000 - 500);
}

#[test]
fn chained_options_section_is_read() {
    let mut t = known_trace(7, Codec::Zstd, 1, 50, false);
    t.chained_options.push((7, b"1000\0".to_vec()));
    t.chained_options.push((9, b"3.1.6 synth\0".to_vec()));
    let d = TempDir::new("chained");
    let r = convert_bytes(&d.0, &t.to_bytes(), false).unwrap();
    assert_eq!(r.metadata["tracecmd_version"], "3.1.6 synth");
    check_known(&d.0.join("parquet"), 1, 50, |c, i| raw_ts(c, i) as i64 + 1000);
}

#[test]
fn tsc2nsec_converts_cycles() {
    let mut t = known_trace(7, Codec::None, 1, 50, false);
    let mut o = Vec::new();
    o.extend_from_slice(&(1u32 << 31).to_le_bytes()); // mult / 2^shift = 1/2
    o.extend_from_slice(&32u32.to_le_bytes());
    o.extend_from_slice(&0u64.to_le_bytes());
    t.options.push((14, o));
    let d = TempDir::new("tsc");
    convert_bytes(&d.0, &t.to_bytes(), false).unwrap();
    check_known(&d.0.join("parquet"), 1, 50, |c, i| (raw_ts(c, i) / 2) as i64);
}

#[test]
fn time_shift_corrects_per_cpu() {
    let mut t = known_trace(7, Codec::None, 2, 50, false);
    let mut o = Vec::new();
    o.extend_from_slice(&1u64.to_le_bytes());
    o.extend_from_slice(&0u32.to_le_bytes()); // no interpolation
    o.extend_from_slice(&2u32.to_le_bytes());
    for off in [1000i64, -3000] {
        o.extend_from_slice(&1u32.to_le_bytes());
        o.extend_from_slice(&0u64.to_le_bytes());
        o.extend_from_slice(&(off as u64).to_le_bytes());
        o.extend_from_slice(&1u64.to_le_bytes());
    }
    t.options.push((12, o));
    let d = TempDir::new("tshift");
    convert_bytes(&d.0, &t.to_bytes(), false).unwrap();
    check_known(&d.0.join("parquet"), 2, 50, |c, i| raw_ts(c, i) as i64 + if c == 0 { 1000 } else { -3000 });
}

#[test]
fn missed_events_are_counted_per_cpu() {
    let mut t = known_trace(7, Codec::Zstd, 2, 10, false);
    t.buffers[0].cpus[1] = known_cpu_pages(Abi::LE64, 1, 10, 4096, Some(5));
    let d = TempDir::new("missed");
    let r = convert_bytes(&d.0, &t.to_bytes(), false).unwrap();
    assert_eq!(r.metadata["lost_events_per_cpu"]["1"]["missed_events_in_pages"], 42);
    assert_eq!(r.metadata["lost_events_per_cpu"]["1"]["lost_events"], 42);
    assert_eq!(r.metadata["lost_events_per_cpu"]["0"]["lost_events"], 0);
    assert_eq!(r.data_loss.len(), 1, "{:?}", r.data_loss);
    assert!(r.data_loss[0].contains("cpu 1") && r.data_loss[0].contains("42"), "{}", r.data_loss[0]);
}

#[test]
fn identical_output_for_every_thread_count_and_compression() {
    // Every Parquet file byte for byte the same whatever the number of threads (which thread
    // decodes which CPU when), each file's rows in CPU order; and the same rows whatever the
    // trace's compression (its blocks, where batches are cut, differ).
    let files = |dir: &std::path::Path| {
        ["ntscope_test/all_kinds.parquet", "ntscope_test/tick.parquet"].map(|sub| std::fs::read(dir.join(sub)).unwrap())
    };
    let mut rows = Vec::new();
    for codec in [Codec::None, Codec::Zlib, Codec::Zstd] {
        let bytes = known_trace(7, codec, 4, 2500, false).to_bytes();
        let mut first = None;
        for threads in [1, 2, 3, 4] {
            let d = TempDir::new(&format!("same-{:?}-{}", codec, threads));
            let trace = d.0.join("trace.dat");
            std::fs::write(&trace, &bytes).unwrap();
            let o = ConvertOptions { threads, ..opts(false) };
            ntscope::convert::convert(trace.to_str().unwrap(), &d.0.join("parquet"), &o).unwrap();
            let b = read_parquet(&d.0.join("parquet/ntscope_test/all_kinds.parquet"));
            let cpu = col(&b, "cpu").as_primitive::<Int32Type>();
            assert!(cpu.values().windows(2).all(|w| w[0] <= w[1]), "{:?} x{}: rows not in CPU order", codec, threads);
            assert_eq!(cpu.values().iter().collect::<std::collections::BTreeSet<_>>().len(), 4);
            // no part file is left beside the files
            for e in std::fs::read_dir(d.0.join("parquet/ntscope_test")).unwrap() {
                let name = e.unwrap().file_name().into_string().unwrap();
                assert!(name.ends_with(".parquet"), "{}", name);
            }
            let got = files(&d.0.join("parquet"));
            match &first {
                None => {
                    first = Some(got);
                    rows.push(b);
                }
                Some(f) => assert!(f == &got, "{:?} x{}: other bytes than with one thread", codec, threads),
            }
        }
    }
    assert_eq!(rows[0], rows[1]);
    assert_eq!(rows[0], rows[2]);
}
