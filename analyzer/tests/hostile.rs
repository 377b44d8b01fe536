//! Hostile input: no trace file and no --out value may destroy data, write outside
//! --out, make the converter hang, or make it use memory out of proportion to the file.
//! Each case runs the real binary and checks the exit status, the message, that the
//! input files are byte-identical afterwards and that nothing changed outside --out.

mod common;
use common::TempDir;
use ntscope::synth::*;
use ntscope::tracedat::source::Codec;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs ntscope (or $NTSCOPE_HOSTILE_BIN, to check another build); returns (exit code,
/// stderr). A run that does not end within a minute is killed and fails the test (a
/// hang is what some of these inputs could cause).
fn ntscope(args: &[&str]) -> (i32, String) {
    let bin = std::env::var("NTSCOPE_HOSTILE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_ntscope-analyzer").to_string());
    let mut child = Command::new(bin).args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            return (status.code().unwrap_or(-1), err);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ntscope {:?} did not finish within a minute (it hangs)", args);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every entry under `root` (not following symlinks) with its content, except under `skip`.
fn snapshot(root: &Path, skip: Option<&Path>) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if skip.is_some_and(|s| p.starts_with(s)) {
                continue;
            }
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p.clone());
                out.insert(p, None);
            } else if m.is_file() {
                out.insert(p.clone(), Some(std::fs::read(&p).unwrap()));
            } else {
                out.insert(p, Some(b"<special>".to_vec()));
            }
        }
    }
    out
}

/// A run with two hosts: RUN/initiator/trace.dat, RUN/target/trace.dat (+ host.json).
fn make_run(root: &Path) -> PathBuf {
    let run = root.join("run1");
    for (host, cpus) in [("initiator", 2), ("target", 1)] {
        std::fs::create_dir_all(run.join(host)).unwrap();
        std::fs::write(run.join(host).join("trace.dat"), known_trace(7, Codec::Zstd, cpus, 200, false).to_bytes()).unwrap();
        std::fs::write(run.join(host).join("host.json"), format!("{{\"role\": \"{}\"}}", host)).unwrap();
    }
    run
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn assert_refused(code: i32, err: &str, want: &str) {
    assert_eq!(code, 2, "exit status; stderr: {}", err);
    assert!(err.contains("refusing to write the output to") && err.contains(want) && err.contains("fix:"), "want {:?} in: {}", want, err);
}

// ---------------- class 1: --out must never cost data ----------------

#[test]
fn out_holding_the_trace_is_refused() {
    let d = TempDir::new("hostile-holds");
    let run = make_run(&d.0);
    let trace = run.join("initiator/trace.dat");
    let before = snapshot(&d.0, None);
    // The run directory (both hosts' traces), the trace's own directory, a parent further up.
    let (code, err) = ntscope(&["convert", s(&trace), "--out", s(&run)]);
    assert_refused(code, &err, "it contains the trace");
    let (code, err) = ntscope(&["convert", s(&trace), "--out", s(&run.join("initiator"))]);
    assert_refused(code, &err, "it is the directory that holds the trace");
    let (code, err) = ntscope(&["convert", s(&trace), &format!("--out={}", d.0.display())]);
    assert_refused(code, &err, "it contains the trace");
    // The same path written another way.
    let (code, err) = ntscope(&["convert", s(&trace), "--out", &format!("{}/initiator/..", run.display())]);
    assert_refused(code, &err, "it contains the trace");
    assert_eq!(snapshot(&d.0, None), before, "files changed");
}

#[test]
fn out_that_is_a_file_or_someone_elses_directory_is_refused() {
    let d = TempDir::new("hostile-foreign");
    let run = make_run(&d.0);
    let trace = run.join("initiator/trace.dat");
    let notes = d.0.join("notes.txt");
    std::fs::write(&notes, "keep me").unwrap();
    let foreign = d.0.join("mine");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("data.csv"), "1,2,3").unwrap();
    // Another tool's metadata.json is not ours.
    let other = d.0.join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("metadata.json"), r#"{"converter": {"name": "something-else"}}"#).unwrap();
    // Our earlier output, with a file of the user's added to it.
    let ours = d.0.join("ours");
    let (code, err) = ntscope(&["convert", s(&trace), "--out", s(&ours)]);
    assert_eq!(code, 0, "{}", err);
    std::fs::write(ours.join("ntscope_test/notes.md"), "my notes").unwrap();
    std::os::unix::fs::symlink(&foreign, d.0.join("link")).unwrap();
    let before = snapshot(&d.0, None);
    let (code, err) = ntscope(&["convert", s(&trace), "--out", s(&notes)]);
    assert_refused(code, &err, "it is a regular file (7 bytes)");
    let (code, err) = ntscope(&["convert", s(&trace), "--out", s(&foreign)]);
    assert_refused(code, &err, "not empty (1 entries: data.csv)");
    let (code, err) = ntscope(&["convert", s(&trace), "--out", s(&other)]);
    assert_refused(code, &err, "no metadata.json written by ntscope");
    let (code, err) = ntscope(&["convert", s(&trace), "--out", s(&ours)]);
    assert_refused(code, &err, "notes.md, which ntscope does not write");
    let (code, err) = ntscope(&["convert", s(&trace), "--out", s(&d.0.join("link"))]);
    assert_refused(code, &err, "symbolic link");
    assert_eq!(snapshot(&d.0, None), before, "files changed");
}

