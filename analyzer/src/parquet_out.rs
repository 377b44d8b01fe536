//! Writing record batches to `<dir>/<system>/<event>.parquet` (instances under
//! `<dir>/instances/<name>/`), one writer per file, shared by all threads. Knows Parquet,
//! nothing of trace.dat or NVMe.
//!
//! Batches are handed over with `submit` and encoded by whichever thread is free (the
//! decoders themselves when the queue is full, so memory stays bounded). Each file keeps
//! its batches in a FIFO and a batch is taken from it only under the file's writer lock,
//! so a file receives its batches in the order they were submitted.

use arrow_array::RecordBatch;
use arrow_schema::{DataType, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use std::collections::VecDeque;
use std::fs::File;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// The relative path of an event's file. The names were checked by `names` (no `/`,
/// no `..`); `ParquetSink` checks the joined path again before creating anything.
pub fn event_file(buffer: &str, system: &str, event: &str) -> String {
    if buffer.is_empty() {
        format!("{}/{}.parquet", system, event)
    } else {
        format!("instances/{}/{}/{}.parquet", buffer, system, event)
    }
}

/// Rows per row group. A writer holds a row group's pages in memory until it is
/// complete, for every column of every event type, so this bounds the converter's
/// memory (about 0.5 MB per int64 column). 122,880 rows (DuckDB's own row group)
/// measured 110 MB peak at 2.5 M events and 127 MB at 10 M; 65,536 rows 74 and 84 MB,
/// for 1% more instructions. (A heap profile shows nothing accumulating: the peak is
/// the moment the row groups of all event types fill together.) 32,768 rows: the real
/// high-rate capture 0.27 -> 0.24 s, 163 -> 119 MB; its first touches of that memory
/// (page faults) were a fifth of the CPU time; files 1.5% larger, DuckDB reads them
/// as fast (analyzer/bench/README.md, session 21). 16,384 rows: no faster.
pub const ROW_GROUP_ROWS: usize = 32_768;

/// Writer settings, measured on a real capture (analyzer/README.md, analyzer/bench/README.md):
/// - zstd level 1: a third of the size of lz4 for about the same CPU time;
/// - no statistics but `ts` min/max per row group (enough to skip row groups by time;
///   per-page and per-column statistics cost more CPU than the rest of the encoding);
/// - no Parquet dictionaries: the Arrow columns are already dictionary-typed, and
///   zstd over plain values gives the same file size without hashing every row again;
/// - `ts` delta-encoded (monotonic per CPU): a third of its plain size;
/// - values written in whole batches (`write_batch_size`), pages cut by size only.
fn writer_properties(schema: &SchemaRef) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1).expect("zstd level 1 exists")))
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::None)
        .set_write_batch_size(1 << 16)
        .set_data_page_row_count_limit(ROW_GROUP_ROWS)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_created_by(format!("ntscope {}", env!("CARGO_PKG_VERSION")));
    for f in schema.fields() {
        if f.name() == "ts" && f.data_type() == &DataType::Int64 {
            let path = ColumnPath::from("ts");
            b = b.set_column_encoding(path.clone(), Encoding::DELTA_BINARY_PACKED).set_column_statistics_enabled(path, EnabledStatistics::Chunk);
        }
    }
    b.build()
}

/// One output file: its batches waiting in order, and its writer once created.
struct FileSlot {
    rel: String,
    schema: SchemaRef,
    pending: Mutex<VecDeque<RecordBatch>>,
    writer: Mutex<WriterState>,
}

#[derive(Default)]
enum WriterState {
    #[default]
    NotCreated,
    Open(Box<ArrowWriter<File>>, u64),
    Closed,
}

pub struct ParquetSink {
    dir: PathBuf,
    /// `dir` with symlinks resolved: every file must be created under it.
    real_dir: PathBuf,
    files: Vec<FileSlot>,
    /// File indexes with a batch waiting, one entry per batch.
    queue: Mutex<VecDeque<usize>>,
    wake: Condvar,
    queued: AtomicUsize,
    max_queued: usize,
    producers_done: AtomicBool,
    error: Mutex<Option<std::io::Error>>,
}

impl ParquetSink {
    /// `files`: (relative path, schema) per output file; batches refer to files by index.
    /// At most `max_queued` batches wait for encoding at any time.
    pub fn new(dir: &Path, files: Vec<(String, SchemaRef)>, max_queued: usize) -> std::io::Result<ParquetSink> {
        let real_dir = std::fs::canonicalize(dir)?;
        Ok(ParquetSink {
            dir: dir.to_path_buf(),
            real_dir,
            files: files
                .into_iter()
                .map(|(rel, schema)| FileSlot { rel, schema, pending: Mutex::new(VecDeque::new()), writer: Mutex::new(WriterState::NotCreated) })
                .collect(),
            queue: Mutex::new(VecDeque::new()),
            wake: Condvar::new(),
            queued: AtomicUsize::new(0),
            max_queued: max_queued.max(1),
            producers_done: AtomicBool::new(false),
            error: Mutex::new(None),
        })
    }

    pub fn rel(&self, file: usize) -> &str {
        &self.files[file].rel
    }

