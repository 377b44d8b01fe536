//! Parquet files of one schema -> one Parquet file holding their row groups in order, the
//! column chunks copied as they are (no decoding, no re-encoding). Knows Parquet only.
//!
//! Why: `ntscope analyze` writes report/io_stages.parquet (tens of millions of rows on a
//! real run) as parts of I/Os, each part sorted by DuckDB on its own so that its sort fits
//! in memory, and the report's contract is one file. DuckDB writing the parts' rows again
//! would cost what the parts saved; here each part's bytes are copied once.
//!
//! Page indexes and bloom filters are kept. The output keeps the parts' `created_by` (the
//! writer that encoded the pages: readers key their workarounds for writer bugs on it) and
//! their key-value metadata; every part must have the same schema and the same key-value
//! metadata, or nothing is written.

use parquet::bloom_filter::Sbbf;
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::{KeyValue, PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use std::fmt;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug)]
pub struct ConcatError(pub String);

impl fmt::Display for ConcatError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConcatError {}

struct Part {
    path: PathBuf,
    file: File,
    meta: ParquetMetaData,
}

fn open_part(path: &Path) -> Result<Part, ConcatError> {
    let err = |e: &dyn fmt::Display| ConcatError(format!("{}: {}", path.display(), e));
    let file = File::open(path).map_err(|e| err(&e))?;
    let meta = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Optional)
        .parse_and_finish(&file)
        .map_err(|e| err(&format!("not a readable Parquet file: {}", e)))?;
    Ok(Part { path: path.to_path_buf(), file, meta })
}

fn key_values(m: &ParquetMetaData) -> Vec<KeyValue> {
    m.file_metadata().key_value_metadata().cloned().unwrap_or_default()
}

/// The parts' row groups, in the order given, into `out` (created or replaced; the caller
/// gives a temporary name and renames it). Returns the rows written.
pub fn concat_files(parts: &[PathBuf], out: &Path) -> Result<u64, ConcatError> {
    let parts = parts.iter().map(|p| open_part(p)).collect::<Result<Vec<_>, _>>()?;
    let first = parts.first().ok_or_else(|| ConcatError("no input files".into()))?;
    let schema = first.meta.file_metadata().schema_descr();
    for p in &parts[1..] {
        if p.meta.file_metadata().schema_descr().root_schema() != schema.root_schema() {
            return Err(ConcatError(format!(
                "{} has another schema than {}: only parts of one query can be put together",
                p.path.display(), first.path.display())));
        }
        if key_values(&p.meta) != key_values(&first.meta) {
            return Err(ConcatError(format!(
                "{} has other key-value metadata than {}", p.path.display(), first.path.display())));
        }
    }
    let mut props = WriterProperties::builder().set_key_value_metadata(Some(key_values(&first.meta)).filter(|kv| !kv.is_empty()));
    if let Some(by) = first.meta.file_metadata().created_by() {
        props = props.set_created_by(by.to_string());
    }
    let write_err = |e: &dyn fmt::Display| ConcatError(format!("writing {}: {}", out.display(), e));
    let file = File::create(out).map_err(|e| write_err(&e))?;
    let mut writer = SerializedFileWriter::new(BufWriter::with_capacity(1 << 20, file), schema.root_schema_ptr(), Arc::new(props.build()))
        .map_err(|e| write_err(&e))?;
    let mut rows = 0u64;
    for p in &parts {
        let index = p.meta.page_index();
        for (g, group) in p.meta.row_groups().iter().enumerate() {
            let mut out_group = writer.next_row_group().map_err(|e| write_err(&e))?;
            for (c, chunk) in group.columns().iter().enumerate() {
                let close = ColumnCloseResult {
                    bytes_written: chunk.compressed_size() as u64,
                    rows_written: group.num_rows() as u64,
                    metadata: chunk.clone(),
                    // DuckDB writes bloom filters for its dictionary-encoded columns: kept
                    bloom_filter: Sbbf::read_from_column_chunk(chunk, &p.file)
                        .map_err(|e| ConcatError(format!("{} (row group {}, column {}): bloom filter: {}", p.path.display(), g, c, e)))?,
                    column_index: index.and_then(|i| i.column_index(g, c)).cloned(),
                    offset_index: index.and_then(|i| i.offset_index(g, c)).cloned(),
                };
                out_group.append_column(&p.file, close)
                    .map_err(|e| ConcatError(format!("{} (row group {}, column {}): {}", p.path.display(), g, c, e)))?;
            }
            out_group.close().map_err(|e| write_err(&e))?;
            rows += group.num_rows() as u64;
        }
    }
    writer.close().map_err(|e| write_err(&e))?;
    Ok(rows)
}
