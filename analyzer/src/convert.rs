//! trace.dat -> a directory of Parquet files + metadata.json. Decodes CPUs in parallel,
//! writes under a temporary name and renames, so a crash never leaves a directory that
//! looks complete.

use crate::columns::{schema_for, EventTable};
use crate::metadata::CpuStats;
use crate::parquet_out::{event_file, ParquetSink};
use crate::tracedat::error::{Result, TraceError};
use crate::tracedat::file::TraceFile;
use crate::tracedat::pages::for_each_page;
use crate::tracedat::ringbuf::{decode_page, Missed};
use arrow_schema::SchemaRef;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

#[derive(Clone, Debug)]
pub struct ConvertOptions {
    /// Skip damaged pages and truncated CPU data instead of failing (loss recorded).
    pub salvage: bool,
    pub threads: usize,
    /// Rows per record batch handed to the writer.
    pub batch_rows: usize,
    pub progress: bool,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions {
            salvage: false,
            threads: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            batch_rows: 1 << 16,
            progress: std::io::stderr().is_terminal(),
        }
    }
}

#[derive(Debug)]
pub struct ConvertResult {
    pub metadata: Value,
    pub events: u64,
    /// Human-readable notes about lost or damaged data (empty when clean).
    pub data_loss: Vec<String>,
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> TraceError {
    TraceError::new(format!("{} {}: {}", what, path.display(), e)).fix("check that the output directory is writable and the disk has space")
}

/// Converts `trace` into `out` (created or replaced atomically).
pub fn convert(trace: &str, out: &Path, opts: &ConvertOptions) -> Result<ConvertResult> {
    let tf = TraceFile::open(trace)?;
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| io_err("cannot create", parent, e))?;
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "parquet".into());
    let tmp = parent.join(format!(".{}.tmp-{}", name, std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| io_err("cannot create", &tmp, e))?;
    let result = convert_into(&tf, &tmp, opts).map_err(|e| e.file(trace));
    match result {
        Ok(r) => {
            replace_dir(&tmp, out)?;
            Ok(r)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
}

/// Renames `tmp` to `out`, replacing an older `out`.
fn replace_dir(tmp: &Path, out: &Path) -> Result<()> {
    if out.exists() {
        let old = out.with_file_name(format!(
            ".{}.old-{}",
            out.file_name().unwrap_or_default().to_string_lossy(),
            std::process::id()
        ));
        std::fs::rename(out, &old).map_err(|e| io_err("cannot move aside", out, e))?;
        std::fs::rename(tmp, out).map_err(|e| io_err("cannot rename into", out, e))?;
        let _ = std::fs::remove_dir_all(&old);
    } else {
        std::fs::rename(tmp, out).map_err(|e| io_err("cannot rename into", out, e))?;
    }
    Ok(())
}

/// One unit of parallel work: one CPU of one buffer.
struct Job {
    buffer: usize,
    cpu_index: usize,
}

struct Shared<'a> {
    tf: &'a TraceFile,
    sink: ParquetSink,
    schemas: HashMap<u32, SchemaRef>,
    /// Relative output file per (buffer, event id).
    files: HashMap<(usize, u32), String>,
    type_offset: usize,
    type_size: usize,
    opts: &'a ConvertOptions,
    bytes_done: AtomicU64,
    failed: AtomicBool,
}

fn convert_into(tf: &TraceFile, dir: &Path, opts: &ConvertOptions) -> Result<ConvertResult> {
    let started = std::time::Instant::now();
    // Every event carries common_type at the same place; take it from any format.
    let (type_offset, type_size) = tf
        .events
        .values()
        .find_map(|f| f.field("common_type").map(|x| (x.offset, x.size)))
        .unwrap_or((0, 2));
    let schemas: HashMap<u32, SchemaRef> = tf.events.iter().map(|(id, f)| (*id, schema_for(f))).collect();
    let mut files = HashMap::new();
    for (bi, b) in tf.buffers.iter().enumerate() {
        for (id, f) in &tf.events {
            files.insert((bi, *id), event_file(&b.name, &f.system, &f.name));
        }
    }
    let shared = Shared {
        tf,
        sink: ParquetSink::new(dir),
        schemas,
        files,
        type_offset,
        type_size,
        opts,
        bytes_done: AtomicU64::new(0),
        failed: AtomicBool::new(false),
    };
    let jobs: Vec<Job> = tf
        .buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| !b.latency)
        .flat_map(|(bi, b)| (0..b.cpus.len()).map(move |ci| Job { buffer: bi, cpu_index: ci }))
        .collect();
    let total_bytes: u64 = tf.buffers.iter().flat_map(|b| b.cpus.iter().map(|c| c.size)).sum();
    let next = AtomicUsize::new(0);
    let stats: Mutex<Vec<CpuStats>> = Mutex::new(Vec::new());
    let errors: Mutex<Vec<TraceError>> = Mutex::new(Vec::new());
    let done = AtomicBool::new(false);
    let checksum = std::thread::scope(|s| {
        let sum = s.spawn(|| crate::metadata::sha256_file(&tf.src.path));
        let nthreads = opts.threads.max(1).min(jobs.len().max(1));
        if opts.progress && total_bytes > 64 << 20 {
            let (sh, d) = (&shared, &done);
            s.spawn(move || progress_bar(&sh.bytes_done, total_bytes, d));
        }
        let workers: Vec<_> = (0..nthreads)
            .map(|_| {
                s.spawn(|| {
                    let mut tables = Tables::default();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= jobs.len() || shared.failed.load(Ordering::Relaxed) {
                            break;
                        }
                        match decode_cpu(&shared, &jobs[i], &mut tables) {
                            Ok(st) => stats.lock().unwrap().push(st),
                            Err(e) => {
                                shared.failed.store(true, Ordering::Relaxed);
                                errors.lock().unwrap().push(e);
                            }
                        }
                    }
                    // Flush what is left, and gather per-table problem counts.
                    let mut counts = (0u64, 0u64, 0u64);
                    for ((bi, id), mut t) in tables.drain() {
                        counts.0 += t.short_records;
                        counts.1 += t.bad_dynamic;
                        counts.2 += t.invalid_utf8;
                        if t.rows > 0 {
                            let batch = t.take_batch();
                            if let Err(e) = shared.sink.write(&shared.files[&(bi, id)], &batch) {
                                errors.lock().unwrap().push(io_err("cannot write", dir, e));
                            }
                        }
                    }
                    counts
                })
            })
            .collect();
        let counts: Vec<(u64, u64, u64)> = workers.into_iter().map(|w| w.join().expect("decoder thread panicked")).collect();
        done.store(true, Ordering::Relaxed);
        (sum.join().expect("checksum thread panicked"), counts)
    });
    if let Some(e) = errors.into_inner().unwrap().into_iter().next() {
        return Err(e);
    }
    let (sha, counts) = checksum;
    let sha = sha.map_err(|e| TraceError::new(format!("cannot read for checksum: {}", e)))?;
    // Stable schema for SQL: every event of the top buffer's recorded systems gets a file.
    let top = tf.buffers.iter().position(|b| b.name.is_empty());
    if let Some(bi) = top {
        for (id, f) in &tf.events {
            if f.system != "ftrace" {
                shared.sink.ensure(&shared.files[&(bi, *id)], &shared.schemas[id]).map_err(|e| io_err("cannot write", dir, e))?;
            }
        }
    }
    let rows = shared.sink.finish().map_err(|e| io_err("cannot finish", dir, e))?;
    let mut stats = stats.into_inner().unwrap();
    stats.sort_by_key(|s| (s.buffer.clone(), s.cpu));
    let (short, bad_dyn, bad_utf8) = counts.iter().fold((0, 0, 0), |a, c| (a.0 + c.0, a.1 + c.1, a.2 + c.2));
    let md = crate::metadata::build(tf, &stats, &rows, &sha, short, bad_dyn, bad_utf8, started.elapsed().as_secs_f64());
    let data_loss = crate::metadata::loss_notes(&md);
    let tmp_md = dir.join("metadata.json.tmp");
    std::fs::write(&tmp_md, serde_json::to_vec_pretty(&md).unwrap()).map_err(|e| io_err("cannot write", &tmp_md, e))?;
    std::fs::rename(&tmp_md, dir.join("metadata.json")).map_err(|e| io_err("cannot write", dir, e))?;
    let events = stats.iter().map(|s| s.events).sum();
    Ok(ConvertResult { metadata: md, events, data_loss })
}