/// A pid that no process has now.
fn dead_pid() -> u32 {
    let max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(32768);
    (2..max).rev().find(|p| !Path::new(&format!("/proc/{}", p)).exists()).unwrap()
}

#[test]
fn earlier_output_is_replaced_and_stale_temporaries_are_cleaned() {
    let d = TempDir::new("hostile-stale");
    let run = make_run(&d.0);
    let trace = run.join("initiator/trace.dat");
    let out = run.join("initiator/parquet");
    let (code, err) = ntscope(&["convert", s(&trace)]);
    assert_eq!(code, 0, "{}", err);
    let dead = dead_pid();
    let me = std::process::id();
    let host = run.join("initiator");
    // Ours and dead: removed. Alive, or another output's name: kept.
    let stale = [format!(".parquet.tmp-{}", dead), format!(".parquet.old-{}", dead)];
    let kept = [format!(".parquet.tmp-{}", me), format!(".parquet2.tmp-{}", dead), format!(".parquet.tmp-{}x", dead)];
    for n in stale.iter().chain(&kept) {
        std::fs::create_dir(host.join(n)).unwrap();
        std::fs::write(host.join(n).join("half.parquet"), "partial").unwrap();
    }
    let traces_before = snapshot(&run, Some(&host));
    let (code, err) = ntscope(&["convert", s(&trace), "--out", s(&out)]);
    assert_eq!(code, 0, "an earlier output is replaced: {}", err);
    for n in &stale {
        assert!(!host.join(n).exists(), "{} of a dead process was left", n);
    }
    for n in &kept {
        assert!(host.join(n).join("half.parquet").exists(), "{} is not a stale temporary of this output", n);
    }
    assert!(out.join("metadata.json").exists());
    let left: Vec<_> = std::fs::read_dir(&host).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).filter(|n| n.starts_with(".parquet.old-") || n == &format!(".parquet.tmp-{}", dead)).collect();
    assert!(left.is_empty(), "{:?}", left);
    assert_eq!(snapshot(&run, Some(&host)), traces_before);
    assert_eq!(std::fs::read(&trace).unwrap(), known_trace(7, Codec::Zstd, 2, 200, false).to_bytes(), "the trace changed");
}

// ---------------- class 2: names from the trace never leave --out ----------------

/// The known trace with the tick event renamed (system and name).
fn renamed_tick(system: &str, event: &str) -> Vec<u8> {
    let mut t = known_trace(7, Codec::Zstd, 2, 200, false);
    t.formats[1] = (system.to_string(), tick_format().replace("name: tick", &format!("name: {}", event)));
    t.to_bytes()
}

#[test]
fn odd_system_and_event_names_are_skipped_and_recorded() {
    let tag = std::process::id();
    let cases = [
        ("", format!("hostile_{}", tag), "system name \"\""),
        ("..", format!("escaped_{}", tag), "system name \"..\""),
        ("ntscope_test", format!("../../escaped_{}", tag), "event name"),
        ("/tmp", format!("abs_{}", tag), "system name \"/tmp\""),
    ];
    for (system, event, why) in cases {
        let d = TempDir::new("hostile-names");
        let host = d.0.join("run/host");
        std::fs::create_dir_all(&host).unwrap();
        let trace = host.join("trace.dat");
        let bytes = renamed_tick(system, &event);
        std::fs::write(&trace, &bytes).unwrap();
        let out = host.join("parquet");
        let before = snapshot(&d.0, None);
        let (code, err) = ntscope(&["convert", s(&trace), "--out", s(&out), "--strict"]);
        assert_eq!(code, 1, "a skipped type is a loss under --strict: {}", err);
        assert!(err.contains("were not converted") && err.contains(why), "{:?}: {}", system, err);
        let after = snapshot(&d.0, Some(&out));
        assert_eq!(after, before, "something was written outside --out for {:?}/{:?}", system, event);
        for p in [format!("/{}.parquet", event), format!("/tmp/abs_{}.parquet", tag)] {
            assert!(!Path::new(&p).exists(), "{} was written", p);
        }
        let md: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("metadata.json")).unwrap()).unwrap();
        let skipped = &md["skipped_event_types"][0];
        assert_eq!(skipped["id"], TICK_ID as u64);
        assert_eq!(skipped["records"], 200, "two CPUs, 100 ticks each");
        assert!(skipped["reason"].as_str().unwrap().contains(why), "{}", skipped);
        // The rest converts.
        let all = common::read_parquet(&out.join("ntscope_test/all_kinds.parquet"));
        assert_eq!(all.num_rows(), 200);
        assert_eq!(md["total_events"], 200);
        assert_eq!(std::fs::read(&trace).unwrap(), bytes);
    }
}

