//! One Parquet column chunk of a string column from its Arrow dictionary as it is: the
//! dictionary's values become the chunk's dictionary page, the keys its data page (RLE /
//! bit-packed indices), so no string is looked up, copied or hashed per row. Parquet's
//! Arrow writer, with its dictionary off, copied every row's string into a plain page
//! (the decoder already holds each batch's strings once, as a dictionary); with it on, it
//! hashed every row's string again to build its own dictionary.
//!
//! The chunk is the one a Parquet writer of version 1 makes for a dictionary-encoded
//! column: a PLAIN_DICTIONARY dictionary page, then one data page (the row group is one
//! page's worth of rows) holding the definition levels (nullable columns) and the indices,
//! each page zstd-compressed. Knows Parquet and Arrow, nothing of trace.dat or NVMe.

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use parquet::basic::{Compression, Encoding, EncodingMask, PageType, ZstdLevel};
use parquet::column::page::{CompressedPage, Page, PageWriteSpec, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::{ColumnChunkMetaData, OffsetIndexBuilder, PageEncodingStats};
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;
use crate::row_group_file::zstd_page;

/// True for the Arrow type this module writes: a dictionary of utf8 values with 32-bit keys
/// (what `columns` makes of every string field).
pub fn is_string_dictionary(t: &DataType) -> bool {
    matches!(t, DataType::Dictionary(k, v) if **k == DataType::Int32 && **v == DataType::Utf8)
}

/// The column chunk of `col` (a string dictionary, see `is_string_dictionary`) for the
/// Parquet leaf `leaf`: its bytes and what `SerializedRowGroupWriter::append_column` needs.
pub fn dictionary_chunk(
    leaf: &ColumnDescPtr,
    col: &ArrayRef,
    level: ZstdLevel,
    zstd: &mut zstd::bulk::Compressor<'static>,
    offset_index: bool,
) -> Result<(bytes::Bytes, ColumnCloseResult)> {
    let dict = col.as_dictionary::<Int32Type>();
    let values = dict.values().as_string::<i32>();
    let keys = dict.keys();
    let nullable = leaf.max_def_level() > 0;
    if values.null_count() > 0 || (!nullable && keys.null_count() > 0) || leaf.max_rep_level() > 0 {
        return Err(ParquetError::General(format!(
            "column {}: a string dictionary with null values, or nulls in a required column",
            leaf.path()
        )));
    }
    let rows = keys.len();
    let present = rows - keys.null_count();
    let mut chunk = TrackedWrite::new(Vec::new());
    let mut pages = SerializedPageWriter::new(&mut chunk);

    // The dictionary page: each distinct value once, PLAIN (a 4-byte length, then the bytes).
    // The Arrow dictionary may hold a value twice (`comm` is keyed by pid: two fio threads),
    // which Parquet's readers do not all take (pyarrow merges the two and its indices then
    // overrun): `remap` takes an Arrow key to its value's first place. A column with no value
    // present (all null) has no dictionary: its data page is PLAIN and empty.
    let (unique, remap) = distinct_values(values);
    let mut dictionary_spec = None;
    if present > 0 {
        let mut plain = Vec::with_capacity(values.value_data().len() + 4 * unique.len());
        for v in &unique {
            plain.extend_from_slice(&(v.len() as u32).to_le_bytes());
            plain.extend_from_slice(v.as_bytes());
        }
        let page = Page::DictionaryPage {
            buf: zstd_page(zstd, &plain)?,
            num_values: unique.len() as u32,
            encoding: Encoding::PLAIN_DICTIONARY,
            is_sorted: false,
        };
        dictionary_spec = Some(pages.write_page(CompressedPage::new(page, plain.len()))?);
    }

    // The data page: definition levels (length-prefixed, bit width 1), then the indices of
    // the rows present (a byte of bit width, then the RLE / bit-packed hybrid).
    let mut body = Vec::new();
    if nullable {
        let mut levels = Vec::new();
        let defined: Box<dyn Iterator<Item = u32>> = match keys.nulls() {
            Some(n) => Box::new(n.iter().map(u32::from)),
            None => Box::new(std::iter::repeat(1).take(rows)),
        };
        encode_hybrid(defined, rows, 1, &mut levels);
        body.extend_from_slice(&(levels.len() as u32).to_le_bytes());
        body.extend_from_slice(&levels);
    }
    let encoding = if present > 0 {
        let width = bit_width(unique.len());
        body.push(width);
        if let Some(k) = keys.iter().flatten().find(|&k| k < 0 || k as usize >= values.len()) {
            return Err(ParquetError::General(format!("column {}: dictionary key {k} out of range", leaf.path())));
        }
        let indices: Box<dyn Iterator<Item = u32> + '_> = match keys.nulls() {
            Some(_) => Box::new(keys.iter().flatten().map(|k| remap[k as usize])),
            None => Box::new(keys.values().iter().map(|&k| remap[k as usize])),
        };
        encode_hybrid(indices, present, width, &mut body);
        Encoding::PLAIN_DICTIONARY
    } else {
        Encoding::PLAIN
    };
    let page = Page::DataPage {
        buf: zstd_page(zstd, &body)?,
        num_values: rows as u32,
        encoding,
        def_level_encoding: Encoding::RLE,
        rep_level_encoding: Encoding::RLE,
        statistics: None,
    };
    let data_spec = pages.write_page(CompressedPage::new(page, body.len()))?;
    pages.close()?;
    drop(pages);

    let close = close_result(leaf, level, rows, dictionary_spec.as_ref(), &data_spec, encoding, offset_index)?;
    Ok((bytes::Bytes::from(chunk.into_inner()?), close))
}

