//! One Parquet file written one row group per record batch. Knows Parquet and Arrow,
//! nothing of trace.dat or NVMe.
//!
//! Non-null integer columns go straight to parquet's typed column writers: the Arrow
//! buffer is the value slice, so no per-value index list, no level computation and no
//! gathered copy (what parquet's `ArrowWriter` does for every column, nulls or not; a
//! fifth of the converter's CPU time went there). Lists of integers (`u8 cdw10[24]`, not
//! null) likewise, their levels made from the list offsets. String columns (Arrow
//! dictionaries) become Parquet dictionary pages and index pages made from the Arrow
//! dictionary as it is (`dict_column`). Binary and nullable columns go through parquet's
//! own Arrow column writer. The file itself is set up by `ArrowWriter` (Parquet schema from
//! the Arrow one, the `ARROW:schema` metadata pyarrow reads back), so readers see the schema
//! `ArrowWriter` gives; every column but the strings is byte for byte what `ArrowWriter` writes.
//!
//! The integer columns' pages are zstd-compressed here, with a context taken from a
//! pool (`ZstdPool`, one context per writer at work) instead of the two (compression
//! and decompression) parquet makes for every column chunk: making one runs `cpuid`,
//! which traps to the hypervisor in a VM, and a fresh context sets up its tables again
//! (together 6% of the converter's CPU on the real lab capture). The bytes are the
//! same: the same zstd call at the same level.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use crate::dict_column::{dictionary_chunk, is_string_dictionary};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowRowGroupWriterFactory};
use parquet::arrow::{ArrowSchemaConverter, ArrowWriter};
use parquet::basic::{Compression, ZstdLevel};
use parquet::column::page::{CompressedPage, Page, PageWriteSpec, PageWriter};
use parquet::column::writer::{get_column_writer, get_typed_column_writer_mut, ColumnWriter};
use parquet::data_type::{Int32Type as ParquetInt32, Int64Type as ParquetInt64};
use parquet::errors::{ParquetError, Result};
use parquet::file::properties::{WriterProperties, WriterPropertiesPtr, WriterVersion};
use parquet::file::writer::{SerializedFileWriter, SerializedPageWriter, SerializedRowGroupWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;
use std::fs::File;
use std::sync::{Arc, Mutex};

/// zstd compression contexts shared by the files of one conversion: a writer takes
/// one for a row group and gives it back.
#[derive(Default)]
pub struct ZstdPool(Mutex<Vec<(i32, zstd::bulk::Compressor<'static>)>>);

impl ZstdPool {
    fn take(&self, level: i32) -> Result<zstd::bulk::Compressor<'static>> {
        let mut pool = self.0.lock().unwrap();
        match pool.iter().position(|(l, _)| *l == level) {
            Some(i) => Ok(pool.swap_remove(i).1),
            None => zstd::bulk::Compressor::new(level).map_err(|e| ParquetError::External(Box::new(e))),
        }
    }

    fn give(&self, level: i32, c: zstd::bulk::Compressor<'static>) {
        self.0.lock().unwrap().push((level, c));
    }
}

/// Compresses each page with `zstd`, then hands it to parquet's page writer (the column
/// writer itself is told the column is uncompressed).
struct ZstdPages<'a> {
    inner: SerializedPageWriter<'a, Vec<u8>>,
    zstd: &'a mut zstd::bulk::Compressor<'static>,
}

/// One page's bytes compressed with `zstd` (a context from the pool).
pub(crate) fn zstd_page(zstd: &mut zstd::bulk::Compressor<'static>, buf: &[u8]) -> Result<bytes::Bytes> {
    let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(buf.len()));
    zstd.compress_to_buffer(buf, &mut out).map_err(|e| ParquetError::External(Box::new(e)))?;
    Ok(out.into())
}