#[test]
fn formats_whose_fields_lie_beyond_any_record_are_refused_naming_event_and_field() {
    // Unchecked, offset + size overflows: a debug build panics, a release build takes a
    // record as long enough by the wrapped sum and decodes bytes that are not the field.
    let seq = "field:u32 seq;\toffset:8;\tsize:4;\tsigned:0;";
    let cases = [
        ("field:u32 seq;\toffset:18446744073709551615;\tsize:4;\tsigned:0;", "field \"seq\" has offset 18446744073709551615 and size 4, which end beyond any record"),
        ("field:u32 seq;\toffset:8;\tsize:18446744073709551615;\tsigned:0;", "field \"seq\" has offset 8 and size 18446744073709551615, which end beyond any record"),
        ("field:u32 seq;\toffset:1048575;\tsize:4;\tsigned:0;", "field \"seq\" has offset 1048575 and size 4, which end beyond any record (a record is at most 1048576 bytes)"),
        ("field:u32 seq;\toffset:18446744073709551616;\tsize:4;\tsigned:0;", "its offset \"18446744073709551616\" is not a number of bytes"),
    ];
    for (line, want) in cases {
        let d = TempDir::new("hostile-format");
        let mut t = known_trace(7, Codec::Zstd, 2, 200, false);
        t.formats[1].1 = tick_format().replace(seq, line);
        assert_ne!(t.formats[1].1, tick_format());
        let bytes = t.to_bytes();
        let trace = d.0.join("trace.dat");
        std::fs::write(&trace, &bytes).unwrap();
        let out = d.0.join("out");
        let before = snapshot(&d.0, None);
        let (code, err) = ntscope(&["convert", s(&trace), "--out", s(&out), "--strict"]);
        assert_eq!(code, 2, "{}: {}", line, err);
        assert!(err.contains("event format ntscope_test:tick") && err.contains(want) && err.contains("fix:"), "{}: {}", line, err);
        assert!(!err.contains("panicked"), "{}", err);
        assert_eq!(snapshot(&d.0, None), before, "{}: something was written", line);
        assert_eq!(std::fs::read(&trace).unwrap(), bytes);
    }
}

#[test]
fn odd_instance_and_field_names_are_skipped_and_recorded() {
    // An instance named "..": its files would land on the top buffer's.
    let d = TempDir::new("hostile-inst");
    let mut t = known_trace(7, Codec::Zstd, 2, 200, true);
    t.buffers[1].name = "..".into();
    let trace = d.0.join("trace.dat");
    std::fs::write(&trace, t.to_bytes()).unwrap();
    let out = d.0.join("out");
    let (code, err) = ntscope(&["convert", s(&trace), "--out", s(&out)]);
    assert_eq!(code, 0, "{}", err);
    assert!(err.contains("instance \"..\"") && err.contains("was not converted"), "{}", err);
    let md: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("metadata.json")).unwrap()).unwrap();
    assert_eq!(md["skipped_buffers"][0]["name"], "..");
    assert_eq!(common::read_parquet(&out.join("ntscope_test/all_kinds.parquet")).num_rows(), 200, "top buffer rows only");
    assert!(!out.join("instances").exists());

    // A field name that is not a C identifier: its type is skipped, the rest converts.
    let d = TempDir::new("hostile-field");
    let mut t = known_trace(7, Codec::Zstd, 1, 100, false);
    t.formats[1].1 = t.formats[1].1.replace("u32 seq;", "u32 se-q;");
    let trace = d.0.join("trace.dat");
    std::fs::write(&trace, t.to_bytes()).unwrap();
    let out = d.0.join("out");
    let (code, err) = ntscope(&["convert", s(&trace), "--out", s(&out)]);
    assert_eq!(code, 0, "{}", err);
    assert!(err.contains("field name \"se-q\" is not a C identifier"), "{}", err);
    assert!(!out.join("ntscope_test/tick.parquet").exists());
    assert_eq!(common::read_parquet(&out.join("ntscope_test/all_kinds.parquet")).num_rows(), 50);
}

