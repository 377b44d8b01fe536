//! Writing record batches to `<dir>/<system>/<event>.parquet` (instances under
//! `<dir>/instances/<name>/`): zstd, dictionary-encoded strings, one writer per file,
//! shared by the decoding threads. Knows Parquet, nothing of trace.dat or NVMe.

use arrow_array::RecordBatch;
use arrow_schema::{DataType, SchemaRef};
use parquet::basic::Encoding;
use parquet::schema::types::ColumnPath;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

type Writer = Arc<Mutex<Option<(ArrowWriter<File>, u64)>>>;

pub struct ParquetSink {
    dir: PathBuf,
    props: WriterProperties,
    writers: Mutex<HashMap<String, Writer>>,
}

/// The relative path of an event's file.
pub fn event_file(buffer: &str, system: &str, event: &str) -> String {
    let safe = |s: &str| s.replace(['/', '\\'], "_");
    if buffer.is_empty() {
        format!("{}/{}.parquet", safe(system), safe(event))
    } else {
        format!("instances/{}/{}/{}.parquet", safe(buffer), safe(system), safe(event))
    }
}

/// Dictionary encoding only for strings (numbers compress well with zstd and hashing
/// every ts would cost more than the whole decode); ts, monotonic per CPU, as deltas.
fn props_for(base: &WriterProperties, schema: &SchemaRef) -> WriterProperties {
    let mut b = base.clone().into_builder();
    for f in schema.fields() {
        let path = ColumnPath::from(f.name().as_str());
        match f.data_type() {
            DataType::Dictionary(_, _) | DataType::Utf8 => b = b.set_column_dictionary_enabled(path, true),
            _ if f.name() == "ts" => b = b.set_column_encoding(path, Encoding::DELTA_BINARY_PACKED),
            _ => {}
        }
    }
    b.build()
}

impl ParquetSink {
    pub fn new(dir: &Path) -> ParquetSink {
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(1).unwrap()))
            .set_dictionary_enabled(false)
            .set_max_row_group_row_count(Some(1 << 20))
            .set_created_by(format!("ntscope {}", env!("CARGO_PKG_VERSION")))
            .build();
        ParquetSink { dir: dir.to_path_buf(), props, writers: Mutex::new(HashMap::new()) }
    }

    fn writer(&self, rel: &str, schema: &SchemaRef) -> std::io::Result<Writer> {
        let mut map = self.writers.lock().unwrap();
        if let Some(w) = map.get(rel) {
            return Ok(w.clone());
        }
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let file = File::create(&path)?;
        let w = ArrowWriter::try_new(file, schema.clone(), Some(props_for(&self.props, schema))).map_err(std::io::Error::other)?;
        let w: Writer = Arc::new(Mutex::new(Some((w, 0))));
        map.insert(rel.to_string(), w.clone());
        Ok(w)
    }

    /// Makes sure the file exists even when no batch comes (stable schema for SQL).
    pub fn ensure(&self, rel: &str, schema: &SchemaRef) -> std::io::Result<()> {
        self.writer(rel, schema).map(|_| ())
    }

    /// Encodes a batch; different files are encoded in parallel by their callers.
    pub fn write(&self, rel: &str, batch: &RecordBatch) -> std::io::Result<()> {
        let w = self.writer(rel, batch.schema_ref())?;
        let mut g = w.lock().unwrap();
        let (writer, rows) = g.as_mut().expect("writer used after close");
        writer.write(batch).map_err(std::io::Error::other)?;
        *rows += batch.num_rows() as u64;
        Ok(())
    }

    /// Closes every file; returns rows written per relative path.
    pub fn finish(self) -> std::io::Result<HashMap<String, u64>> {
        let mut out = HashMap::new();
        for (rel, w) in self.writers.into_inner().unwrap() {
            let (writer, rows) = w.lock().unwrap().take().expect("writer closed twice");
            writer.close().map_err(std::io::Error::other)?;
            out.insert(rel, rows);
        }
        Ok(out)
    }
}
