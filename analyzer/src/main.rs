//! ntscope command line. Exit status: 0 ok, 1 data was lost (only with --strict),
//! 2 fatal (usage errors included; nothing is written under the final name).

use clap::{Args, Parser, Subcommand};
use ntscope::convert::{convert, default_out, ConvertOptions};
use ntscope::tracedat::source::Codec;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "ntscope-analyzer", version, about = "ntscope analyzer: trace-cmd trace.dat -> Parquet, lossless and fast", arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// One trace.dat -> DIR/<system>/<event>.parquet + DIR/metadata.json (a run's hosts at
    /// once, kept up to date: `ntscope convert RUN`, which calls this for each host)
    Convert(ConvertArgs),
    /// Events per type, clock and losses of a converted directory
    Summary {
        /// A directory written by `ntscope-analyzer convert`
        dir: PathBuf,
    },
    /// Synthetic traces for tests and benchmarks
    #[command(subcommand)]
    Synth(SynthCommand),
    /// The Perfetto timeline's packets: each io's slices laid out from its row and stage spans,
    /// and the counters (Parquet files, each sorted) -> TracePackets in time order appended to a
    /// file (used by `ntscope analyze`)
    TimelineEncode {
        /// Parquet file, one row per slot (sql/timeline/timeline.sql timeline_slots)
        #[arg(long, value_name = "FILE")]
        layout: PathBuf,
        /// Parquet file, one row per io (timeline_io_rows_of, sorted by start_ts, n); repeated,
        /// one per part of the run: the parts are merged
        #[arg(long, value_name = "FILE", required = true)]
        ios: Vec<PathBuf>,
        /// Parquet file, the stage spans of the ios of the --ios file in the same place (timeline_spans_of,
        /// in the order of those ios); repeated likewise
        #[arg(long, value_name = "FILE", required = true)]
        spans: Vec<PathBuf>,
        /// Parquet file, one row per counter value (timeline_counters_part, sorted), or per begin
        /// or end of a slice or an instant on a fixed track (timeline_cpu_events_part,
        /// timeline_path_events_part); repeated: merged
        #[arg(long, value_name = "FILE", required = true)]
        counters: Vec<PathBuf>,
        /// The uuid of the first io lane (above every fixed track's: timeline_tracks); the lanes
        /// the encoder opens under the queues take the uuids from there on
        #[arg(long, value_name = "UUID")]
        first_lane_uuid: i64,
        /// An existing file the packets are appended to (it holds the trace's first packets)
        #[arg(long, value_name = "FILE")]
        append_to: PathBuf,
    },
    /// Parquet files of one schema -> one file of their row groups in order, the column chunks
    /// copied as they are (used by `ntscope analyze` for report/io_stages.parquet, written in parts)
    ParquetConcat {
        /// The output file (created or replaced)
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// The input files, in the order their rows go
        #[arg(required = true, value_name = "PART")]
        parts: Vec<PathBuf>,
    },
}

#[derive(Args)]
struct ConvertArgs {
    /// The trace.dat written by trace-cmd record
    trace: String,
    /// Output directory: absent, empty, or an earlier ntscope output [default: parquet/ beside the trace]
    #[arg(short, long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Skip damaged pages / truncated data instead of failing (the loss is recorded in metadata.json)
    #[arg(long)]
    salvage: bool,
    /// Exit 1 when any record was lost or could not be converted
    #[arg(long)]
    strict: bool,
    /// Threads [default: the number of CPUs]
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    threads: Option<u32>,
    /// Do not print the one-line result on stderr ("TRACE: N events -> DIR"); warnings and errors are still printed
    #[arg(short, long)]
    quiet: bool,
    /// No progress bar (it is only drawn when stderr is a terminal anyway)
    #[arg(long)]
    no_progress: bool,
    /// Decode into columns and write nothing (benchmarks: the Parquet share of the time)
    #[arg(long)]
    decode_only: bool,
}

