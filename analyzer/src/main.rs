//! ntscope command line. Exit status: 0 ok, 1 data was lost (only with --strict),
//! 2 fatal (nothing written under the final name).

use ntscope::convert::{convert, default_out, ConvertOptions};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage:
  ntscope convert TRACE.dat [--out DIR] [--salvage] [--strict] [--threads N] [--quiet]
      trace.dat -> DIR/<system>/<event>.parquet + DIR/metadata.json
      (DIR defaults to parquet/ beside the trace)
      --salvage   skip damaged pages / truncated data instead of failing (loss recorded)
      --strict    exit 1 when any event was lost or skipped
      --decode-only   decode into columns and write nothing (benchmarks)
  ntscope summary DIR
      events per type, clock and losses of a converted directory
  ntscope synth known --out FILE [--version 6|7] [--codec none|zstd|zlib] [--cpus N]
                      [--events N] [--instance] [--date US] [--offset NS]
      a synthetic trace with an exact known answer (tests)
  ntscope synth replicate REAL.dat --events N --out FILE [--codec none|zstd|zlib]
      a large trace made of a real trace's pages, repeated (benchmarks)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("convert") => cmd_convert(&args[1..]),
        Some("summary") => cmd_summary(&args[1..]),
        Some("synth") => cmd_synth(&args[1..]),
        Some("--version") | Some("-V") => {
            println!("ntscope {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some("-h") | Some("--help") | Some("help") => {
            println!("{}", USAGE);
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{}", USAGE);
            ExitCode::from(2)
        }
    }
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("ntscope: {}\n{}", msg, USAGE);
    ExitCode::from(2)
}

fn cmd_convert(args: &[String]) -> ExitCode {
    let mut opts = ConvertOptions::default();
    let mut trace = None;
    let mut out = None;
    let mut strict = false;
    let mut quiet = false;
    let mut decode_only = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" | "-o" => match it.next() {
                Some(v) => out = Some(PathBuf::from(v)),
                None => return usage_error("--out needs a directory"),
            },
            "--threads" | "-j" => match it.next().and_then(|v| v.parse().ok()) {
                Some(n) => opts.threads = n,
                None => return usage_error("--threads needs a number"),
            },
            "--salvage" => opts.salvage = true,
            "--strict" => strict = true,
            "--quiet" | "-q" => quiet = true,
            "--no-progress" => opts.progress = false,
            "--decode-only" => decode_only = true,
            s if s.starts_with('-') => return usage_error(&format!("unknown option {}", s)),
            s => {
                if trace.is_some() {
                    return usage_error("convert takes one trace file");
                }
                trace = Some(s.to_string());
            }
        }
    }
    let Some(trace) = trace else { return usage_error("convert needs a trace.dat") };
    if decode_only {
        // Benchmarks: decode into columns, write nothing (shows the Parquet share of the time).
        let r = std::fs::read(&trace).map_err(|e| e.to_string()).and_then(|b| ntscope::convert::decode_only(&b, false).map_err(|e| e.to_string()));
        return match r {
            Ok(n) => {
                println!("{} events decoded", n);
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("ntscope: error: {}: {}", trace, e);
                ExitCode::from(2)
            }
        };
    }
    let out = out.unwrap_or_else(|| default_out(&trace));
    match convert(&trace, &out, &opts) {
        Ok(r) => {
            for note in &r.data_loss {
                eprintln!("ntscope: warning: {}: {}", trace, note);
            }
            if !quiet {
                eprintln!("{}: {} events -> {}", trace, r.events, out.display());
            }
            if strict && !r.data_loss.is_empty() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("ntscope: error: {}", e);
            ExitCode::from(2)
        }
    }
}