impl PageWriter for ZstdPages<'_> {
    fn write_page(&mut self, page: CompressedPage) -> Result<PageWriteSpec> {
        let uncompressed_size = page.uncompressed_size();
        let compressed = match page.compressed_page() {
            Page::DataPage { buf, num_values, encoding, def_level_encoding, rep_level_encoding, statistics } => Page::DataPage {
                buf: zstd_page(self.zstd, buf)?,
                num_values: *num_values,
                encoding: *encoding,
                def_level_encoding: *def_level_encoding,
                rep_level_encoding: *rep_level_encoding,
                statistics: statistics.clone(),
            },
            Page::DictionaryPage { buf, num_values, encoding, is_sorted } => {
                Page::DictionaryPage { buf: zstd_page(self.zstd, buf)?, num_values: *num_values, encoding: *encoding, is_sorted: *is_sorted }
            }
            // Version 2 pages keep their levels uncompressed; the writer is set to version 1.
            Page::DataPageV2 { .. } => return Err(ParquetError::General("data page v2 is not written here".into())),
        };
        self.inner.write_page(CompressedPage::new(compressed, uncompressed_size))
    }

    fn close(&mut self) -> Result<()> {
        self.inner.close()
    }
}

/// How an Arrow column reaches its Parquet column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    /// INT64 column: the buffer as is (u64 as its bits, as parquet's Arrow writer stores it).
    Int64,
    /// INT32 column: 32-bit values as the buffer is (u32 as its bits), 8- and 16-bit ones widened.
    Int32,
    /// String dictionary: its dictionary and keys as Parquet's (`dict_column`).
    Dict,
    /// List of integers, the list and its items not null (`u8 cdw10[24]`): levels from the
    /// offsets, the items as one slice (8- and 16-bit ones widened).
    List,
    /// parquet's Arrow column writer.
    Arrow,
}

fn route_of(f: &Field) -> Route {
    if is_string_dictionary(f.data_type()) {
        return Route::Dict;
    }
    if f.is_nullable() {
        return Route::Arrow;
    }
    match f.data_type() {
        DataType::List(item) if !item.is_nullable() && item.data_type().is_integer() => Route::List,
        DataType::Int64 | DataType::UInt64 => Route::Int64,
        DataType::Int32 | DataType::UInt32 | DataType::Int8 | DataType::Int16 | DataType::UInt8 | DataType::UInt16 => Route::Int32,
        _ => Route::Arrow,
    }
}

pub struct RowGroupFile {
    file: SerializedFileWriter<File>,
    routes: Vec<Route>,
    /// Per column: its Parquet leaf, and the zstd level when its pages are compressed here.
    leaves: Vec<(ColumnDescPtr, Option<ZstdLevel>)>,
    /// The writer settings with compression off, for the columns compressed here.
    uncompressed: WriterPropertiesPtr,
    /// Whether the file has an offset index (page locations), for the chunks made here.
    offset_index: bool,
    /// The Arrow-routed columns, and a factory of writers for them alone (made on a
    /// schema of those columns, so no writer, and no zstd context, is made for the others).
    arrow_schema: SchemaRef,
    arrow_writers: Option<ArrowRowGroupWriterFactory>,
    /// Scratch for widened values and list levels.
    scratch: Scratch,
}