#[derive(Subcommand)]
enum SynthCommand {
    /// A synthetic trace with an exact known answer (tests)
    Known {
        #[arg(long, value_name = "FILE")]
        out: String,
        #[command(flatten)]
        shape: SynthShape,
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=1024))]
        cpus: u32,
        /// Events per CPU
        #[arg(long, default_value_t = 1000)]
        events: u64,
        /// Add an instance buffer
        #[arg(long)]
        instance: bool,
        /// DATE option (microseconds, as trace-cmd writes it, e.g. 0x10)
        #[arg(long, value_name = "US", allow_hyphen_values = true)]
        date: Option<String>,
        /// OFFSET option (nanoseconds)
        #[arg(long, value_name = "NS", allow_hyphen_values = true)]
        offset: Option<String>,
    },
    /// A known-answer trace of the event classes others' recordings bring: ftrace
    /// print/bprint/bputs with kallsyms and printk formats, a system named xhci-hcd, field
    /// names used twice, byte arrays, invalid UTF-8 (tests)
    Classes {
        #[arg(long, value_name = "FILE")]
        out: String,
        #[command(flatten)]
        shape: SynthShape,
    },
    /// A large trace made of a real trace's pages, repeated (benchmarks)
    Replicate {
        /// The real trace.dat
        input: String,
        /// At least this many events
        #[arg(long)]
        events: u64,
        #[arg(long, value_name = "FILE")]
        out: String,
        #[arg(long, default_value = "zstd", value_parser = parse_codec)]
        codec: Codec,
    },
}

/// The file version, compression and recording kernel of a synthetic trace.
#[derive(Args)]
struct SynthShape {
    /// File version: 6 or 7 (v6 has no compression)
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(6..=7))]
    version: u32,
    #[arg(long, default_value = "zstd", value_parser = parse_codec)]
    codec: Codec,
    /// Byte order of the recording kernel
    #[arg(long, default_value = "little", value_parser = ["little", "big"])]
    endian: String,
    /// The recording kernel's long, in bytes
    #[arg(long, default_value_t = 8, value_parser = parse_long_size)]
    long_size: usize,
}

impl SynthShape {
    fn abi(&self) -> ntscope::synth::Abi {
        use ntscope::tracedat::bytes::Endian;
        ntscope::synth::Abi { endian: if self.endian == "big" { Endian::Big } else { Endian::Little }, long_size: self.long_size }
    }

    /// Says so and returns false for a version 6 file with compression (it has none).
    fn valid(&self) -> bool {
        let ok = self.version == 7 || self.codec == Codec::None;
        if !ok {
            eprintln!("ntscope: error: synth: version 6 files have no compression; fix: pass --codec none or --version 7");
        }
        ok
    }
}

fn parse_long_size(s: &str) -> Result<usize, String> {
    match s {
        "4" => Ok(4),
        "8" => Ok(8),
        _ => Err(format!("{:?} is not a kernel long size (4 or 8)", s)),
    }
}

fn parse_codec(s: &str) -> Result<Codec, String> {
    Codec::from_name(s).map_err(|e| e.what)
}

/// Rust's allocations come from jemalloc. The converter makes and frees a row group's
/// column and page buffers (hundreds of kB) per batch while parquet keeps each row group's
/// metadata (small, until the file is closed); glibc's heap carved that metadata out of the
/// freed buffers and grew: peak memory 95, 121 and 175 MB at 2.5, 10 and 40 M events, up
/// to 100 MB of it free heap. jemalloc keeps small and large blocks apart: 116, 123 and
/// 144 MB, the growth being the metadata itself.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's settings (its `malloc_conf` symbol, read when it starts): freed pages stay
/// with the process instead of going back to the kernel after a delay, so a buffer made
/// again does not fault its pages in again (the converter runs for seconds; what it
/// freed it will need again). With jemalloc's default delays the real lab capture took a
/// tenth more CPU time. One arena for all threads: a buffer one thread frees is reused by
/// the other (decoders make column buffers, the encoders free them), and no arena is
/// purged when its last thread exits: peak memory 17% lower on the 10 M-event copy, as
/// fast.
#[export_name = "_rjem_malloc_conf"]
static JEMALLOC_CONF: MallocConf = MallocConf(b"dirty_decay_ms:-1,muzzy_decay_ms:-1,narenas:1\0".as_ptr());

#[repr(transparent)]
struct MallocConf(*const u8);
// SAFETY: a pointer to a constant, NUL-terminated string, never written.
unsafe impl Sync for MallocConf {}

/// glibc malloc settings, for what C code allocates (zstd's contexts and their tables): by
/// default glibc serves blocks above 128 kB with mmap and returns freed heap tops above
/// 128 kB to the kernel, a page fault per 4 kB each time such a block is made again. Blocks
/// up to 4 MiB from the heap, and up to 64 MiB of free heap kept (with every buffer of the
/// converter from glibc, these took a fifth off the CPU time of a long uncompressed trace).
fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}