fn cmd_summary(args: &[String]) -> ExitCode {
    let Some(dir) = args.first() else { return usage_error("summary needs a converted directory") };
    let path = PathBuf::from(dir).join("metadata.json");
    let md: serde_json::Value = match std::fs::read(&path).map_err(|e| e.to_string()).and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string())) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("ntscope: error: cannot read {}: {}\n  fix: convert first (ntscope convert TRACE.dat --out {})", path.display(), e, dir);
            return ExitCode::from(2);
        }
    };
    println!(
        "{}  clock={}  cpus={}  trace-cmd {}  {}",
        md["source"]["path"].as_str().unwrap_or("?"),
        md["trace_clock"].as_str().unwrap_or("?"),
        md["cpu_count"],
        md["tracecmd_version"].as_str().unwrap_or("?"),
        md["uname"].as_str().unwrap_or("")
    );
    let mut rows: Vec<(String, u64)> = md["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["rows"].as_u64().unwrap_or(0) > 0)
        .map(|e| {
            let b = e["buffer"].as_str().unwrap_or("");
            let name = format!("{}{}:{}", if b.is_empty() { String::new() } else { format!("[{}] ", b) }, e["system"].as_str().unwrap_or(""), e["event"].as_str().unwrap_or(""));
            (name, e["rows"].as_u64().unwrap_or(0))
        })
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    println!("{:>10}  event", "count");
    for (name, n) in &rows {
        println!("{:>10}  {}", n, name);
    }
    println!("{:>10}  total", md["total_events"]);
    for note in ntscope::metadata::loss_notes(&md) {
        println!("warning: {}", note);
    }
    ExitCode::SUCCESS
}

fn cmd_synth(args: &[String]) -> ExitCode {
    use ntscope::synth::{known_trace, replicate};
    use ntscope::tracedat::source::Codec;
    let mut kind = None;
    let mut input = None;
    let (mut out, mut version, mut codec, mut cpus, mut events, mut instance) = (None, 7u32, Codec::Zstd, 2u32, 1000u64, false);
    let mut extra: Vec<(u16, Vec<u8>)> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().unwrap_or_default();
        match a.as_str() {
            "--out" => out = Some(val()),
            "--version" => version = val().parse().unwrap_or(0),
            "--codec" => match Codec::from_name(&val()) {
                Ok(c) => codec = c,
                Err(e) => return usage_error(&e.to_string()),
            },
            "--cpus" => cpus = val().parse().unwrap_or(0),
            "--events" => events = val().parse().unwrap_or(0),
            "--instance" => instance = true,
            "--date" => extra.push((1, format!("{}\0", val()).into_bytes())),
            "--offset" => extra.push((7, format!("{}\0", val()).into_bytes())),
            s if s.starts_with('-') => return usage_error(&format!("unknown option {}", s)),
            s if kind.is_none() => kind = Some(s.to_string()),
            s => input = Some(s.to_string()),
        }
    }
    let Some(out) = out else { return usage_error("synth needs --out FILE") };
    let bytes = match kind.as_deref() {
        Some("known") => {
            if !(version == 6 || version == 7) || cpus == 0 || (version == 6 && codec != Codec::None) {
                return usage_error("synth known: --version 6|7 (v6 has no compression), --cpus >= 1");
            }
            let mut t = known_trace(version, codec, cpus, events, instance);
            t.options.extend(extra);
            t.to_bytes()
        }
        Some("replicate") => {
            let Some(input) = input else { return usage_error("synth replicate needs a real trace.dat") };
            match replicate(&input, events, codec) {
                Ok((t, n)) => {
                    eprintln!("synth: {} events from {}", n, input);
                    t.to_bytes()
                }
                Err(e) => {
                    eprintln!("ntscope: error: {}", e);
                    return ExitCode::from(2);
                }
            }
        }
        _ => return usage_error("synth: say `known` or `replicate`"),
    };
    let tmp = format!("{}.tmp-{}", out, std::process::id());
    if let Err(e) = std::fs::write(&tmp, &bytes).and_then(|_| std::fs::rename(&tmp, &out)) {
        eprintln!("ntscope: error: cannot write {}: {}", out, e);
        let _ = std::fs::remove_file(&tmp);
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
