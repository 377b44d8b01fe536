//! trace.dat -> a directory of Parquet files + metadata.json.
//!
//! Threads take one CPU of one buffer at a time (a job), decode it a block of pages at a
//! time into per-type column tables, and hand full batches to the Parquet sink, the last
//! ones when the job ends; a thread with no CPU left to decode encodes batches instead (see
//! `parquet_out`, which writes each file's rows in job order: the same trace gives the same
//! bytes). The output is built under a temporary name and renamed into place (see `out_dir`).

use crate::columns::{EventTable, ExtractCounts};
use crate::layout::Layout;
use crate::metadata::CpuStats;
use crate::out_dir;
use crate::parquet_out::ParquetSink;
use crate::tracedat::error::{Result, TraceError};
use crate::tracedat::file::TraceFile;
use crate::tracedat::pages::{for_each_block, PageReader};
use crate::tracedat::ringbuf::{decode_page, Missed};
use arrow_array::RecordBatch;
use serde_json::Value;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

#[derive(Clone, Debug)]
pub struct ConvertOptions {
    /// Skip damaged pages and truncated CPU data instead of failing (loss recorded).
    pub salvage: bool,
    pub threads: usize,
    /// Rows per record batch handed to the writer (longer batches are split into row
    /// groups of `parquet_out::ROW_GROUP_ROWS`).
    pub batch_rows: usize,
    /// Draw a progress bar on stderr (only when it is a terminal).
    pub progress: bool,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions {
            salvage: false,
            threads: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            // One batch is one row group of its file (see `parquet_out`).
            batch_rows: crate::parquet_out::ROW_GROUP_ROWS,
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
    /// Notes about what lost no record (see `metadata::warning_notes`).
    pub warnings: Vec<String>,
}

fn io_err(what: &str, path: &Path, e: impl std::fmt::Display) -> TraceError {
    TraceError::new(format!("{} {}: {}", what, path.display(), e)).fix("check that the output directory is writable and the disk has space")
}

/// Converts `trace` into `out` (created or replaced atomically; see `out_dir` for what
/// `out` may be).
pub fn convert(trace: &str, out: &Path, opts: &ConvertOptions) -> Result<ConvertResult> {
    let tf = TraceFile::open(trace)?;
    let target = out_dir::prepare(Path::new(trace), out)?;
    match convert_into(&tf, &target.tmp, opts) {
        Ok(r) => {
            if let Err(e) = target.commit() {
                target.abandon();
                return Err(e);
            }
            Ok(r)
        }
        Err(e) => {
            target.abandon();
            Err(e.file(trace))
        }
    }
}

/// One unit of parallel work: one CPU of one buffer.
#[derive(Clone, Copy)]
struct Job {
    buffer: usize,
    cpu_index: usize,
}

/// What every decoding thread reads.
struct DecodeCtx<'a> {
    tf: &'a TraceFile,
    layout: &'a Layout,
    /// Where `common_type` is in every record.
    type_offset: usize,
    type_size: usize,
    salvage: bool,
    batch_rows: usize,
    /// Bytes of CPU data consumed (progress).
    bytes_done: &'a AtomicU64,
    /// Set when any thread failed: the others stop at their next block.
    stop: &'a AtomicBool,
}

/// The table of one event type in one thread.
enum Slot {
    Unset,
    Table(Box<EventTable>),
    /// No format for this id, or the type was skipped (see `Layout`).
    NotConverted,
}

/// Ids above this are looked up in a map (kernel ids are 16-bit; a file may claim more).
const DIRECT_IDS: usize = 1 << 16;

/// A decoding thread's state, reused from one CPU to the next.
#[derive(Default)]
struct Worker {
    reader: PageReader,
    /// Per buffer, per event id.
    tables: Vec<Vec<Slot>>,
    far: HashMap<(usize, u32), Slot>,
    /// Ids with records staged in the current block.
    touched: Vec<u32>,
    counts: ExtractCounts,
}

impl Worker {
    #[inline]
    fn slot(&mut self, buffer: usize, id: u32) -> &mut Slot {
        if (id as usize) < DIRECT_IDS {
            if self.tables.len() <= buffer {
                self.tables.resize_with(buffer + 1, Vec::new);
            }
            let v = &mut self.tables[buffer];
            if v.len() <= id as usize {
                v.resize_with(id as usize + 1, || Slot::Unset);
            }
            &mut v[id as usize]
        } else {
            self.far.entry((buffer, id)).or_insert(Slot::Unset)
        }
    }

