//! Helpers shared by the integration tests: temp dirs, converting bytes, reading back.
#![allow(dead_code)]

use arrow_array::RecordBatch;
use ntscope::convert::{convert, ConvertOptions, ConvertResult};
use ntscope::tracedat::error::TraceError;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::path::{Path, PathBuf};

pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("ntscope-test-{}-{}", tag, std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn opts(salvage: bool) -> ConvertOptions {
    ConvertOptions { salvage, threads: 2, batch_rows: 1000, progress: false }
}

/// Writes `bytes` as trace.dat in `dir` and converts it to `dir/parquet`.
pub fn convert_bytes(dir: &Path, bytes: &[u8], salvage: bool) -> Result<ConvertResult, TraceError> {
    let trace = dir.join("trace.dat");
    std::fs::write(&trace, bytes).unwrap();
    convert(trace.to_str().unwrap(), &dir.join("parquet"), &opts(salvage))
}

/// All rows of a Parquet file as one batch.
pub fn read_parquet(path: &Path) -> RecordBatch {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e));
    let b = ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
    let schema = b.schema().clone();
    let batches: Vec<RecordBatch> = b.build().unwrap().map(|b| b.unwrap()).collect();
    arrow_select::concat::concat_batches(&schema, &batches).unwrap()
}
