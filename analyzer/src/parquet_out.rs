//! Writing record batches to `<dir>/<system>/<event>.parquet` (instances under
//! `<dir>/instances/<name>/`), one writer per file, shared by all threads. Knows Parquet,
//! nothing of trace.dat or NVMe. Each batch becomes a row group (`row_group_file`), so
//! producers cut batches of at most `ROW_GROUP_ROWS` rows; longer ones are split.
//!
//! Batches are handed over with `submit` and encoded by whichever thread is free (the
//! decoders themselves when the queue is full, so memory stays bounded). Each file keeps
//! its batches in a FIFO and a batch is taken from it only under the file's writer lock,
//! so a file receives its batches in the order they were submitted.
//!
//! Each batch belongs to a job (one CPU of one buffer), and a file's rows come out in job
//! order whichever thread decoded what when: each job's batches go to a part file of its own
//! (`<file>.part-<job>`), closed when the job says it is done (`job_done`), and `finish`
//! puts each file's parts together in job order (the column chunks copied, `parquet_concat`;
//! a lone part is renamed). So converting a trace twice gives the same bytes.

use crate::row_group_file::{RowGroupFile, ZstdPool};
use arrow_array::RecordBatch;
use arrow_schema::{DataType, SchemaRef};
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use std::collections::{BTreeMap, HashMap, VecDeque};
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

/// Rows per row group. Each batch a producer hands over becomes one row group, so this
/// is also the most rows a decoder's table holds per event type before it is cut: with
/// the batches waiting in the queue it bounds the converter's memory. Against 65,536 rows,
/// with parquet's ArrowWriter gathering batches into row groups and holding their pages
/// until complete: the real high-rate capture 0.27 -> 0.24 s and 163 -> 119 MB
/// (122,880, DuckDB's own, 127 MB at 10 M events); files 1.5% larger, which DuckDB reads
/// as fast. With one batch per row group 16,384 and 65,536 rows are as fast on that
/// capture, 84 and 176 MB peak against 122 MB, but 16,384 makes the 10 M-event copy's
/// files 24 -> 31 MB.
pub const ROW_GROUP_ROWS: usize = 32_768;

/// Writer settings, measured on a real capture:
/// - zstd level 1: a third of the size of lz4 for about the same CPU time;
/// - no statistics but `ts` min/max per row group (enough to skip row groups by time;
///   per-page and per-column statistics cost more CPU than the rest of the encoding);
/// - no Parquet dictionaries made by parquet (it hashes every row's string): the string
///   columns are already Arrow dictionaries, written as Parquet ones by `dict_column`
///   (the setting applies to the columns parquet's Arrow writer still writes);
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
        .set_created_by(format!("ntscope {}", env!("CARGO_PKG_VERSION")))
        // the ntscope version that wrote the file (the crate's version is ntscope's: a test holds them equal)
        .set_key_value_metadata(Some(vec![KeyValue::new("ntscope_version".to_string(), env!("CARGO_PKG_VERSION").to_string())]));
    for f in schema.fields() {
        if f.name() == "ts" && f.data_type() == &DataType::Int64 {
            let path = ColumnPath::from("ts");
            b = b.set_column_encoding(path.clone(), Encoding::DELTA_BINARY_PACKED).set_column_statistics_enabled(path, EnabledStatistics::Chunk);
        }
    }
    b.build()
}

/// What waits in a file's FIFO: a batch of a job, or the end of a job's batches.
enum Item {
    Batch(usize, RecordBatch),
    JobDone(usize),
}

/// One output file: what waits for it in order, and its parts.
struct FileSlot {
    rel: String,
    schema: SchemaRef,
    pending: Mutex<VecDeque<Item>>,
    writer: Mutex<FileParts>,
}

/// A file's parts: the open one of each job still writing to it, the closed ones by job
/// (relative path, rows), and whether the file must exist without rows.
#[derive(Default)]
struct FileParts {
    open: HashMap<usize, (Box<RowGroupFile>, u64)>,
    done: BTreeMap<usize, (String, u64)>,
    ensure: bool,
}

