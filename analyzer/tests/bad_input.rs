//! Bad input: each case gives a clear error (what, where, fix) or a recorded loss, and
//! nothing that looks complete is left under the final output name.

mod common;
use common::*;
use ntscope::synth::*;
use ntscope::tracedat::file::TraceFile;
use ntscope::tracedat::source::Codec;
use std::path::Path;

fn assert_nothing_left(dir: &Path) {
    assert!(!dir.join("parquet").exists(), "a failed conversion left parquet/ behind");
    let leftovers: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name()).filter(|n| n.to_string_lossy().contains(".tmp-")).collect();
    assert!(leftovers.is_empty(), "temporary output left behind: {:?}", leftovers);
}

/// Offset of CPU `cpu`'s data in the top buffer of a file written to `dir`.
fn cpu_offset(dir: &Path, bytes: &[u8], cpu: usize) -> usize {
    let p = dir.join("probe.dat");
    std::fs::write(&p, bytes).unwrap();
    let tf = TraceFile::open(p.to_str().unwrap()).unwrap();
    tf.buffers[0].cpus[cpu].offset as usize
}

#[test]
fn truncated_file_names_cpu_and_offset_and_salvage_keeps_the_rest() {
    let d = TempDir::new("trunc");
    let full = known_trace(6, Codec::None, 2, 2000, false).to_bytes();
    let cut = &full[..full.len() - 3 * 4096 - 100];
    let e = convert_bytes(&d.0, cut, false).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("truncated") && msg.contains("cpu 1") && msg.contains("offset"), "{}", msg);
    assert!(msg.contains("fix:") && msg.contains("--salvage"), "{}", msg);
    assert!(msg.contains("trace.dat"), "error names the file: {}", msg);
    assert_nothing_left(&d.0);
    let r = convert_bytes(&d.0, cut, true).unwrap();
    assert!(r.events > 2000 && r.events < 4000, "{}", r.events);
    assert!(r.data_loss.iter().any(|n| n.contains("cpu 1") && n.contains("missing")), "{:?}", r.data_loss);
}

#[test]
fn truncated_v7_metadata_is_fatal() {
    let d = TempDir::new("trunc7");
    let full = known_trace(7, Codec::Zstd, 1, 200, false).to_bytes();
    // v7 keeps its options section at the end: cut into it.
    let e = convert_bytes(&d.0, &full[..full.len() - 40], false).unwrap_err();
    assert!(e.to_string().contains("truncated") || e.to_string().contains("claims"), "{}", e);
    assert!(e.offset.is_some(), "{}", e);
    assert_nothing_left(&d.0);
}

#[test]
fn corrupted_page_is_fatal_unless_salvaged() {
    let d = TempDir::new("corrupt");
    let mut bytes = known_trace(6, Codec::None, 2, 3000, false).to_bytes();
    let off = cpu_offset(&d.0, &bytes, 0) + 2 * 4096;
    // The first event of the third page of CPU 0 claims 60000 bytes, past the commit end.
    let last = off + 16;
    bytes[last..last + 4].copy_from_slice(&0u32.to_le_bytes());
    bytes[last + 4..last + 8].copy_from_slice(&60000u32.to_le_bytes());
    let e = convert_bytes(&d.0, &bytes, false).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("damaged ring-buffer page") && msg.contains("cpu 0"), "{}", msg);
    assert_eq!(e.offset, Some(last as u64), "{}", msg);
    assert_nothing_left(&d.0);
    let r = convert_bytes(&d.0, &bytes, true).unwrap();
    assert!(r.data_loss.iter().any(|n| n.contains("damaged page")), "{:?}", r.data_loss);
    let md = &r.metadata;
    assert_eq!(md["cpus"][0]["damaged_pages"].as_array().unwrap().len(), 1);
    // Everything outside the damaged page survives.
    assert!(r.events >= 6000 - 80 && r.events < 6000, "{}", r.events);
}

#[test]
fn garbage_commit_word_is_damage() {
    let d = TempDir::new("commit");
    let mut bytes = known_trace(6, Codec::None, 1, 500, false).to_bytes();
    let off = cpu_offset(&d.0, &bytes, 0);
    bytes[off + 8..off + 16].copy_from_slice(&(60_000u64).to_le_bytes());
    let e = convert_bytes(&d.0, &bytes, false).unwrap_err();
    assert!(e.to_string().contains("commit size 60000"), "{}", e);
}

#[test]
fn section_that_lies_about_its_size() {
    let d = TempDir::new("liar");
    let mut bytes = known_trace(7, Codec::None, 1, 50, false).to_bytes();
    // The first section after the header (HEADER_INFO) claims 1 TB.
    let first = 10 + 2 + 2 + 4 + 5 + 1 + 8; // magic, "7\0", endian, long, page size, "none\0\0", offset
    assert_eq!(u16::from_le_bytes([bytes[first], bytes[first + 1]]), 16);
    bytes[first + 8..first + 16].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let e = convert_bytes(&d.0, &bytes, false).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("claims") && msg.contains(&(1u64 << 40).to_string()), "{}", msg);
    assert_eq!(e.offset, Some(first as u64));
    assert_nothing_left(&d.0);
    // A size that overflows offset + size (a fuzzer's case: refused, never an abort on allocation).
    bytes[first + 8..first + 16].copy_from_slice(&(u64::MAX - 1).to_le_bytes());
    let e = convert_bytes(&d.0, &bytes, false).unwrap_err();
    assert!(e.to_string().contains(&(u64::MAX - 1).to_string()), "{}", e);
}

