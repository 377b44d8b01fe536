//! trace-cmd trace.dat reading. Knows the file and ring-buffer formats; knows nothing of
//! Arrow, Parquet or NVMe.
pub mod bytes;
pub mod error;
pub mod file;
pub mod format;
pub mod limits;
pub mod pages;
pub mod ringbuf;
pub mod source;
pub mod symbols;
pub mod timestamps;
