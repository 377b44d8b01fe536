//! One error type for everything that can go wrong reading a trace.dat: it says what
//! failed, where (file, byte offset, CPU), the offending value, and what to do.

use std::fmt;

#[derive(Debug, Clone)]
pub struct TraceError {
    pub file: String,
    pub offset: Option<u64>,
    pub cpu: Option<u32>,
    pub what: String,
    pub fix: String,
}

impl TraceError {
    pub fn new(what: impl Into<String>) -> Self {
        TraceError { file: String::new(), offset: None, cpu: None, what: what.into(), fix: String::new() }
    }
    pub fn at(mut self, offset: u64) -> Self {
        if self.offset.is_none() {
            self.offset = Some(offset);
        }
        self
    }
    pub fn cpu(mut self, cpu: u32) -> Self {
        self.cpu = Some(cpu);
        self
    }
    pub fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = fix.into();
        self
    }
    /// Names the file the error is about, unless it already names one.
    pub fn file(mut self, file: &str) -> Self {
        if self.file.is_empty() {
            self.file = file.to_string();
        }
        self
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", if self.file.is_empty() { "trace" } else { &self.file })?;
        if let Some(cpu) = self.cpu {
            write!(f, ", cpu {}", cpu)?;
        }
        if let Some(off) = self.offset {
            write!(f, ", offset {:#x}", off)?;
        }
        write!(f, ": {}", self.what)?;
        if !self.fix.is_empty() {
            write!(f, "\n  fix: {}", self.fix)?;
        }
        Ok(())
    }
}

impl std::error::Error for TraceError {}

pub type Result<T> = std::result::Result<T, TraceError>;

pub const FIX_RECOPY: &str =
    "the file is damaged or incomplete: copy trace.dat again from the host that recorded it (check its size), or re-record";