impl RowGroupFile {
    pub fn try_new(f: File, schema: SchemaRef, props: WriterProperties) -> Result<RowGroupFile> {
        let (file, _) = ArrowWriter::try_new(f, schema.clone(), Some(props.clone()))?.into_serialized_writer()?;
        let descr = file.schema_descr();
        let mut routes: Vec<Route> = schema.fields().iter().map(|f| route_of(f)).collect();
        if descr.num_columns() != routes.len() {
            // Not one leaf per field: every column through the Arrow writer.
            routes.iter_mut().for_each(|r| *r = Route::Arrow);
        }
        let leaves: Vec<(ColumnDescPtr, Option<ZstdLevel>)> = (0..routes.len().min(descr.num_columns()))
            .map(|i| {
                let leaf = descr.column(i);
                let level = match (props.writer_version(), props.compression(leaf.path())) {
                    (WriterVersion::PARQUET_1_0, Compression::ZSTD(l)) => Some(l),
                    _ => None,
                };
                (leaf, level)
            })
            .collect();
        for (route, (leaf, level)) in routes.iter_mut().zip(&leaves) {
            if *route == Route::Dict && level.is_none() {
                *route = Route::Arrow; // pages written here are zstd ones only
            }
            if *route == Route::List && (leaf.max_def_level(), leaf.max_rep_level()) != (1, 1) {
                *route = Route::Arrow; // not the one-level list the levels are made for
            }
        }
        let offset_index = !props.offset_index_disabled();
        let uncompressed = Arc::new(props.clone().into_builder().set_compression(Compression::UNCOMPRESSED).build());
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
        Ok(RowGroupFile { file, routes, leaves, uncompressed, offset_index, arrow_schema, arrow_writers, scratch: Scratch::default() })
    }