    /// Every table with rows left, as (buffer, id, batch); counts gathered.
    fn drain(&mut self) -> Vec<(usize, u32, RecordBatch)> {
        let mut out = Vec::new();
        let tables = std::mem::take(&mut self.tables).into_iter().enumerate().flat_map(|(b, v)| v.into_iter().enumerate().map(move |(id, s)| ((b, id as u32), s)));
        for ((b, id), slot) in tables.chain(std::mem::take(&mut self.far)) {
            if let Slot::Table(mut t) = slot {
                add_counts(&mut self.counts, &t.counts);
                if t.rows > 0 {
                    out.push((b, id, t.take_batch()));
                }
            }
        }
        out
    }
}

fn add_counts(a: &mut ExtractCounts, b: &ExtractCounts) {
    a.short_records += b.short_records;
    a.bad_dynamic += b.bad_dynamic;
    a.invalid_utf8 += b.invalid_utf8;
    a.printk_missing += b.printk_missing;
}

fn convert_into(tf: &TraceFile, dir: &Path, opts: &ConvertOptions) -> Result<ConvertResult> {
    let started = std::time::Instant::now();
    let layout = Layout::new(tf);
    let threads = opts.threads.max(1);
    let sink = ParquetSink::new(dir, layout.files.iter().map(|f| (f.rel.clone(), f.schema.clone())).collect(), 2 * threads + 2).map_err(|e| io_err("cannot use", dir, e))?;
    let jobs: Vec<Job> = tf
        .buffers
        .iter()
        .enumerate()
        .filter(|(bi, b)| !b.latency && !layout.skipped_buffers.contains_key(bi))
        .flat_map(|(bi, b)| (0..b.cpus.len()).map(move |ci| Job { buffer: bi, cpu_index: ci }))
        .collect();
    let total_bytes: u64 = jobs.iter().map(|j| tf.buffers[j.buffer].cpus[j.cpu_index].size).sum();
    let (type_offset, type_size) = type_field(tf);
    let bytes_done = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let ctx = DecodeCtx { tf, layout: &layout, type_offset, type_size, salvage: opts.salvage, batch_rows: opts.batch_rows.max(1), bytes_done: &bytes_done, stop: &stop };
    let next = AtomicUsize::new(0);
    let decoding = AtomicUsize::new(threads);
    let stats: Mutex<Vec<CpuStats>> = Mutex::new(Vec::new());
    let errors: Mutex<Vec<TraceError>> = Mutex::new(Vec::new());
    let counts: Mutex<ExtractCounts> = Mutex::new(ExtractCounts::default());
    let finished = AtomicBool::new(false);
    let (sha, symbol_files) = std::thread::scope(|s| {
        let sum = s.spawn(|| crate::metadata::sha256_source(&tf.src));
        let symbol_files = s.spawn(|| crate::symbol_files::write_symbol_files(dir, &tf.symbols));
        if opts.progress && total_bytes > 64 << 20 {
            let (d, f) = (&bytes_done, &finished);
            s.spawn(move || crate::progress::bytes_bar(d, total_bytes, f));
        }
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                let mut w = Worker::default();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= jobs.len() || stop.load(Ordering::Relaxed) {
                        break;
                    }
                    // the files this job wrote to: each is told when the job is done
                    let mut touched: Vec<usize> = Vec::new();
                    let mut emit = |b: usize, id: u32, batch: RecordBatch| {
                        if let Some(f) = layout.file_of(b, id) {
                            if !touched.contains(&f) {
                                touched.push(f);
                            }
                            sink.submit(f, i, batch);
                        }
                    };
                    let decoded = decode_cpu(&ctx, jobs[i], &mut w, &mut emit, &|| sink.failed());
                    // The job's rows end with it (a table is not carried to the next CPU): a
                    // batch then holds one job's rows whichever thread decoded which CPU, so
                    // the files' bytes do not depend on the threads' timing.
                    for (b, id, batch) in w.drain() {
                        emit(b, id, batch);
                    }
                    for f in touched {
                        sink.job_done(f, i);
                    }
                    match decoded {
                        Ok(st) => stats.lock().unwrap().push(st),
                        Err(e) => {
                            stop.store(true, Ordering::Relaxed);
                            errors.lock().unwrap().push(e);
                        }
                    }
                }
                add_counts(&mut counts.lock().unwrap(), &w.counts);
                if decoding.fetch_sub(1, Ordering::AcqRel) == 1 {
                    sink.producers_done();
                }
                // Nothing left to decode: help encode.
                sink.work();
                })
            })
            .collect();
        for w in workers {
            w.join().expect("decoder thread panicked");
        }
        finished.store(true, Ordering::Relaxed);
        (sum.join().expect("checksum thread panicked"), symbol_files.join().expect("symbol files thread panicked"))
    });
    if let Some(e) = errors.into_inner().unwrap().into_iter().next() {
        return Err(e);
    }
    if let Some(e) = sink.failed() {
        return Err(io_err("cannot write Parquet under", dir, e));
    }
    let sha = sha.map_err(|e| TraceError::new(format!("cannot read for checksum: {}", e)))?;
    symbol_files.map_err(|e| io_err("cannot write the kallsyms / printk formats Parquet under", dir, e))?;
    // Stable schema for SQL: every event of the top buffer's recorded systems gets a file.
    for f in layout.files.iter().enumerate().filter(|(_, f)| f.ensure) {
        sink.ensure(f.0);
    }
    let rows: HashMap<String, u64> = sink.finish(threads).map_err(|e| io_err("cannot finish", dir, e))?.into_iter().collect();
    let mut stats = stats.into_inner().unwrap();
    stats.sort_by_key(|s| (s.buffer.clone(), s.cpu));
    let counts = counts.into_inner().unwrap();
    let md = crate::metadata::build(tf, &layout, &stats, &rows, &sha, &counts, started.elapsed().as_secs_f64());
    let data_loss = crate::metadata::loss_notes(&md);
    let warnings = crate::metadata::warning_notes(&md);
    let tmp_md = dir.join("metadata.json.tmp");
    std::fs::write(&tmp_md, serde_json::to_vec_pretty(&md).expect("metadata serializes")).map_err(|e| io_err("cannot write", &tmp_md, e))?;
    std::fs::rename(&tmp_md, dir.join("metadata.json")).map_err(|e| io_err("cannot write", dir, e))?;
    let events = stats.iter().map(|s| s.events).sum();
    Ok(ConvertResult { metadata: md, events, data_loss, warnings })
}