// ---------------- class 3: resource bombs ----------------

/// zstd of `prefix` followed by zeros up to `total` bytes, compressed as it streams.
fn zstd_bomb(prefix: &[u8], total: usize) -> Vec<u8> {
    let mut e = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    e.write_all(prefix).unwrap();
    let zeros = vec![0u8; 1 << 20];
    let mut left = total - prefix.len();
    while left > 0 {
        let n = left.min(zeros.len());
        e.write_all(&zeros[..n]).unwrap();
        left -= n;
    }
    e.finish().unwrap()
}

fn option(id: u16, data: &[u8]) -> Vec<u8> {
    let mut o = id.to_le_bytes().to_vec();
    o.extend_from_slice(&(data.len() as u32).to_le_bytes());
    o.extend_from_slice(data);
    o
}

#[test]
fn decompression_bombs_are_refused_before_inflating() {
    let d = TempDir::new("hostile-bomb");
    // A chained options section: a real option and the end marker, then zeros to 1 GiB.
    let mut t = known_trace(7, Codec::Zstd, 1, 50, false);
    t.chained_options.push((9, b"3.1.6\0".to_vec()));
    let mut opts = option(9, b"3.1.6\0");
    opts.extend(option(0, &0u64.to_le_bytes()));
    let giga = 1usize << 30;
    let z = zstd_bomb(&opts, giga);
    assert!(z.len() < 100_000, "the bomb is small: {}", z.len());
    t.raw_sections.insert(0, (z.clone(), giga as u32));
    let bytes = t.to_bytes();
    assert!(bytes.len() < 200_000);
    let trace = d.0.join("trace.dat");
    std::fs::write(&trace, &bytes).unwrap();
    let (code, err) = ntscope(&["convert", s(&trace), "--out", s(&d.0.join("out"))]);
    assert_eq!(code, 2, "{}", err);
    let want = format!("options section: a compressed block of {} bytes declares 1073741824 bytes uncompressed", z.len());
    assert!(err.contains(&want) && err.contains("refusing to inflate") && err.contains("fix:"), "{}", err);
    assert!(!d.0.join("out").exists());

    // The ring-buffer layout text, then zeros to 256 MiB (it is two short texts).
    let mut t = known_trace(7, Codec::Zstd, 1, 50, false);
    let mut hi = b"header_page\0".to_vec();
    hi.extend_from_slice(&(HEADER_PAGE.len() as u64).to_le_bytes());
    hi.extend_from_slice(HEADER_PAGE.as_bytes());
    hi.extend_from_slice(b"header_event\0");
    hi.extend_from_slice(&(HEADER_EVENT.len() as u64).to_le_bytes());
    hi.extend_from_slice(HEADER_EVENT.as_bytes());
    let z = zstd_bomb(&hi, 256 << 20);
    t.raw_sections.insert(16, (z.clone(), 256 << 20));
    std::fs::write(&trace, t.to_bytes()).unwrap();
    let (code, err) = ntscope(&["convert", s(&trace), "--out", s(&d.0.join("out"))]);
    assert_eq!(code, 2, "{}", err);
    let want = format!("header info: a compressed block of {} bytes declares 268435456 bytes uncompressed, more than the 1048576-byte limit for the header info", z.len());
    assert!(err.contains(&want), "{}", err);
    assert!(!d.0.join("out").exists());
    assert_eq!(std::fs::read(&trace).unwrap(), t.to_bytes());
}

#[test]
fn fifos_devices_and_directories_are_refused_without_blocking() {
    let d = TempDir::new("hostile-special");
    let cases: [(&str, &dyn Fn(&Path), &str); 3] = [
        ("fifo", &|p: &Path| assert!(Command::new("mkfifo").arg(p).status().unwrap().success()), "the trace is a FIFO (named pipe), not a regular file"),
        ("dir", &|p: &Path| std::fs::create_dir(p).unwrap(), "the trace is a directory, not a regular file"),
        ("dev", &|p: &Path| std::os::unix::fs::symlink("/dev/zero", p).unwrap(), "the trace is a character device, not a regular file"),
    ];
    for (name, make, want) in cases {
        let host = d.0.join(name);
        std::fs::create_dir(&host).unwrap();
        let trace = host.join("trace.dat");
        make(&trace);
        let before = snapshot(&d.0, None);
        let (code, err) = ntscope(&["convert", s(&trace)]);
        assert_eq!(code, 2, "{}: {}", name, err);
        assert!(err.contains(want) && err.contains("fix:"), "{}: {}", name, err);
        assert_eq!(snapshot(&d.0, None), before, "{}: something was written", name);
    }
}
