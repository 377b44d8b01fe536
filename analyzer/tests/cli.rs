//! The command line: help on every subcommand, `--opt=value`, every documented flag
//! name still accepted, and the exit-status contract (usage errors are fatal: 2).

mod common;
use common::TempDir;
use ntscope::synth::known_trace;
use ntscope::tracedat::source::Codec;
use std::process::{Command, Output, Stdio};

fn ntscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ntscope-analyzer")).args(args).stdin(Stdio::null()).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn help_works_for_every_subcommand() {
    for (args, usage) in [
        (vec!["--help"], "Usage: ntscope-analyzer <COMMAND>"),
        (vec!["help"], "Usage: ntscope-analyzer <COMMAND>"),
        (vec!["convert", "--help"], "Usage: ntscope-analyzer convert [OPTIONS] <TRACE>"),
        (vec!["help", "convert"], "Usage: ntscope-analyzer convert [OPTIONS] <TRACE>"),
        (vec!["summary", "--help"], "Usage: ntscope-analyzer summary <DIR>"),
        (vec!["synth", "--help"], "Usage: ntscope-analyzer synth <COMMAND>"),
        (vec!["synth", "known", "-h"], "Usage: ntscope-analyzer synth known [OPTIONS] --out <FILE>"),
        (vec!["synth", "classes", "--help"], "Usage: ntscope-analyzer synth classes [OPTIONS] --out <FILE>"),
        (vec!["synth", "replicate", "--help"], "Usage: ntscope-analyzer synth replicate [OPTIONS] --events <EVENTS> --out <FILE> <INPUT>"),
    ] {
        let o = ntscope(&args);
        assert_eq!(o.status.code(), Some(0), "{:?}: {}", args, text(&o.stderr));
        assert!(text(&o.stdout).contains(usage), "{:?}: {}", args, text(&o.stdout));
    }
    let o = ntscope(&["convert", "--help"]);
    for flag in ["--out <DIR>", "--salvage", "--strict", "--threads <N>", "-j", "--quiet", "--no-progress", "--decode-only"] {
        assert!(text(&o.stdout).contains(flag), "convert --help lacks {}", flag);
    }
    // each flag's help says what it does for convert (not the text report of `ntscope analyze`)
    let help = text(&o.stdout);
    let quiet = help.lines().find(|l| l.contains("--quiet")).unwrap();
    assert!(quiet.contains("Do not print the one-line result on stderr (\"TRACE: N events -> DIR\")"), "{}", quiet);
    assert!(!help.contains("text report"), "{}", help);
    let o = ntscope(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(text(&o.stdout).trim(), format!("ntscope-analyzer {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn every_flag_spelling_is_accepted() {
    let d = TempDir::new("cli-flags");
    let trace = d.0.join("trace.dat");
    std::fs::write(&trace, known_trace(7, Codec::Zstd, 2, 100, false).to_bytes()).unwrap();
    let t = trace.to_str().unwrap();
    let out = d.0.join("out");
    let o = out.to_str().unwrap();
    for args in [
        vec!["convert", t, "--threads=2", &format!("--out={}", o)],
        vec!["convert", t, "--threads", "1", "--out", o, "--quiet", "--no-progress", "--strict"],
        vec!["convert", "-j", "2", "-q", "-o", o, t, "--salvage"],
        vec!["convert", t, "-j2", "--out", o],
    ] {
        let r = ntscope(&args);
        assert_eq!(r.status.code(), Some(0), "{:?}: {}", args, text(&r.stderr));
    }
    let r = ntscope(&["convert", t, "--decode-only"]);
    assert_eq!(r.status.code(), Some(0));
    assert_eq!(text(&r.stdout).trim(), "200 events decoded");
    let r = ntscope(&["summary", o]);
    assert_eq!(r.status.code(), Some(0));
    assert!(text(&r.stdout).contains("200  total"), "{}", text(&r.stdout));
    // --quiet drops the result line, not warnings.
    let r = ntscope(&["convert", t, "--out", o, "-q"]);
    assert_eq!(text(&r.stderr), "");
    let r = ntscope(&["convert", t, "--out", o]);
    assert!(text(&r.stderr).contains("200 events ->"), "{}", text(&r.stderr));
    // synth with negative values and = forms.
    let s = d.0.join("s.dat");
    let r = ntscope(&["synth", "known", "--version=6", "--codec", "none", "--cpus", "1", "--events=10", "--date", "0x10", "--offset", "-500", "--out", s.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let r = ntscope(&["synth", "replicate", s.to_str().unwrap(), "--events", "100", "--codec=zlib", "--out", d.0.join("r.dat").to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let r = ntscope(&["synth", "known", "--endian=big", "--long-size", "4", "--version", "6", "--codec=none", "--out", d.0.join("be.dat").to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let r = ntscope(&["synth", "classes", "--endian", "little", "--long-size=8", "--out", d.0.join("c.dat").to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        vec![],
        vec!["convert"],
        vec!["convert", "x.dat", "--bogus"],
        vec!["convert", "x.dat", "--threads=0"],
        vec!["convert", "x.dat", "--threads", "many"],
        vec!["convert", "a.dat", "b.dat"],
        vec!["frobnicate"],
        vec!["synth", "known", "--out", "x", "--codec", "lz4"],
        vec!["synth", "known", "--out", "x", "--version", "5"],
        vec!["synth", "known", "--out", "x", "--long-size", "2"],
        vec!["synth", "classes", "--out", "x", "--endian", "middle"],
        vec!["synth", "classes", "--out", "x", "--version", "6", "--codec", "zstd"],
        vec!["summary"],
    ] {
        let o = ntscope(&args);
        assert_eq!(o.status.code(), Some(2), "{:?}: {}", args, text(&o.stderr));
        assert!(!o.stderr.is_empty(), "{:?} says nothing", args);
    }
    // A fatal error that is not about usage is also 2, and names the fix.
    let o = ntscope(&["convert", "/nonexistent/trace.dat"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("fix:"), "{}", text(&o.stderr));
}

#[test]
fn no_progress_drawn_when_stderr_is_not_a_terminal() {
    // Large enough for the progress bar (over 64 MB of event data), stderr a pipe.
    let d = TempDir::new("cli-progress");
    let trace = d.0.join("trace.dat");
    std::fs::write(&trace, known_trace(7, Codec::None, 2, 700_000, false).to_bytes()).unwrap();
    assert!(std::fs::metadata(&trace).unwrap().len() > 64 << 20);
    let r = ntscope(&["convert", trace.to_str().unwrap(), "--out", d.0.join("out").to_str().unwrap(), "--quiet"]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    assert_eq!(text(&r.stderr), "", "nothing but warnings on a pipe");
}
