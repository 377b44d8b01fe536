//! Bounds-checked little/big-endian reads over a byte slice; every failure names the
//! absolute file offset so errors can point at the damaged spot.

use super::error::{Result, TraceError, FIX_RECOPY};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endian {
    Little,
    Big,
}

impl Endian {
    #[inline]
    pub fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }
    #[inline]
    pub fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }
    #[inline]
    pub fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }
    /// Reads an unsigned integer of 1, 2, 4 or 8 bytes at `data[off..]`; the caller checked bounds.
    #[inline]
    pub fn read_uint(self, data: &[u8], off: usize, size: usize) -> u64 {
        match size {
            1 => data[off] as u64,
            2 => self.u16([data[off], data[off + 1]]) as u64,
            4 => self.u32(data[off..off + 4].try_into().unwrap()) as u64,
            8 => self.u64(data[off..off + 8].try_into().unwrap()),
            _ => 0,
        }
    }
}

/// A cursor over a byte slice that starts at `base` in the file.
pub struct Cursor<'a> {
    pub data: &'a [u8],
    pub pos: usize,
    pub base: u64,
    pub endian: Endian,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8], base: u64, endian: Endian) -> Self {
        Cursor { data, pos: 0, base, endian }
    }
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }
    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }
    fn short(&self, need: usize, what: &str) -> TraceError {
        TraceError::new(format!(
            "unexpected end of data reading {} ({} bytes needed, {} left)",
            what,
            need,
            self.remaining()
        ))
        .at(self.offset())
        .fix(FIX_RECOPY)
    }
    pub fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if self.remaining() < n {
            return Err(self.short(n, what));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    pub fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.bytes(1, what)?[0])
    }
    pub fn u16(&mut self, what: &str) -> Result<u16> {
        let b = self.bytes(2, what)?;
        Ok(self.endian.u16([b[0], b[1]]))
    }
    pub fn u32(&mut self, what: &str) -> Result<u32> {
        let b = self.bytes(4, what)?;
        Ok(self.endian.u32(b.try_into().unwrap()))
    }
    pub fn u64(&mut self, what: &str) -> Result<u64> {
        let b = self.bytes(8, what)?;
        Ok(self.endian.u64(b.try_into().unwrap()))
    }
    /// A NUL-terminated string (the NUL is consumed, not returned).
    pub fn cstr(&mut self, what: &str) -> Result<String> {
        let rest = &self.data[self.pos.min(self.data.len())..];
        match rest.iter().position(|&b| b == 0) {
            Some(n) => {
                let s = String::from_utf8_lossy(&rest[..n]).into_owned();
                self.pos += n + 1;
                Ok(s)
            }
            None => Err(TraceError::new(format!("unterminated string reading {}", what))
                .at(self.offset())
                .fix(FIX_RECOPY)),
        }
    }
}

/// Text up to the first NUL (or the whole slice).
pub fn until_nul(b: &[u8]) -> &[u8] {
    match b.iter().position(|&c| c == 0) {
        Some(n) => &b[..n],
        None => b,
    }
}