    /// Writes `batch` as one row group (none when it is empty).
    pub fn write(&mut self, batch: &RecordBatch, pool: &ZstdPool) -> Result<()> {
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
        for (i, (col, route)) in batch.columns().iter().zip(&self.routes).enumerate() {
            if *route == Route::Arrow {
                let (field, mut w) = (arrow_fields.next().expect("a field per Arrow column"), arrow_writers.next().expect("a writer per Arrow column"));
                for leaf in compute_leaves(field, col)? {
                    w.write(&leaf)?;
                }
                w.close()?.append_to_row_group(&mut rg)?;
                continue;
            }
            let (leaf, level) = &self.leaves[i];
            match level {
                Some(level) => {
                    let mut zstd = pool.take(level.compression_level())?;
                    let written = match route {
                        Route::Dict => dictionary_chunk(leaf, col, *level, &mut zstd, self.offset_index)
                            .and_then(|(bytes, close)| rg.append_column(&bytes, close)),
                        _ => write_compressed(&mut rg, leaf, &self.uncompressed, *level, col, *route, &mut zstd, &mut self.scratch),
                    };
                    pool.give(level.compression_level(), zstd);
                    written?;
                }
                None => {
                    let mut w = rg.next_column()?.expect("a Parquet column per Arrow column");
                    write_integers(w.untyped(), col, *route, &mut self.scratch)?;
                    w.close()?;
                }
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

/// Encodes one integer column chunk in memory, its pages compressed by `zstd` (the
/// column writer is given `uncompressed` settings), then appends it to the row group
/// marked as compressed at `level`.
#[allow(clippy::too_many_arguments)]
fn write_compressed(
    rg: &mut SerializedRowGroupWriter<'_, File>,
    leaf: &ColumnDescPtr,
    uncompressed: &WriterPropertiesPtr,
    level: ZstdLevel,
    col: &ArrayRef,
    route: Route,
    zstd: &mut zstd::bulk::Compressor<'static>,
    scratch: &mut Scratch,
) -> Result<()> {
    let mut chunk = TrackedWrite::new(Vec::new());
    let mut close = {
        let pages = ZstdPages { inner: SerializedPageWriter::new(&mut chunk), zstd };
        let mut w = get_column_writer(leaf.clone(), uncompressed.clone(), Box::new(pages));
        write_integers(&mut w, col, route, scratch)?;
        w.close()?
    };
    close.metadata = close.metadata.into_builder().set_compression(Compression::ZSTD(level)).build()?;
    rg.append_column(&bytes::Bytes::from(chunk.into_inner()?), close)
}

/// Buffers reused from row group to row group.
#[derive(Default)]
struct Scratch {
    /// 8- and 16-bit values widened to the INT32 Parquet stores them as.
    widened: Vec<i32>,
    /// A list column's definition and repetition levels.
    def: Vec<i16>,
    rep: Vec<i16>,
}

/// Widens 8-, 16- and 32-bit integers (u32 as its bits) into `out`.
fn widen(values: &ArrayRef, out: &mut Vec<i32>) {
    out.clear();
    match values.data_type() {
        DataType::Int8 => out.extend(values.as_primitive::<Int8Type>().values().iter().map(|&x| x as i32)),
        DataType::Int16 => out.extend(values.as_primitive::<Int16Type>().values().iter().map(|&x| x as i32)),
        DataType::UInt8 => out.extend(values.as_primitive::<UInt8Type>().values().iter().map(|&x| x as i32)),
        DataType::UInt16 => out.extend(values.as_primitive::<UInt16Type>().values().iter().map(|&x| x as i32)),
        DataType::Int32 => out.extend_from_slice(values.as_primitive::<Int32Type>().values()),
        _ => out.extend(values.as_primitive::<UInt32Type>().values().iter().map(|&x| x as i32)),
    }
}

/// The 64-bit values of an Int64 or UInt64 array (u64 as its bits).
fn int64_values(values: &ArrayRef) -> &[i64] {
    match values.data_type() {
        DataType::Int64 => values.as_primitive::<Int64Type>().values(),
        _ => values.as_primitive::<UInt64Type>().values().inner().typed_data::<i64>(),
    }
}

/// Hands an integer column's values to a typed column writer (8- and 16-bit ones widened
/// to the INT32 Parquet stores them as); a list column's items with their levels: per row a
/// repetition level 0 then 1 for each further item, definition level 1 per item, and an
/// empty list one entry at level 0 (what parquet's Arrow writer computes for the same array).
fn write_integers(w: &mut ColumnWriter<'_>, col: &ArrayRef, route: Route, scratch: &mut Scratch) -> Result<()> {
    match route {
        Route::Int64 => {
            get_typed_column_writer_mut::<ParquetInt64>(w).write_batch(int64_values(col), None, None)?;
        }
        Route::Int32 => {
            let v: &[i32] = match col.data_type() {
                DataType::Int32 => col.as_primitive::<Int32Type>().values(),
                DataType::UInt32 => col.as_primitive::<UInt32Type>().values().inner().typed_data::<i32>(),
                _ => {
                    widen(col, &mut scratch.widened);
                    &scratch.widened
                }
            };
            get_typed_column_writer_mut::<ParquetInt32>(w).write_batch(v, None, None)?;
        }
        Route::List => {
            let list = col.as_list::<i32>();
            if list.null_count() > 0 {
                return Err(ParquetError::General("a null list in a column declared not null".into()));
            }
            let offsets = list.value_offsets();
            let (first, last) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
            let (def, rep) = (&mut scratch.def, &mut scratch.rep);
            def.clear();
            rep.clear();
            for o in offsets.windows(2) {
                let len = (o[1] - o[0]) as usize;
                rep.push(0);
                if len == 0 {
                    def.push(0);
                } else {
                    rep.extend(std::iter::repeat(1).take(len - 1));
                    def.extend(std::iter::repeat(1).take(len));
                }
            }
            let items = list.values().slice(first, last - first);
            if items.null_count() > 0 {
                return Err(ParquetError::General("a null item in a list declared without them".into()));
            }
            match items.data_type() {
                DataType::Int64 | DataType::UInt64 => {
                    get_typed_column_writer_mut::<ParquetInt64>(w).write_batch(int64_values(&items), Some(def), Some(rep))?;
                }
                _ => {
                    widen(&items, &mut scratch.widened);
                    get_typed_column_writer_mut::<ParquetInt32>(w).write_batch(&scratch.widened, Some(def), Some(rep))?;
                }
            }
        }
        Route::Dict | Route::Arrow => unreachable!("written by dict_column or parquet's Arrow writer"),
    }
    Ok(())
}
