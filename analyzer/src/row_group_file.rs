//! One Parquet file written one row group per record batch. Knows Parquet and Arrow,
//! nothing of trace.dat or NVMe.
//!
//! Non-null integer columns go straight to parquet's typed column writers: the Arrow
//! buffer is the value slice, so no per-value index list, no level computation and no
//! gathered copy (what parquet's `ArrowWriter` does for every column, nulls or not; a
//! fifth of the converter's CPU time went there). Every other column (strings, lists,
//! binary, nullable ones) goes through parquet's own Arrow column writer. The file
//! itself is set up by `ArrowWriter` (Parquet schema from the Arrow one, the
//! `ARROW:schema` metadata pyarrow reads back), so readers see the same file as before.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowRowGroupWriterFactory};
use parquet::arrow::{ArrowSchemaConverter, ArrowWriter};
use parquet::data_type::{Int32Type as ParquetInt32, Int64Type as ParquetInt64};
use parquet::errors::Result;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedFileWriter, SerializedRowGroupWriter};
use std::fs::File;
use std::sync::Arc;

/// How an Arrow column reaches its Parquet column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    /// INT64 column: the buffer as is (u64 as its bits, as parquet's Arrow writer stores it).
    Int64,
    /// INT32 column of 32-bit values: the buffer as is (u32 as its bits).
    Int32,
    /// INT32 column of 8- or 16-bit values: widened first.
    Narrow,
    /// parquet's Arrow column writer.
    Arrow,
}

fn route_of(f: &Field) -> Route {
    if f.is_nullable() {
        return Route::Arrow;
    }
    match f.data_type() {
        DataType::Int64 | DataType::UInt64 => Route::Int64,
        DataType::Int32 | DataType::UInt32 => Route::Int32,
        DataType::Int8 | DataType::Int16 | DataType::UInt8 | DataType::UInt16 => Route::Narrow,
        _ => Route::Arrow,
    }
}

pub struct RowGroupFile {
    file: SerializedFileWriter<File>,
    routes: Vec<Route>,
    /// The Arrow-routed columns, and a factory of writers for them alone (made on a
    /// schema of those columns, so no writer, and no zstd context, is made for the others).
    arrow_schema: SchemaRef,
    arrow_writers: Option<ArrowRowGroupWriterFactory>,
    /// Scratch for widened 8- and 16-bit columns.
    widened: Vec<i32>,
}

impl RowGroupFile {
    pub fn try_new(f: File, schema: SchemaRef, props: WriterProperties) -> Result<RowGroupFile> {
        let (file, _) = ArrowWriter::try_new(f, schema.clone(), Some(props.clone()))?.into_serialized_writer()?;
        let routes: Vec<Route> = schema.fields().iter().map(|f| route_of(f)).collect();
        let arrow_fields: Vec<_> = schema.fields().iter().zip(&routes).filter(|(_, r)| **r == Route::Arrow).map(|(f, _)| f.clone()).collect();
        let arrow_schema: SchemaRef = Arc::new(Schema::new(arrow_fields));
        let arrow_writers = if arrow_schema.fields().is_empty() {
            None
        } else {
            // The factory takes its Parquet schema from a file writer: one that writes nowhere.
            let descr = ArrowSchemaConverter::new().convert(&arrow_schema)?;
            let shadow = SerializedFileWriter::new(std::io::sink(), descr.root_schema_ptr(), Arc::new(props))?;
            Some(ArrowRowGroupWriterFactory::new(&shadow, arrow_schema.clone()))
        };
        Ok(RowGroupFile { file, routes, arrow_schema, arrow_writers, widened: Vec::new() })
    }

    /// Writes `batch` as one row group (none when it is empty).
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let index = self.file.flushed_row_groups().len();
        let mut arrow_writers = match &self.arrow_writers {
            Some(f) => f.create_column_writers(index)?,
            None => Vec::new(),
        }
        .into_iter();
        let mut arrow_fields = self.arrow_schema.fields().iter();
        let mut rg = self.file.next_row_group()?;
        for (col, route) in batch.columns().iter().zip(&self.routes) {
            if *route == Route::Arrow {
                let (field, mut w) = (arrow_fields.next().expect("a field per Arrow column"), arrow_writers.next().expect("a writer per Arrow column"));
                for leaf in compute_leaves(field, col)? {
                    w.write(&leaf)?;
                }
                w.close()?.append_to_row_group(&mut rg)?;
            } else {
                write_integers(&mut rg, col, *route, &mut self.widened)?;
            }
        }
        rg.close()?;
        Ok(())
    }

    pub fn close(self) -> Result<()> {
        self.file.close()?;
        Ok(())
    }
}

fn write_integers(rg: &mut SerializedRowGroupWriter<'_, File>, col: &ArrayRef, route: Route, widened: &mut Vec<i32>) -> Result<()> {
    let mut w = rg.next_column()?.expect("a Parquet column per Arrow column");
    match route {
        Route::Int64 => {
            let v: &[i64] = match col.data_type() {
                DataType::Int64 => col.as_primitive::<Int64Type>().values(),
                _ => col.as_primitive::<UInt64Type>().values().inner().typed_data::<i64>(),
            };
            w.typed::<ParquetInt64>().write_batch(v, None, None)?;
        }
        Route::Int32 => {
            let v: &[i32] = match col.data_type() {
                DataType::Int32 => col.as_primitive::<Int32Type>().values(),
                _ => col.as_primitive::<UInt32Type>().values().inner().typed_data::<i32>(),
            };
            w.typed::<ParquetInt32>().write_batch(v, None, None)?;
        }
        _ => {
            widened.clear();
            match col.data_type() {
                DataType::Int8 => widened.extend(col.as_primitive::<Int8Type>().values().iter().map(|&x| x as i32)),
                DataType::Int16 => widened.extend(col.as_primitive::<Int16Type>().values().iter().map(|&x| x as i32)),
                DataType::UInt8 => widened.extend(col.as_primitive::<UInt8Type>().values().iter().map(|&x| x as i32)),
                _ => widened.extend(col.as_primitive::<UInt16Type>().values().iter().map(|&x| x as i32)),
            }
            w.typed::<ParquetInt32>().write_batch(widened, None, None)?;
        }
    }
    w.close()
}