/// A decoding thread's tables, indexed by buffer then event id (a plain index: this
/// lookup runs once per record).
#[derive(Default)]
struct Tables(Vec<Vec<Option<Box<EventTable>>>>);

impl Tables {
    fn slot(&mut self, buffer: usize, id: u32) -> &mut Option<Box<EventTable>> {
        if self.0.len() <= buffer {
            self.0.resize_with(buffer + 1, Vec::new);
        }
        let v = &mut self.0[buffer];
        if v.len() <= id as usize {
            v.resize_with(id as usize + 1, || None);
        }
        &mut v[id as usize]
    }

    fn drain(self) -> impl Iterator<Item = ((usize, u32), Box<EventTable>)> {
        self.0.into_iter().enumerate().flat_map(|(b, v)| v.into_iter().enumerate().filter_map(move |(id, t)| t.map(|t| ((b, id as u32), t))))
    }
}

fn decode_cpu(sh: &Shared, job: &Job, tables: &mut Tables) -> Result<CpuStats> {
    let tf = sh.tf;
    let buffer = &tf.buffers[job.buffer];
    let cpu = &buffer.cpus[job.cpu_index];
    let rule = tf.timestamp_rule(buffer);
    let identity = rule.is_identity();
    let mut st = CpuStats::new(&buffer.name, cpu.cpu);
    let cpu_idx = cpu.cpu as usize;
    let cpu_i32 = cpu.cpu as i32;
    let endian = tf.endian;
    let hdr = tf.page_header;
    let mut last_ts: Option<u64> = None;
    let missing = for_each_page(&tf.src, endian, tf.codec, buffer, cpu, sh.opts.salvage, |page, off| {
        st.pages += 1;
        let mut unknown: BTreeMap<u32, u64> = BTreeMap::new();
        let res = decode_page(page, hdr, endian, |raw, data| {
            let ts = if identity { raw } else { rule.apply(raw, cpu_idx) };
            if data.len() < sh.type_offset + sh.type_size {
                st.short_records += 1;
                return;
            }
            let id = endian.read_uint(data, sh.type_offset, sh.type_size) as u32;
            let key = (job.buffer, id);
            let slot = tables.slot(job.buffer, id);
            if slot.is_none() {
                match (tf.events.get(&id), sh.schemas.get(&id)) {
                    (Some(f), Some(s)) => *slot = Some(Box::new(EventTable::new(f.clone(), s.clone(), endian))),
                    _ => {
                        *unknown.entry(id).or_default() += 1;
                        return;
                    }
                }
            }
            let table = slot.as_mut().unwrap();
            table.push(ts as i64, cpu_i32, data, &tf.cmdlines);
            st.events += 1;
            if last_ts.map_or(false, |l| ts < l) {
                st.out_of_order += 1;
            }
            last_ts = Some(ts);
            st.first_ts.get_or_insert(ts);
            st.last_ts = Some(ts);
            if table.rows >= sh.opts.batch_rows {
                let batch = table.take_batch();
                if let Err(e) = sh.sink.write(&sh.files[&key], &batch) {
                    st.write_error.get_or_insert_with(|| e.to_string());
                }
            }
        });
        for (id, n) in unknown {
            *st.unknown_ids.entry(id).or_default() += n;
        }
        match res {
            Ok(sum) => match sum.missed {
                Missed::None => {}
                Missed::Unknown => st.missed_pages_uncounted += 1,
                Missed::Count(n) => {
                    st.missed_pages += 1;
                    st.missed_events += n;
                }
            },
            Err(d) => {
                let at = off + d.at as u64;
                if !sh.opts.salvage {
                    return Err(TraceError::new(format!("damaged ring-buffer page: {}", d.what))
                        .at(at)
                        .cpu(cpu.cpu)
                        .fix("copy the file again; if it is the original, pass --salvage to skip damaged pages (the loss is recorded in metadata.json)"));
                }
                st.damaged_pages.push((at, d.what));
            }
        }
        sh.bytes_done.fetch_add(page.len() as u64, Ordering::Relaxed);
        if let Some(e) = &st.write_error {
            return Err(TraceError::new(format!("cannot write Parquet: {}", e)).fix("check free disk space and permissions of the output directory"));
        }
        Ok(())
    })?;
    st.missing_bytes = missing;
    Ok(st)
}