/// Where `common_type` is: the same in every format; take it from any.
fn type_field(tf: &TraceFile) -> (usize, usize) {
    tf.events.values().find_map(|f| f.field("common_type").map(|x| (x.offset, x.size))).filter(|&(_, s)| matches!(s, 1 | 2 | 4 | 8)).unwrap_or((0, 2))
}

/// Decodes one CPU of one buffer; full batches go to `emit(buffer, id, batch)`.
fn decode_cpu(
    ctx: &DecodeCtx,
    job: Job,
    w: &mut Worker,
    emit: &mut dyn FnMut(usize, u32, RecordBatch),
    write_failed: &dyn Fn() -> Option<String>,
) -> Result<CpuStats> {
    let tf = ctx.tf;
    let buffer = &tf.buffers[job.buffer];
    let cpu = &buffer.cpus[job.cpu_index];
    let rule = tf.timestamp_rule(buffer);
    let identity = rule.is_identity();
    let mut st = CpuStats::new(&buffer.name, cpu.cpu);
    let cpu_idx = cpu.cpu as usize;
    let cpu_i32 = cpu.cpu as i32;
    let endian = tf.endian;
    let hdr = tf.page_header;
    let (type_offset, type_size) = (ctx.type_offset, ctx.type_size);
    let type_end = type_offset + type_size;
    let ps = buffer.page_size;
    let mut last_ts: Option<u64> = None;
    let mut reader = std::mem::take(&mut w.reader);
    let result = for_each_block(&tf.src, endian, tf.codec, buffer, cpu, ctx.salvage, &mut reader, |block| {
        if ctx.stop.load(Ordering::Relaxed) {
            return Err(TraceError::new("stopped: another thread failed"));
        }
        // Records staged from a block abandoned by an error point into other bytes.
        for id in std::mem::take(&mut w.touched) {
            if let Slot::Table(t) = w.slot(job.buffer, id) {
                t.discard_staged();
            }
        }
        for (pi, page) in block.pages().enumerate() {
            st.pages += 1;
            let base = pi * ps;
            let res = decode_page(page, hdr, endian, |raw, start, len| {
                let ts = if identity { raw } else { rule.apply(raw, cpu_idx) };
                if len < type_end {
                    st.short_records += 1;
                    return;
                }
                let id = endian.read_uint(page, start + type_offset, type_size) as u32;
                let slot = w.slot(job.buffer, id);
                if let Slot::Unset = slot {
                    *slot = match (tf.events.get(&id), ctx.layout.schema(job.buffer, id)) {
                        (Some(f), Some(schema)) => Slot::Table(Box::new(EventTable::new(f, schema.clone(), endian, ctx.batch_rows, &tf.symbols, tf.long_size))),
                        _ => Slot::NotConverted,
                    };
                }
                let Slot::Table(table) = slot else {
                    *st.unknown_ids.entry(id).or_default() += 1;
                    return;
                };
                if !table.stage(ts as i64, base + start, len) {
                    return;
                }
                if table.staged() == 1 {
                    w.touched.push(id);
                }
                st.events += 1;
                if last_ts.is_some_and(|l| ts < l) {
                    st.out_of_order += 1;
                }
                last_ts = Some(ts);
                st.first_ts.get_or_insert(ts);
            });
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
                    let at = block.page_offset(pi) + d.at as u64;
                    if !ctx.salvage {
                        return Err(TraceError::new(format!("damaged ring-buffer page: {}", d.what))
                            .at(at)
                            .cpu(cpu.cpu)
                            .fix("copy the file again; if it is the original, pass --salvage to skip damaged pages (the loss is recorded in metadata.json)"));
                    }
                    st.damaged_pages.push((at, d.what));
                }
            }
        }
        // Extract this block's records a column at a time, cut full batches.
        for id in std::mem::take(&mut w.touched) {
            if let Slot::Table(t) = w.slot(job.buffer, id) {
                t.extract(block.data, cpu_i32, &tf.cmdlines);
                if t.rows >= ctx.batch_rows {
                    emit(job.buffer, id, t.take_batch());
                }
            }
        }
        ctx.bytes_done.fetch_add(block.file_bytes, Ordering::Relaxed);
        if let Some(e) = write_failed() {
            return Err(TraceError::new(format!("cannot write Parquet: {}", e)).fix("check free disk space and permissions of the output directory"));
        }
        Ok(())
    });
    w.reader = reader;
    st.last_ts = last_ts;
    // Records with no format or of a skipped type are counted apart.
    let skipped: Vec<u32> = st.unknown_ids.keys().copied().filter(|id| ctx.layout.skipped_types.contains_key(id)).collect();
    for id in skipped {
        let n = st.unknown_ids.remove(&id).unwrap_or(0);
        *st.skipped_ids.entry(id).or_default() += n;
    }
    st.missing_bytes = result?;
    Ok(st)
}