/// The relative path of a file's part for one job.
fn part_rel(rel: &str, job: usize) -> String {
    format!("{}.part-{}", rel, job)
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
    zstd: ZstdPool,
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
                .map(|(rel, schema)| FileSlot { rel, schema, pending: Mutex::new(VecDeque::new()), writer: Mutex::new(FileParts::default()) })
                .collect(),
            queue: Mutex::new(VecDeque::new()),
            wake: Condvar::new(),
            queued: AtomicUsize::new(0),
            max_queued: max_queued.max(1),
            producers_done: AtomicBool::new(false),
            error: Mutex::new(None),
            zstd: ZstdPool::default(),
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

    /// A Parquet writer of the file's schema at `rel` (created here).
    fn writer(&self, file: usize, rel: &str) -> std::io::Result<RowGroupFile> {
        let slot = &self.files[file];
        let f = self.create(rel)?;
        RowGroupFile::try_new(f, slot.schema.clone(), writer_properties(&slot.schema)).map_err(std::io::Error::other)
    }

    /// Takes the oldest item waiting for `file` and acts on it: a batch is written to its
    /// job's part (created on its first batch), a job's end closes that part. `w` is the
    /// file's locked state, so items leave the FIFO in order.
    fn write_next(&self, file: usize, mut w: MutexGuard<'_, FileParts>) -> std::io::Result<()> {
        let Some(item) = self.files[file].pending.lock().unwrap().pop_front() else { return Ok(()) };
        match item {
            Item::Batch(job, batch) => {
                if !w.open.contains_key(&job) {
                    let part = self.writer(file, &part_rel(&self.files[file].rel, job))?;
                    w.open.insert(job, (Box::new(part), 0));
                }
                let (writer, rows) = w.open.get_mut(&job).expect("opened above");
                for start in (0..batch.num_rows()).step_by(ROW_GROUP_ROWS) {
                    writer.write(&batch.slice(start, ROW_GROUP_ROWS.min(batch.num_rows() - start)), &self.zstd).map_err(std::io::Error::other)?;
                }
                *rows += batch.num_rows() as u64;
            }
            Item::JobDone(job) => {
                if let Some((writer, rows)) = w.open.remove(&job) {
                    writer.close().map_err(std::io::Error::other)?;
                    w.done.insert(job, (part_rel(&self.files[file].rel, job), rows));
                }
            }
        }
        Ok(())
    }

    fn record_error(&self, e: std::io::Error) {
        let mut g = self.error.lock().unwrap();
        if g.is_none() {
            *g = Some(e);
        }
    }

    /// Makes sure the file exists even when no batch comes (stable schema for SQL): `finish`
    /// writes it without rows.
    pub fn ensure(&self, file: usize) {
        self.files[file].writer.lock().unwrap().ensure = true;
    }

    /// Queues a batch of job `job` for `file`. When the queue is full, the caller encodes
    /// queued batches itself until there is room.
    pub fn submit(&self, file: usize, job: usize, batch: RecordBatch) {
        self.push(file, Item::Batch(job, batch));
    }

    /// Job `job` will send `file` no more batches: its part is closed once they are written.
    pub fn job_done(&self, file: usize, job: usize) {
        self.push(file, Item::JobDone(job));
    }

    fn push(&self, file: usize, item: Item) {
        self.files[file].pending.lock().unwrap().push_back(item);
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

    /// A file from its parts in job order (every part closed): a lone part renamed, several
    /// put together and removed, none an empty file when `ensure` asked for one. Returns
    /// (relative path, rows), or None when the file has neither parts nor `ensure`.
    fn assemble(&self, file: usize, parts: FileParts) -> std::io::Result<Option<(String, u64)>> {
        let rel = &self.files[file].rel;
        if !parts.open.is_empty() {
            return Err(std::io::Error::other(format!("{}: a job's part was never closed", rel)));
        }
        let rows: u64 = parts.done.values().map(|(_, r)| r).sum();
        let paths: Vec<PathBuf> = parts.done.values().map(|(p, _)| self.dir.join(p)).collect();
        match paths.len() {
            0 if !parts.ensure => return Ok(None),
            0 => self.writer(file, rel)?.close().map_err(std::io::Error::other)?,
            1 => std::fs::rename(&paths[0], self.dir.join(rel))?,
            _ => {
                // the parts' directory was checked when they were created: the file goes beside them
                let out = self.dir.join(rel);
                crate::parquet_concat::concat_files(&paths, &out).map_err(std::io::Error::other)?;
                for p in &paths {
                    std::fs::remove_file(p)?;
                }
            }
        }
        Ok(Some((rel.clone(), rows)))
    }

    /// Encodes what is left and puts every file together from its parts, on `threads`
    /// threads; returns rows written per relative path.
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
                            let parts = std::mem::take(&mut *slot.writer.lock().unwrap());
                            if let Some(written) = self.assemble(i, parts)? {
                                out.push(written);
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::builder::{ListBuilder, StringDictionaryBuilder, UInt8Builder};
    use arrow_array::types::Int32Type;
    use arrow_array::{ArrayRef, Int16Array, Int32Array, Int64Array, Int8Array, UInt16Array, UInt32Array, UInt64Array, UInt8Array};
    use arrow_schema::{Field, Schema};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use std::sync::Arc;

    /// Every integer width and sign at its edges, nullable and repeating dictionary strings,
    /// lists of 8-, 32- and 64-bit integers (empty ones among them), in one batch longer
    /// than a row group: read back, the same rows in the same order, cut into row groups of
    /// ROW_GROUP_ROWS; every column but the string ones as parquet's ArrowWriter writes it.
    #[test]
    fn every_column_kind_round_trips_across_row_groups() {
        let n = 2 * ROW_GROUP_ROWS + 123;
        let i = |r: usize| r as i64 - n as i64 / 2;
        let cols: Vec<(&str, ArrayRef, bool)> = vec![
            ("ts", Arc::new(Int64Array::from_iter_values((0..n).map(|r| i(r) * 1_000_003))), false),
            ("s8", Arc::new(Int8Array::from_iter_values((0..n).map(|r| [i8::MIN, -1, 0, i8::MAX][r % 4]))), false),
            ("s16", Arc::new(Int16Array::from_iter_values((0..n).map(|r| [i16::MIN, -1, i16::MAX][r % 3]))), false),
            ("s32", Arc::new(Int32Array::from_iter_values((0..n).map(|r| i(r) as i32 * 40_000))), false),
            ("u8", Arc::new(UInt8Array::from_iter_values((0..n).map(|r| (r % 256) as u8))), false),
            ("u16", Arc::new(UInt16Array::from_iter_values((0..n).map(|r| u16::MAX - (r % 7) as u16))), false),
            ("u32", Arc::new(UInt32Array::from_iter_values((0..n).map(|r| u32::MAX - r as u32))), false),
            ("u64", Arc::new(UInt64Array::from_iter_values((0..n).map(|r| u64::MAX - r as u64))), false),
            ("maybe", Arc::new(Int32Array::from_iter((0..n).map(|r| (r % 5 != 0).then_some(r as i32)))), true),
            ("name", {
                let mut b = StringDictionaryBuilder::<Int32Type>::new();
                (0..n).for_each(|r| if r % 11 == 0 { b.append_null() } else { b.append_value(["fio", "kworker/0:1H"][r / 1000 % 2]) });
                Arc::new(b.finish())
            }, true),
            // a string field that never held a value: no dictionary page, an empty PLAIN page,
            // the bytes ArrowWriter writes too (checked below with the other columns)
            ("none", {
                let mut b = StringDictionaryBuilder::<Int32Type>::new();
                (0..n).for_each(|_| b.append_null());
                Arc::new(b.finish())
            }, true),
            // keyed by pid as `comm` is: one name under two keys, one key never used
            ("dup", Arc::new(arrow_array::DictionaryArray::<Int32Type>::try_new(
                Int32Array::from_iter_values((0..n).map(|r| [0, 2, 1, 2][r % 4])),
                Arc::new(arrow_array::StringArray::from(vec!["fio", "kworker/0:1H", "fio", "unused"])),
            ).unwrap()), false),
            ("list", {
                let mut b = ListBuilder::new(UInt8Builder::new()).with_field(Arc::new(Field::new("item", DataType::UInt8, false)));
                (0..n).for_each(|r| { b.values().append_slice(&vec![r as u8; r % 4]); b.append(true) });
                Arc::new(b.finish())
            }, false),
            ("list64", {
                let mut b = ListBuilder::new(arrow_array::builder::Int64Builder::new()).with_field(Arc::new(Field::new("item", DataType::Int64, false)));
                (0..n).for_each(|r| { b.values().append_slice(&vec![i(r) << 40; (r + 1) % 3]); b.append(true) });
                Arc::new(b.finish())
            }, false),
            ("list32", {
                let mut b = ListBuilder::new(arrow_array::builder::UInt32Builder::new()).with_field(Arc::new(Field::new("item", DataType::UInt32, false)));
                (0..n).for_each(|r| { b.values().append_slice(&vec![u32::MAX - r as u32; r % 5]); b.append(true) });
                Arc::new(b.finish())
            }, false),
        ];
        let schema = Arc::new(Schema::new(cols.iter().map(|(name, a, null)| Field::new(*name, a.data_type().clone(), *null)).collect::<Vec<_>>()));
        let batch = RecordBatch::try_new(schema.clone(), cols.into_iter().map(|c| c.1).collect()).unwrap();
        let dir = std::env::temp_dir().join(format!("ntscope-parquet-out-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let sink = ParquetSink::new(&dir, vec![("sys/ev.parquet".into(), schema.clone())], 4).unwrap();
        sink.submit(0, 0, batch.slice(0, 10));
        sink.submit(0, 0, batch.slice(10, n - 10));
        sink.job_done(0, 0);
        assert_eq!(sink.finish(1).unwrap(), vec![("sys/ev.parquet".to_string(), n as u64)]);
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(dir.join("sys/ev.parquet")).unwrap()).unwrap();
        let groups: Vec<i64> = reader.metadata().row_groups().iter().map(|g| g.num_rows()).collect();
        assert_eq!(groups, vec![10, ROW_GROUP_ROWS as i64, ROW_GROUP_ROWS as i64, (n - 10 - 2 * ROW_GROUP_ROWS) as i64]);
        assert_eq!(reader.schema().fields(), schema.fields(), "the Arrow schema is stored with the file");
        assert_eq!(reader.schema().metadata().get("ntscope_version").map(String::as_str), Some(env!("CARGO_PKG_VERSION")),
                   "the file names the ntscope version that wrote it");
        let back: Vec<RecordBatch> = reader.build().unwrap().map(|b| b.unwrap()).collect();
        let back = arrow_select::concat::concat_batches(&schema, &back).unwrap();
        assert_eq!(back, batch);
        // Byte for byte the file parquet's own ArrowWriter makes of the same row groups
        // (the typed path stores each value as the Arrow path would: widths, signs, bits).
        let mut reference = Vec::new();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut reference, schema.clone(), Some(writer_properties(&schema))).unwrap();
        for (start, len) in [(0, 10), (10, ROW_GROUP_ROWS), (10 + ROW_GROUP_ROWS, ROW_GROUP_ROWS), (10 + 2 * ROW_GROUP_ROWS, n - 10 - 2 * ROW_GROUP_ROWS)] {
            w.write(&batch.slice(start, len)).unwrap();
            w.flush().unwrap();
        }
        w.close().unwrap();
        // Every column but the string one chunk for chunk (its dictionary is written from the
        // Arrow one: dict_column); that one dictionary-encoded, no string per row in its pages.
        let ours = std::fs::read(dir.join("sys/ev.parquet")).unwrap();
        let meta = |b: &Vec<u8>| parquet::file::metadata::ParquetMetaDataReader::new().parse_and_finish(&bytes::Bytes::from(b.clone())).unwrap();
        let (m_ours, m_ref) = (meta(&ours), meta(&reference));
        assert_eq!(m_ours.num_row_groups(), m_ref.num_row_groups());
        for (g_ours, g_ref) in m_ours.row_groups().iter().zip(m_ref.row_groups()) {
            for (c_ours, c_ref) in g_ours.columns().iter().zip(g_ref.columns()) {
                let name = c_ours.column_path().string();
                let (a, b) = (c_ours.byte_range(), c_ref.byte_range());
                let chunk = |f: &Vec<u8>, (o, l): (u64, u64)| f[o as usize..(o + l) as usize].to_vec();
                if name == "name" || name == "dup" {
                    assert!(c_ours.dictionary_page_offset().is_some(), "the string column has a dictionary page");
                    let (u_ours, u_ref) = (c_ours.uncompressed_size(), c_ref.uncompressed_size());
                    assert!(g_ours.num_rows() < 100 || u_ours < u_ref / 4, "{name}: {u_ours} bytes dictionary-encoded against {u_ref} plain");
                } else {
                    assert!(chunk(&ours, a) == chunk(&reference, b), "column {name}: not the bytes ArrowWriter writes");
                }
            }
        }
        // Each dictionary page holds each value once (pyarrow misreads a page with repeats):
        // fio, kworker/0:1H and the unused one.
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let file = SerializedFileReader::new(File::open(dir.join("sys/ev.parquet")).unwrap()).unwrap();
        let dup = schema.index_of("dup").unwrap();
        for g in 0..file.num_row_groups() {
            let mut pages = file.get_row_group(g).unwrap().get_column_page_reader(dup).unwrap();
            match pages.get_next_page().unwrap().unwrap() {
                parquet::column::page::Page::DictionaryPage { num_values, .. } => assert_eq!(num_values, 3, "row group {g}"),
                p => panic!("row group {g}: a {:?} page first, not the dictionary", p.page_type()),
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
