//! ntscope analyzer library: trace.dat decoding (`tracedat`), Arrow columns (`columns`),
//! Parquet output (`parquet_out`), the conversion that ties them (`convert`), and the
//! Perfetto timeline's packet encoder (`timeline`, laying out each io's slices with
//! `timeline_slices`), and Parquet parts put together without re-encoding (`parquet_concat`).
pub mod columns;
pub mod convert;
pub mod dict_column;
pub mod ftrace_text;
pub mod layout;
pub mod metadata;
pub mod names;
pub mod out_dir;
pub mod parquet_concat;
pub mod parquet_out;
pub mod progress;
pub mod row_group_file;
pub mod symbol_files;
pub mod tracedat;
pub mod synth;
pub mod synth_classes;
pub mod timeline;
pub mod timeline_slices;