/// Where a trace's Parquet goes by default: `<dir of trace>/parquet`.
pub fn default_out(trace: &str) -> PathBuf {
    Path::new(trace).parent().unwrap_or(Path::new(".")).join("parquet")
}

/// Decodes every record of an in-memory trace into column tables without writing
/// anything; returns the number of records. The fuzz target's entry point and the
/// benchmarks' `--decode-only`: it must return (Ok or a clean error) on any input,
/// never panic or hang.
pub fn decode_only(bytes: Vec<u8>, salvage: bool) -> Result<u64> {
    decode_trace(TraceFile::from_bytes(bytes)?, salvage)
}

/// `decode_only` on a file, read as convert reads it.
pub fn decode_only_file(path: &str) -> Result<u64> {
    decode_trace(TraceFile::open(path)?, false).map_err(|e| e.file(path))
}

fn decode_trace(tf: TraceFile, salvage: bool) -> Result<u64> {
    let layout = Layout::new(&tf);
    let (type_offset, type_size) = type_field(&tf);
    let (bytes_done, stop) = (AtomicU64::new(0), AtomicBool::new(false));
    let ctx = DecodeCtx { tf: &tf, layout: &layout, type_offset, type_size, salvage, batch_rows: 1 << 16, bytes_done: &bytes_done, stop: &stop };
    let mut w = Worker::default();
    let mut n = 0u64;
    for (bi, b) in tf.buffers.iter().enumerate().filter(|(bi, b)| !b.latency && !layout.skipped_buffers.contains_key(bi)) {
        for ci in 0..b.cpus.len() {
            let st = decode_cpu(&ctx, Job { buffer: bi, cpu_index: ci }, &mut w, &mut |_, _, _| {}, &|| None)?;
            n += st.events;
        }
    }
    w.drain();
    Ok(n)
}
