//! The trace's kallsyms and printk formats as Parquet beside the event files, so that SQL
//! can turn an address into a symbol or a string (sql/08_symbols.sql):
//! - `kallsyms.parquet`: one row per line of the kallsyms section, in file order:
//!   `address` (uint64), `type` (the symbol type letter), `name`, `module` (null for the
//!   kernel's own symbols);
//! - `printk_formats.parquet`: one row per line of the printk-formats section, in file
//!   order: `address` (uint64), `format` (the text between the quotes, escapes as the
//!   kernel wrote them: `\n`, `\t`, `\"`).
//! Both are written for every trace, empty when the file has no such section.

use crate::tracedat::symbols::TraceSymbols;
use arrow_array::{ArrayRef, RecordBatch, StringArray, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::path::Path;
use std::sync::Arc;

pub const KALLSYMS_FILE: &str = "kallsyms.parquet";
pub const PRINTK_FILE: &str = "printk_formats.parquet";

fn write(path: &Path, batch: RecordBatch) -> std::io::Result<()> {
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1).expect("zstd level 1 exists")))
        .set_created_by(format!("ntscope {}", env!("CARGO_PKG_VERSION")))
        .build();
    let file = std::fs::File::create(path)?;
    let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props)).map_err(std::io::Error::other)?;
    w.write(&batch).map_err(std::io::Error::other)?;
    w.close().map_err(std::io::Error::other)?;
    Ok(())
}

/// Writes both files into `dir` (a directory this conversion created).
pub fn write_symbol_files(dir: &Path, symbols: &TraceSymbols) -> std::io::Result<()> {
    let k = &symbols.kallsyms.symbols;
    let schema = Arc::new(Schema::new(vec![
        Field::new("address", DataType::UInt64, false),
        Field::new("type", DataType::Utf8, false),
        Field::new("name", DataType::Utf8, false),
        Field::new("module", DataType::Utf8, true),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from_iter_values(k.iter().map(|s| s.address))),
        Arc::new(StringArray::from_iter_values(k.iter().map(|s| s.kind.to_string()))),
        Arc::new(StringArray::from_iter_values(k.iter().map(|s| s.name.as_str()))),
        Arc::new(StringArray::from_iter(k.iter().map(|s| s.module.as_deref()))),
    ];
    write(&dir.join(KALLSYMS_FILE), RecordBatch::try_new(schema, cols).map_err(std::io::Error::other)?)?;
    let p = &symbols.printk.formats;
    let schema = Arc::new(Schema::new(vec![Field::new("address", DataType::UInt64, false), Field::new("format", DataType::Utf8, false)]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from_iter_values(p.iter().map(|f| f.address))),
        Arc::new(StringArray::from_iter_values(p.iter().map(|f| f.format.as_str()))),
    ];
    write(&dir.join(PRINTK_FILE), RecordBatch::try_new(schema, cols).map_err(std::io::Error::other)?)
}
