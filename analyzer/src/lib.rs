//! ntscope analyzer library: trace.dat decoding (`tracedat`), Arrow columns (`columns`),
//! Parquet output (`parquet_out`), and the conversion that ties them (`convert`).
pub mod columns;
pub mod convert;
pub mod metadata;
pub mod parquet_out;
pub mod tracedat;
pub mod synth;