/// The distinct values of an Arrow dictionary in the order of their first place, and for
/// each Arrow key the index of its value among them (a hash per dictionary value, none per row).
fn distinct_values(values: &arrow_array::StringArray) -> (Vec<&str>, Vec<u32>) {
    let mut first: std::collections::HashMap<&str, u32> = std::collections::HashMap::with_capacity(values.len());
    let mut unique = Vec::with_capacity(values.len());
    let remap = values
        .iter()
        .map(|v| {
            let v = v.unwrap_or_default();
            *first.entry(v).or_insert_with(|| {
                unique.push(v);
                unique.len() as u32 - 1
            })
        })
        .collect();
    (unique, remap)
}

/// The chunk's metadata, as parquet's column writer records it for the same pages.
fn close_result(
    leaf: &ColumnDescPtr,
    level: ZstdLevel,
    rows: usize,
    dictionary: Option<&PageWriteSpec>,
    data: &PageWriteSpec,
    data_encoding: Encoding,
    offset_index: bool,
) -> Result<ColumnCloseResult> {
    let specs: Vec<&PageWriteSpec> = dictionary.into_iter().chain([data]).collect();
    let total = |f: fn(&PageWriteSpec) -> usize| specs.iter().map(|s| f(s) as i64).sum::<i64>();
    let mut encodings = vec![Encoding::RLE, data_encoding];
    let mut stats = Vec::new();
    if dictionary.is_some() {
        stats.push(PageEncodingStats { page_type: PageType::DICTIONARY_PAGE, encoding: Encoding::PLAIN_DICTIONARY, count: 1 });
    } else {
        encodings.push(Encoding::PLAIN);
    }
    stats.push(PageEncodingStats { page_type: PageType::DATA_PAGE, encoding: data_encoding, count: 1 });
    let metadata = ColumnChunkMetaData::builder(leaf.clone())
        .set_compression(Compression::ZSTD(level))
        .set_encodings_mask(EncodingMask::new_from_encodings(encodings.iter()))
        .set_page_encoding_stats(stats)
        .set_total_compressed_size(total(|s| s.compressed_size))
        .set_total_uncompressed_size(total(|s| s.uncompressed_size))
        .set_num_values(rows as i64)
        .set_data_page_offset(data.offset as i64)
        .set_dictionary_page_offset(dictionary.map(|d| d.offset as i64))
        .build()?;
    let offset_index = offset_index.then(|| {
        let mut b = OffsetIndexBuilder::new();
        b.append_offset_and_size(data.offset as i64, data.compressed_size as i32);
        b.append_row_count(rows as i64);
        b.build()
    });
    Ok(ColumnCloseResult {
        bytes_written: specs.iter().map(|s| s.bytes_written).sum(),
        rows_written: rows as u64,
        metadata,
        bloom_filter: None,
        column_index: None,
        offset_index,
    })
}

/// Bits per index for a dictionary of `n` values (at least 1: a width of 0 is legal, but
/// not every reader takes it).
fn bit_width(n: usize) -> u8 {
    (usize::BITS - n.saturating_sub(1).leading_zeros()).max(1) as u8
}

