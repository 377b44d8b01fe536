//! The trace's kallsyms and printk formats as Parquet beside the event files, so that SQL
//! can turn an address into a symbol or a string (sql/core/symbols.sql):
//! - `kallsyms.parquet`: one row per line of the kallsyms section, in file order:
//!   `address` (uint64), `type` (the symbol type letter), `name`, `module` (null for the
//!   kernel's own symbols);
//! - `printk_formats.parquet`: one row per line of the printk-formats section, in file
//!   order: `address` (uint64), `format` (the text between the quotes, escapes as the
//!   kernel wrote them: `\n`, `\t`, `\"`).
//! Both are written for every trace, empty when the file has no such section.

use crate::tracedat::symbols::TraceSymbols;
use arrow_array::{ArrayRef, RecordBatch, StringArray, UInt64Array};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use std::path::Path;
use std::sync::Arc;

pub const KALLSYMS_FILE: &str = "kallsyms.parquet";
pub const PRINTK_FILE: &str = "printk_formats.parquet";

/// Settings for these small tables: zstd level 1, no statistics, dictionaries only for
/// the columns that repeat (a symbol's type and module), not for names and addresses.
fn properties(dictionary: &[&str]) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1).expect("zstd level 1 exists")))
        .set_statistics_enabled(EnabledStatistics::None)
        .set_dictionary_enabled(false)
        .set_created_by(format!("ntscope {}", env!("CARGO_PKG_VERSION")));
    for c in dictionary {
        b = b.set_column_dictionary_enabled(ColumnPath::from(*c), true);
    }
    b.build()
}

fn write(path: &Path, batch: RecordBatch, props: WriterProperties) -> std::io::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props)).map_err(std::io::Error::other)?;
    w.write(&batch).map_err(std::io::Error::other)?;
    w.close().map_err(std::io::Error::other)?;
    Ok(())
}

/// A string column from names stored one after another (`ends[i]`: where value i ends);
/// null where a value is empty when `empty_is_null`.
fn strings(text: &str, ends: &[u32], empty_is_null: bool) -> ArrayRef {
    let offsets: Vec<i32> = std::iter::once(0).chain(ends.iter().map(|&e| e as i32)).collect();
    let nulls = empty_is_null.then(|| NullBuffer::from_iter(offsets.windows(2).map(|w| w[1] > w[0])));
    Arc::new(StringArray::new(OffsetBuffer::new(ScalarBuffer::from(offsets)), Buffer::from_vec(text.as_bytes().to_vec()), nulls))
}

/// Writes both files into `dir` (a directory this conversion created).
pub fn write_symbol_files(dir: &Path, symbols: &TraceSymbols) -> std::io::Result<()> {
    let k = symbols.kallsyms();
    let schema = Arc::new(Schema::new(vec![
        Field::new("address", DataType::UInt64, false),
        Field::new("type", DataType::Utf8, false),
        Field::new("name", DataType::Utf8, false),
        Field::new("module", DataType::Utf8, true),
    ]));
    let kinds: Vec<u32> = (1..=k.len() as u32).collect();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from(k.addresses.clone())),
        Arc::new(StringArray::new(OffsetBuffer::new(ScalarBuffer::from(std::iter::once(0).chain(kinds.iter().map(|&e| e as i32)).collect::<Vec<i32>>())), Buffer::from_vec(k.kinds.clone()), None)),
        strings(&k.names, &k.name_ends, false),
        strings(&k.modules, &k.module_ends, true),
    ];
    let batch = RecordBatch::try_new(schema, cols).map_err(std::io::Error::other)?;
    write(&dir.join(KALLSYMS_FILE), batch, properties(&["type", "module"]))?;
    let p = &symbols.printk.formats;
    let schema = Arc::new(Schema::new(vec![Field::new("address", DataType::UInt64, false), Field::new("format", DataType::Utf8, false)]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from_iter_values(p.iter().map(|f| f.address))),
        Arc::new(StringArray::from_iter_values(p.iter().map(|f| f.format.as_str()))),
    ];
    write(&dir.join(PRINTK_FILE), RecordBatch::try_new(schema, cols).map_err(std::io::Error::other)?, properties(&[]))
}
