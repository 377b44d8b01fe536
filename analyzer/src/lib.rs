//! ntscope analyzer library: trace.dat decoding (`tracedat`), Arrow columns (`columns`),
//! Parquet output (`parquet_out`), and the conversion that ties them (`convert`).
pub mod columns;
pub mod convert;
pub mod layout;
pub mod metadata;
pub mod names;
pub mod out_dir;
pub mod parquet_out;
pub mod progress;
pub mod tracedat;
pub mod synth;
