//! `parquet_concat`: parts of one schema put together, their row groups copied as they are.
mod common;
use arrow_array::{ArrayRef, DictionaryArray, Int64Array, RecordBatch, StringArray};
use arrow_array::types::Int32Type;
use arrow_schema::{DataType, Field, Schema};
use common::*;
use ntscope::parquet_concat::concat_files;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::properties::ReaderProperties;
use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::{ReadOptionsBuilder, SerializedFileReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("io_id", DataType::Utf8, false),
        Field::new("stage", DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)), true),
        Field::new("dur_ns", DataType::Int64, true),
    ]))
}

/// Rows first..first+n: strings, a dictionary column with nulls, integers with nulls.
fn batch(first: i64, n: i64) -> RecordBatch {
    let ids: StringArray = (first..first + n).map(|i| Some(format!("initiator/0/1/{}/{}", i % 7, i))).collect();
    let stages: DictionaryArray<Int32Type> =
        (first..first + n).map(|i| if i % 5 == 0 { None } else { Some(["queue", "wire", "device"][(i % 3) as usize]) }).collect();
    let durs: Int64Array = (first..first + n).map(|i| if i % 11 == 0 { None } else { Some(i * 1_000 + 7) }).collect();
    RecordBatch::try_new(schema(), vec![Arc::new(ids) as ArrayRef, Arc::new(stages), Arc::new(durs)]).unwrap()
}

/// A part file of `rows` rows from `first`, in row groups of at most `group` rows, with page
/// indexes and bloom filters (as DuckDB writes for its dictionary columns).
fn write_part(path: &Path, first: i64, rows: i64, group: usize) {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(group))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_bloom_filter_enabled(true)
        .set_created_by("a part writer".into())
        .build();
    let mut w = ArrowWriter::try_new(std::fs::File::create(path).unwrap(), schema(), Some(props)).unwrap();
    if rows > 0 {
        w.write(&batch(first, rows)).unwrap();
    }
    w.close().unwrap();
}

/// A reader that reads the bloom filters too.
fn reader(path: &Path) -> SerializedFileReader<std::fs::File> {
    let props = ReaderProperties::builder().set_read_bloom_filter(true).build();
    let opts = ReadOptionsBuilder::new().with_reader_properties(props).build();
    SerializedFileReader::new_with_options(std::fs::File::open(path).unwrap(), opts).unwrap()
}

#[test]
fn parts_become_one_file_of_their_rows_in_order() {
    let d = TempDir::new("concat");
    // three parts: 250 rows in groups of 100 (100, 100, 50), an empty part, 40 rows in one group
    let parts: Vec<PathBuf> = (0..3).map(|k| d.0.join(format!("part-{}.parquet", k))).collect();
    write_part(&parts[0], 0, 250, 100);
    write_part(&parts[1], 250, 0, 100);
    write_part(&parts[2], 250, 40, 100);
    let out = d.0.join("out.parquet");
    assert_eq!(concat_files(&parts, &out).unwrap(), 290);

    assert_eq!(read_parquet(&out), batch(0, 290));
    let r = reader(&out);
    let m = r.metadata();
    let groups: Vec<i64> = m.row_groups().iter().map(|g| g.num_rows()).collect();
    assert_eq!(groups, vec![100, 100, 50, 40], "each part's row groups, as they were");
    assert_eq!(m.file_metadata().created_by(), Some("a part writer"), "the encoder's name is kept");
    for g in 0..groups.len() {
        let bloom = r.get_row_group(g).unwrap().get_column_bloom_filter(0).cloned();
        let bloom = bloom.unwrap_or_else(|| panic!("row group {}: the bloom filter was not kept", g));
        let first = [0, 100, 200, 250][g];
        assert!(bloom.check(&format!("initiator/0/1/{}/{}", first % 7, first).as_str()));
    }
    // the copied statistics describe the copied rows
    let stats = m.row_group(3).column(2).statistics().unwrap();
    assert_eq!(stats.min_bytes_opt(), Some(&(250i64 * 1_000 + 7).to_le_bytes()[..]));
}

#[test]
fn page_indexes_point_into_the_new_file() {
    let d = TempDir::new("concat-index");
    let parts = vec![d.0.join("a.parquet"), d.0.join("b.parquet")];
    write_part(&parts[0], 0, 120, 60);
    write_part(&parts[1], 120, 120, 60);
    let out = d.0.join("out.parquet");
    concat_files(&parts, &out).unwrap();
    // read every page through the offset index: a location left at its place in the part
    // would land on another part's bytes (or past the end) and fail to decode
    let f = std::fs::File::open(&out).unwrap();
    let opts = parquet::arrow::arrow_reader::ArrowReaderOptions::new()
        .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Required);
    let b = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new_with_options(f, opts).unwrap();
    let index = b.metadata().page_index().expect("page index read").clone();
    let locations = index.offset_index(3, 0).expect("offset index of the last row group").page_locations.clone();
    let chunk = b.metadata().row_group(3).column(0);
    let start = chunk.dictionary_page_offset().unwrap_or(chunk.data_page_offset());
    assert!(locations.iter().all(|l| l.offset >= start && l.offset < start + chunk.compressed_size()),
            "page locations inside the chunk's new place: {:?} vs {}..+{}", locations, start, chunk.compressed_size());
    let selection = parquet::arrow::arrow_reader::RowSelection::from(vec![
        parquet::arrow::arrow_reader::RowSelector::skip(200),
        parquet::arrow::arrow_reader::RowSelector::select(40),
    ]);
    let rows: Vec<RecordBatch> = b.with_row_selection(selection).build().unwrap().map(|b| b.unwrap()).collect();
    let rows = arrow_select::concat::concat_batches(&schema(), &rows).unwrap();
    assert_eq!(rows, batch(200, 40));
}

#[test]
fn another_schema_or_a_missing_part_is_refused_and_writes_nothing() {
    let d = TempDir::new("concat-bad");
    let good = d.0.join("good.parquet");
    write_part(&good, 0, 10, 100);
    let other = d.0.join("other.parquet");
    let s = Arc::new(Schema::new(vec![Field::new("io_id", DataType::Utf8, false)]));
    let mut w = ArrowWriter::try_new(std::fs::File::create(&other).unwrap(), s.clone(), None).unwrap();
    w.write(&RecordBatch::try_new(s, vec![Arc::new(StringArray::from(vec!["x"])) as ArrayRef]).unwrap()).unwrap();
    w.close().unwrap();
    let out = d.0.join("out.parquet");

    let e = concat_files(&[good.clone(), other.clone()], &out).unwrap_err().to_string();
    assert!(e.contains("other.parquet") && e.contains("another schema"), "{}", e);
    let missing = d.0.join("missing.parquet");
    let e = concat_files(&[good.clone(), missing], &out).unwrap_err().to_string();
    assert!(e.contains("missing.parquet"), "{}", e);
    let not_parquet = d.0.join("text.parquet");
    std::fs::write(&not_parquet, b"not parquet at all").unwrap();
    let e = concat_files(&[not_parquet], &out).unwrap_err().to_string();
    assert!(e.contains("text.parquet") && e.contains("not a readable Parquet file"), "{}", e);
    assert!(concat_files(&[], &out).is_err());
    assert!(!out.exists(), "no output when the inputs are refused");
}