fn main() -> ExitCode {
    tune_malloc();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // Help and version go to stdout with status 0; every usage error is fatal (2).
            let _ = e.print();
            return if e.use_stderr() || e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match cli.command {
        Command::Convert(a) => cmd_convert(a),
        Command::Summary { dir } => cmd_summary(&dir),
        Command::Synth(s) => cmd_synth(s),
        Command::TimelineEncode { layout, ios, spans, counters, first_lane_uuid, append_to } => {
            match ntscope::timeline::encode_files(&layout, &ios, &spans, &counters, first_lane_uuid, &append_to) {
                Ok(_) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("ntscope: error: timeline: {}", e);
                    ExitCode::from(2)
                }
            }
        }
        Command::ParquetConcat { out, parts } => match ntscope::parquet_concat::concat_files(&parts, &out) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("ntscope: error: parquet-concat: {}", e);
                ExitCode::from(2)
            }
        },
    }
}

fn cmd_convert(a: ConvertArgs) -> ExitCode {
    if a.decode_only {
        return match ntscope::convert::decode_only_file(&a.trace) {
            Ok(n) => {
                println!("{} events decoded", n);
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("ntscope: error: {}", e);
                ExitCode::from(2)
            }
        };
    }
    let mut opts = ConvertOptions::default();
    opts.salvage = a.salvage;
    if let Some(n) = a.threads {
        opts.threads = n as usize;
    }
    if a.no_progress {
        opts.progress = false;
    }
    let out = a.out.unwrap_or_else(|| default_out(&a.trace));
    match convert(&a.trace, &out, &opts) {
        Ok(r) => {
            for note in r.warnings.iter().chain(&r.data_loss) {
                eprintln!("ntscope: warning: {}: {}", a.trace, note);
            }
            if !a.quiet {
                eprintln!("{}: {} events -> {}", a.trace, r.events, out.display());
            }
            if a.strict && !r.data_loss.is_empty() {
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

fn cmd_summary(dir: &std::path::Path) -> ExitCode {
    let path = dir.join("metadata.json");
    // A regular file only (a FIFO would block), of a sane size.
    let read = std::fs::metadata(&path).map_err(|e| e.to_string()).and_then(|m| {
        if !m.is_file() {
            Err("not a regular file".to_string())
        } else if m.len() > 256 << 20 {
            Err(format!("{} bytes is too large for a metadata.json", m.len()))
        } else {
            std::fs::read(&path).map_err(|e| e.to_string())
        }
    });
    let md: serde_json::Value = match read.and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string())) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("ntscope: error: cannot read {}: {}\n  fix: convert first (ntscope-analyzer convert TRACE.dat --out {})", path.display(), e, dir.display());
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
    for note in ntscope::metadata::warning_notes(&md).into_iter().chain(ntscope::metadata::loss_notes(&md)) {
        println!("warning: {}", note);
    }
    ExitCode::SUCCESS
}

fn cmd_synth(s: SynthCommand) -> ExitCode {
    use ntscope::synth::{known_trace_abi, replicate};
    let (out, bytes) = match s {
        SynthCommand::Classes { out, shape } => {
            if !shape.valid() {
                return ExitCode::from(2);
            }
            (out, ntscope::synth_classes::classes_trace(shape.abi(), shape.version, shape.codec, false).to_bytes())
        }
        SynthCommand::Known { out, shape, cpus, events, instance, date, offset } => {
            if !shape.valid() {
                return ExitCode::from(2);
            }
            let mut t = known_trace_abi(shape.abi(), shape.version, shape.codec, cpus, events, instance);
            if let Some(d) = date {
                t.options.push((1, format!("{}\0", d).into_bytes()));
            }
            if let Some(o) = offset {
                t.options.push((7, format!("{}\0", o).into_bytes()));
            }
            (out, t.to_bytes())
        }
        SynthCommand::Replicate { input, events, out, codec } => match replicate(&input, events, codec) {
            Ok((t, n)) => {
                eprintln!("synth: {} events from {}", n, input);
                (out, t.to_bytes())
            }
            Err(e) => {
                eprintln!("ntscope: error: {}", e);
                return ExitCode::from(2);
            }
        },
    };
    if std::fs::symlink_metadata(&out).map(|m| !m.is_file()).unwrap_or(false) {
        eprintln!("ntscope: error: {} exists and is not a regular file; refusing to replace it\n  fix: pass --out a file path", out);
        return ExitCode::from(2);
    }
    let tmp = format!("{}.tmp-{}", out, std::process::id());
    if let Err(e) = std::fs::write(&tmp, &bytes).and_then(|_| std::fs::rename(&tmp, &out)) {
        eprintln!("ntscope: error: cannot write {}: {}\n  fix: check that the directory exists and is writable", out, e);
        let _ = std::fs::remove_file(&tmp);
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