#[test]
fn unknown_option_is_reported_not_fatal() {
    let d = TempDir::new("unkopt");
    let mut t = known_trace(7, Codec::Zstd, 1, 20, false);
    t.options.push((999, vec![1, 2, 3]));
    let r = convert_bytes(&d.0, &t.to_bytes(), false).unwrap();
    assert_eq!(r.events, 20);
    assert_eq!(r.metadata["unknown_options"][0]["id"], 999);
    assert!(r.warnings.iter().any(|n| n.contains("unknown option id 999")), "{:?}", r.warnings);
    assert!(r.data_loss.is_empty(), "an unknown option holds no record: {:?}", r.data_loss);
}

#[test]
fn unsupported_compression_says_how_to_fix() {
    let d = TempDir::new("lz4");
    let bytes = known_trace(7, Codec::Zstd, 1, 20, false).to_bytes();
    let mut b = bytes[..18].to_vec();
    b.extend_from_slice(b"lz4\0");
    b.extend_from_slice(&bytes[18 + 5..]); // drop "zstd\0"
    let e = convert_bytes(&d.0, &b, false).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("unsupported compression algorithm \"lz4\"") && msg.contains("trace-cmd convert"), "{}", msg);
    assert_nothing_left(&d.0);
}

#[test]
fn empty_cpu_and_zero_event_traces() {
    let d = TempDir::new("empty");
    let mut t = known_trace(7, Codec::Zstd, 2, 100, false);
    t.buffers[0].cpus[1].clear();
    let r = convert_bytes(&d.0, &t.to_bytes(), false).unwrap();
    assert_eq!(r.events, 100);
    assert_eq!(r.metadata["cpus"][1]["events"], 0);
    t.buffers[0].cpus[0].clear();
    let r = convert_bytes(&d.0, &t.to_bytes(), false).unwrap();
    assert_eq!(r.events, 0);
    assert!(r.warnings.iter().any(|n| n.contains("no events")), "{:?}", r.warnings);
    assert!(r.data_loss.is_empty(), "an empty trace lost no record: {:?}", r.data_loss);
    // Tables exist (empty) so that SQL over a quiet host still runs.
    let b = read_parquet(&d.0.join("parquet/ntscope_test/tick.parquet"));
    assert_eq!(b.num_rows(), 0);
}

#[test]
fn not_a_trace_and_unknown_version() {
    let d = TempDir::new("notrace");
    let e = convert_bytes(&d.0, b"hello world, not a trace at all", false).unwrap_err();
    assert!(e.to_string().contains("not a trace-cmd trace.dat"), "{}", e);
    let mut b = known_trace(6, Codec::None, 1, 10, false).to_bytes();
    b[10] = b'5';
    let e = convert_bytes(&d.0, &b, false).unwrap_err();
    assert!(e.to_string().contains("version 5 is not supported"), "{}", e);
    assert_nothing_left(&d.0);
}

#[test]
fn failed_reconversion_keeps_the_previous_output() {
    let d = TempDir::new("keep");
    let good = known_trace(7, Codec::Zstd, 1, 30, false).to_bytes();
    convert_bytes(&d.0, &good, false).unwrap();
    let e = convert_bytes(&d.0, &good[..good.len() / 2], false);
    assert!(e.is_err());
    let md = std::fs::read_to_string(d.0.join("parquet/metadata.json")).unwrap();
    assert!(md.contains("\"total_events\": 30"), "previous output was damaged");
}

#[test]
fn mutated_traces_never_panic() {
    // A bounded mutation fuzz over a real-shaped file: flips, truncations, and size
    // words set to extremes. Every outcome must be Ok or a clean error.
    let base = known_trace(7, Codec::Zstd, 2, 300, true).to_bytes();
    let base6 = known_trace(6, Codec::None, 2, 300, true).to_bytes();
    let d = TempDir::new("mutate");
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..300 {
        let src = if round % 2 == 0 { &base } else { &base6 };
        let mut b = src.clone();
        match next() % 3 {
            0 => {
                for _ in 0..(1 + next() % 8) {
                    let i = (next() as usize) % b.len();
                    b[i] ^= 1 << (next() % 8);
                }
            }
            1 => {
                let n = (next() as usize) % b.len();
                b.truncate(n);
            }
            _ => {
                let i = (next() as usize) % (b.len() - 8);
                let v = [0u64, u64::MAX, 1 << 40, 0xffff_ffff][(next() % 4) as usize];
                b[i..i + 8].copy_from_slice(&v.to_le_bytes());
            }
        }
        let _ = convert_bytes(&d.0, &b, next() % 2 == 0);
    }
}