fn progress_bar(done: &AtomicU64, total: u64, finished: &AtomicBool) {
    let start = std::time::Instant::now();
    while !finished.load(Ordering::Relaxed) {
        std::thread::sleep(std::time::Duration::from_millis(250));
        let d = done.load(Ordering::Relaxed);
        let secs = start.elapsed().as_secs_f64().max(1e-3);
        eprint!("\r  converting: {:5.1}%  {:.0} MB/s   ", 100.0 * d as f64 / total.max(1) as f64, d as f64 / secs / 1e6);
    }
    eprint!("\r{:60}\r", "");
}

/// Where a trace's Parquet goes by default: `<dir of trace>/parquet`.
pub fn default_out(trace: &str) -> PathBuf {
    Path::new(trace).parent().unwrap_or(Path::new(".")).join("parquet")
}

/// Decodes every record of an in-memory trace into column tables without writing
/// anything; returns the number of records. The fuzz target's entry point: it must
/// return (Ok or a clean error) on any input, never panic or hang.
pub fn decode_only(bytes: &[u8], salvage: bool) -> Result<u64> {
    let tf = TraceFile::from_bytes(bytes.to_vec())?;
    let mut n = 0u64;
    for buffer in tf.buffers.iter().filter(|b| !b.latency) {
        let mut tables = Tables::default();
        for cpu in &buffer.cpus {
            for_each_page(&tf.src, tf.endian, tf.codec, buffer, cpu, salvage, |page, _| {
                let _ = decode_page(page, tf.page_header, tf.endian, |ts, data| {
                    if data.len() < 2 {
                        return;
                    }
                    let id = tf.endian.read_uint(data, 0, 2) as u32;
                    if let Some(f) = tf.events.get(&id) {
                        let slot = tables.slot(0, id);
                        let t = slot.get_or_insert_with(|| Box::new(EventTable::new(f.clone(), schema_for(f), tf.endian)));
                        t.push(ts as i64, cpu.cpu as i32, data, &tf.cmdlines);
                        if t.rows >= 4096 {
                            t.take_batch();
                        }
                        n += 1;
                    }
                });
                Ok(())
            })?;
        }
        for (_, mut t) in tables.drain() {
            t.take_batch();
        }
    }
    Ok(n)
}