/// Appends `n` values of `width` bits (each < 2^width) in Parquet's RLE / bit-packed hybrid:
/// a run of 8 or more equal values as one RLE run, the rest bit-packed in groups of 8
/// (the last group padded with zeros: the page's value count says where the values end).
fn encode_hybrid(values: impl Iterator<Item = u32>, n: usize, width: u8, out: &mut Vec<u8>) {
    let mut pending: Vec<u32> = Vec::with_capacity(n.min(1 << 16));
    let mut values = values.peekable();
    while let Some(v) = values.next() {
        let mut run = 1usize;
        while values.peek() == Some(&v) {
            values.next();
            run += 1;
        }
        // A bit-packed run holds whole groups of 8: fill the open group first.
        let fill = ((8 - pending.len() % 8) % 8).min(run);
        if run - fill >= 8 {
            pending.extend(std::iter::repeat(v).take(fill));
            flush_packed(&mut pending, width, out);
            put_rle(run - fill, v, width, out);
        } else {
            pending.extend(std::iter::repeat(v).take(run));
        }
    }
    flush_packed(&mut pending, width, out);
}

fn put_uleb(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_rle(count: usize, value: u32, width: u8, out: &mut Vec<u8>) {
    put_uleb((count as u64) << 1, out);
    out.extend_from_slice(&value.to_le_bytes()[..(width as usize).div_ceil(8)]);
}

/// Writes `pending` as one bit-packed run (padded to a multiple of 8 values), then empties it.
fn flush_packed(pending: &mut Vec<u32>, width: u8, out: &mut Vec<u8>) {
    if pending.is_empty() {
        return;
    }
    let groups = pending.len().div_ceil(8);
    pending.resize(groups * 8, 0);
    put_uleb(((groups as u64) << 1) | 1, out);
    // Values packed from the least significant bit, each group of 8 into `width` bytes.
    let (mut acc, mut bits) = (0u64, 0u32);
    for &v in pending.iter() {
        acc |= (v as u64) << bits;
        bits += width as u32;
        while bits >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            bits -= 8;
        }
    }
    debug_assert_eq!(bits, 0, "8 values of any width fill whole bytes");
    pending.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hybrid encoding decoded by hand: runs and packed groups give back the values.
    fn decode_hybrid(mut b: &[u8], n: usize, width: u8) -> Vec<u32> {
        let mut out = Vec::new();
        while out.len() < n {
            let (mut h, mut shift) = (0u64, 0);
            loop {
                let byte = b[0];
                b = &b[1..];
                h |= ((byte & 0x7f) as u64) << shift;
                shift += 7;
                if byte < 0x80 {
                    break;
                }
            }
            if h & 1 == 0 {
                let w = (width as usize).div_ceil(8);
                let mut v = [0u8; 4];
                v[..w].copy_from_slice(&b[..w]);
                b = &b[w..];
                out.extend(std::iter::repeat(u32::from_le_bytes(v)).take((h >> 1) as usize));
            } else {
                let count = (h >> 1) as usize * 8;
                let bytes = count * width as usize / 8;
                let (mut acc, mut bits, mut i) = (0u64, 0u32, 0);
                for _ in 0..count {
                    while bits < width as u32 {
                        acc |= (b[i] as u64) << bits;
                        i += 1;
                        bits += 8;
                    }
                    out.push((acc & ((1u64 << width) - 1)) as u32);
                    acc >>= width;
                    bits -= width as u32;
                }
                b = &b[bytes..];
            }
        }
        assert!(b.is_empty(), "bytes left after {n} values");
        out.truncate(n);
        out
    }

    #[test]
    fn hybrid_round_trips_runs_and_literals_at_every_width() {
        for width in [1u8, 2, 3, 7, 8, 9, 13, 16, 17, 24, 31] {
            let max = if width == 32 { u32::MAX } else { (1u32 << width) - 1 };
            let mut v: Vec<u32> = Vec::new();
            v.extend((0..5u32).map(|i| i.min(max)));
            v.extend(std::iter::repeat(max).take(20)); // a run entered mid-group
            v.extend((0..13u32).map(|i| (i * 7919) & max));
            v.extend(std::iter::repeat(1.min(max)).take(8)); // a run exactly filling a group
            v.extend(std::iter::repeat(0).take(7)); // too short for a run
            v.push(max);
            let mut out = Vec::new();
            encode_hybrid(v.iter().copied(), v.len(), width, &mut out);
            assert_eq!(decode_hybrid(&out, v.len(), width), v, "width {width}");
        }
        let mut out = Vec::new();
        encode_hybrid(std::iter::repeat(3).take(100_000), 100_000, 2, &mut out);
        assert_eq!(out, vec![0xc0, 0x9a, 0x0c, 3], "one run: ULEB128(100000 << 1), then the value");
    }

    #[test]
    fn bit_width_covers_the_largest_index() {
        assert_eq!([1, 2, 3, 4, 5, 256, 257].map(bit_width), [1, 1, 2, 2, 3, 8, 9]);
    }
}