    /// Creates a file's parent directories and the file itself, after proving that the
    /// path stays inside the output directory.
    fn create(&self, rel: &str) -> std::io::Result<File> {
        let relp = Path::new(rel);
        if relp.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(std::io::Error::other(format!("refusing to write {:?}: not a plain relative path", rel)));
        }
        let path = self.dir.join(relp);
        let parent = path.parent().expect("event files have a parent");
        std::fs::create_dir_all(parent)?;
        let real_parent = std::fs::canonicalize(parent)?;
        if !real_parent.starts_with(&self.real_dir) {
            return Err(std::io::Error::other(format!("refusing to write {:?}: it resolves to {}, outside the output directory", rel, real_parent.display())));
        }
        std::fs::OpenOptions::new().write(true).create_new(true).open(real_parent.join(path.file_name().unwrap()))
    }

    /// Creates the file's writer on first use (`w` is its locked state).
    fn open(&self, file: usize, w: &mut WriterState) -> std::io::Result<()> {
        if let WriterState::NotCreated = *w {
            let slot = &self.files[file];
            let f = self.create(&slot.rel)?;
            let props = writer_properties(&slot.schema);
            *w = WriterState::Open(Box::new(ArrowWriter::try_new(f, slot.schema.clone(), Some(props)).map_err(std::io::Error::other)?), 0);
        }
        Ok(())
    }

    /// Writes the oldest batch waiting for `file`; `w` is the file's locked writer, so
    /// batches leave the FIFO in order.
    fn write_next(&self, file: usize, mut w: MutexGuard<'_, WriterState>) -> std::io::Result<()> {
        self.open(file, &mut w)?;
        let Some(batch) = self.files[file].pending.lock().unwrap().pop_front() else { return Ok(()) };
        match &mut *w {
            WriterState::Open(writer, rows) => {
                writer.write(&batch).map_err(std::io::Error::other)?;
                *rows += batch.num_rows() as u64;
                Ok(())
            }
            _ => Err(std::io::Error::other("writer used after close")),
        }
    }

    fn record_error(&self, e: std::io::Error) {
        let mut g = self.error.lock().unwrap();
        if g.is_none() {
            *g = Some(e);
        }
    }

    /// Makes sure the file exists even when no batch comes (stable schema for SQL).
    pub fn ensure(&self, file: usize) -> std::io::Result<()> {
        self.open(file, &mut self.files[file].writer.lock().unwrap())
    }

    /// Queues a batch for `file`. When the queue is full, the caller encodes queued
    /// batches itself until there is room.
    pub fn submit(&self, file: usize, batch: RecordBatch) {
        self.files[file].pending.lock().unwrap().push_back(batch);
        self.queue.lock().unwrap().push_back(file);
        self.queued.fetch_add(1, Ordering::AcqRel);
        self.wake.notify_one();
        while self.queued.load(Ordering::Acquire) > self.max_queued {
            if !self.encode_one(false) {
                break;
            }
        }
    }

    /// Encodes one queued batch; returns false when the queue was empty (and, with
    /// `wait`, producers are done). The oldest batch of a file no other thread is
    /// writing is taken first; only when every waiting file is busy does the thread
    /// wait for one.
    fn encode_one(&self, wait: bool) -> bool {
        let (file, guard) = {
            let mut q = self.queue.lock().unwrap();
            loop {
                if !q.is_empty() {
                    let free = q.iter().enumerate().find_map(|(i, &f)| self.files[f].writer.try_lock().ok().map(|g| (i, f, g)));
                    match free {
                        Some((i, f, g)) => {
                            q.remove(i);
                            break (f, g);
                        }
                        None => {
                            let f = q.pop_front().expect("not empty");
                            drop(q);
                            break (f, self.files[f].writer.lock().unwrap());
                        }
                    }
                }
                if !wait || self.producers_done.load(Ordering::Acquire) {
                    return false;
                }
                q = self.wake.wait(q).unwrap();
            }
        };
        if let Err(e) = self.write_next(file, guard) {
            self.record_error(e);
        }
        self.queued.fetch_sub(1, Ordering::AcqRel);
        true
    }

    /// Encodes queued batches until producers are done and the queue is empty.
    pub fn work(&self) {
        while self.encode_one(true) {}
    }

    /// Tells idle workers that no more batches will come.
    pub fn producers_done(&self) {
        let _q = self.queue.lock().unwrap();
        self.producers_done.store(true, Ordering::Release);
        self.wake.notify_all();
    }

    /// The first write error, if any.
    pub fn failed(&self) -> Option<String> {
        self.error.lock().unwrap().as_ref().map(|e| e.to_string())
    }

    /// Encodes what is left and closes every file, on `threads` threads; returns rows
    /// written per relative path.
    pub fn finish(self, threads: usize) -> std::io::Result<Vec<(String, u64)>> {
        while self.encode_one(false) {}
        if let Some(e) = self.error.lock().unwrap().take() {
            return Err(e);
        }
        let next = AtomicUsize::new(0);
        let results: Vec<std::io::Result<Vec<(String, u64)>>> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads.max(1))
                .map(|_| {
                    s.spawn(|| {
                        let mut out = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(slot) = self.files.get(i) else { break };
                            let state = std::mem::replace(&mut *slot.writer.lock().unwrap(), WriterState::Closed);
                            if let WriterState::Open(writer, rows) = state {
                                writer.close().map_err(std::io::Error::other)?;
                                out.push((slot.rel.clone(), rows));
                            }
                        }
                        Ok(out)
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().expect("writer thread panicked")).collect()
        });
        let mut out = Vec::new();
        for r in results {
            out.extend(r?);
        }
        Ok(out)
    }
}
