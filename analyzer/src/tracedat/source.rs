//! Reading the trace file itself: positional reads with truncation errors, a sequential
//! reader for the v6 header walk, and block decompression for v7 sections and chunks.

use super::bytes::{Cursor, Endian};
use super::error::{Result, TraceError, FIX_RECOPY};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;

/// Compression of a v7 file, from its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    None,
    Zstd,
    Zlib,
}

impl Codec {
    pub fn from_name(name: &str) -> Result<Codec> {
        match name {
            "none" | "" => Ok(Codec::None),
            "zstd" => Ok(Codec::Zstd),
            "zlib" => Ok(Codec::Zlib),
            other => Err(TraceError::new(format!("unsupported compression algorithm {:?}", other))
                .fix("ntscope reads none, zlib and zstd; re-record with `trace-cmd record --compression zstd` (or none), or convert the file with `trace-cmd convert --compression zstd`")),
        }
    }

    /// Decompresses one block whose uncompressed size is known (output capped just past it).
    pub fn decompress(self, input: &[u8], usize_hint: usize, out: &mut Vec<u8>) -> std::result::Result<(), String> {
        out.clear();
        match self {
            Codec::None => {
                out.extend_from_slice(input);
                Ok(())
            }
            Codec::Zstd => {
                out.reserve(usize_hint);
                let d = zstd::stream::read::Decoder::with_buffer(input).map_err(|e| e.to_string())?;
                // Never inflate past what the header promised (+1 to detect the lie).
                d.take(usize_hint as u64 + 1).read_to_end(out).map_err(|e| e.to_string())?;
                Ok(())
            }
            Codec::Zlib => {
                out.reserve(usize_hint);
                let d = flate2::read::ZlibDecoder::new(input);
                d.take(usize_hint as u64 + 1).read_to_end(out).map_err(|e| e.to_string())?;
                Ok(())
            }
        }
    }
}

/// The open trace file: positional reads that fail with a clear error past its end.
/// Where the bytes are: the file (normal use) or memory (fuzzing, tests).
pub enum Backing {
    File(File),
    Memory(Vec<u8>),
}

pub struct TraceSource {
    pub backing: Backing,
    pub len: u64,
    pub path: String,
}

impl TraceSource {
    pub fn open(path: &str) -> Result<TraceSource> {
        let file = File::open(path).map_err(|e| {
            TraceError::new(format!("cannot open: {}", e)).fix("check the path; a run keeps one trace.dat per host under runs/<run>/<host>/")
        })?;
        let len = file.metadata().map_err(|e| TraceError::new(format!("cannot stat: {}", e)))?.len();
        Ok(TraceSource { backing: Backing::File(file), len, path: path.to_string() })
    }

    pub fn from_bytes(bytes: Vec<u8>, name: &str) -> TraceSource {
        TraceSource { len: bytes.len() as u64, backing: Backing::Memory(bytes), path: name.to_string() }
    }

    pub fn read_at(&self, offset: u64, n: usize, what: &str) -> Result<Vec<u8>> {
        // Check before allocating: sizes come from the file and may be absurd.
        if offset.checked_add(n as u64).map_or(true, |e| e > self.len) {
            return Err(self.past_end(offset, n as u64, what));
        }
        let mut buf = vec![0u8; n];
        self.read_into(offset, &mut buf, what)?;
        Ok(buf)
    }

    fn past_end(&self, offset: u64, n: u64, what: &str) -> TraceError {
        TraceError::new(format!(
            "file truncated: {} needs bytes {:#x}..{:#x} but the file has {} bytes",
            what,
            offset,
            offset.saturating_add(n),
            self.len
        ))
        .at(offset)
        .fix(FIX_RECOPY)
    }

    pub fn read_into(&self, offset: u64, buf: &mut [u8], what: &str) -> Result<()> {
        if offset.checked_add(buf.len() as u64).map_or(true, |e| e > self.len) {
            return Err(self.past_end(offset, buf.len() as u64, what));
        }
        match &self.backing {
            Backing::File(f) => f
                .read_exact_at(buf, offset)
                .map_err(|e| TraceError::new(format!("read error in {}: {}", what, e)).at(offset)),
            Backing::Memory(m) => {
                buf.copy_from_slice(&m[offset as usize..offset as usize + buf.len()]);
                Ok(())
            }
        }
    }

    /// Reads a compressed block (u32 compressed size, u32 uncompressed size, data) at `offset`.
    /// Returns the uncompressed bytes and the offset just past the block.
    pub fn read_compressed_block(&self, offset: u64, endian: Endian, codec: Codec, what: &str) -> Result<(Vec<u8>, u64)> {
        let hdr = self.read_at(offset, 8, what)?;
        let zsize = endian.u32(hdr[0..4].try_into().unwrap()) as usize;
        let usize_ = endian.u32(hdr[4..8].try_into().unwrap()) as usize;
        if usize_ > 1 << 30 {
            return Err(TraceError::new(format!("{}: compressed block claims {} bytes uncompressed (over 1 GiB)", what, usize_))
                .at(offset)
                .fix(FIX_RECOPY));
        }
        if offset + 8 + zsize as u64 > self.len {
            return Err(TraceError::new(format!(
                "{}: compressed block claims {} bytes but only {} remain in the file",
                what,
                zsize,
                self.len.saturating_sub(offset + 8)
            ))
            .at(offset)
            .fix(FIX_RECOPY));
        }
        let z = self.read_at(offset + 8, zsize, what)?;
        let mut out = Vec::new();
        codec
            .decompress(&z, usize_, &mut out)
            .map_err(|e| TraceError::new(format!("{}: cannot decompress ({:?}): {}", what, codec, e)).at(offset).fix(FIX_RECOPY))?;
        if out.len() != usize_ {
            return Err(TraceError::new(format!(
                "{}: block decompressed to {} bytes, header says {}",
                what,
                out.len(),
                usize_
            ))
            .at(offset)
            .fix(FIX_RECOPY));
        }
        Ok((out, offset + 8 + zsize as u64))
    }
}

/// Something the header walk can pull typed values from: the file itself (v6) or an
/// in-memory section (v7, possibly decompressed).
pub trait ByteSource {
    fn bytes(&mut self, n: usize, what: &str) -> Result<Vec<u8>>;
    fn offset(&self) -> u64;
    fn endian(&self) -> Endian;
    fn u32(&mut self, what: &str) -> Result<u32> {
        let b = self.bytes(4, what)?;
        Ok(self.endian().u32(b[..4].try_into().unwrap()))
    }
    fn u64(&mut self, what: &str) -> Result<u64> {
        let b = self.bytes(8, what)?;
        Ok(self.endian().u64(b[..8].try_into().unwrap()))
    }
    fn cstr(&mut self, what: &str) -> Result<String>;
    /// A length-prefixed blob whose declared size must fit in what is left.
    fn sized_blob(&mut self, len_bytes: usize, what: &str) -> Result<Vec<u8>> {
        let at = self.offset();
        let n = if len_bytes == 4 { self.u32(what)? as u64 } else { self.u64(what)? };
        if n > self.limit() {
            return Err(TraceError::new(format!("{} claims {} bytes, more than the {} that remain", what, n, self.limit()))
                .at(at)
                .fix(FIX_RECOPY));
        }
        self.bytes(n as usize, what)
    }
    /// Bytes left to read.
    fn limit(&self) -> u64;
}

/// Sequential reads straight from the file (v6 metadata walk).
pub struct FileWalker {
    pub src: std::sync::Arc<TraceSource>,
    pub pos: u64,
    pub endian: Endian,
}

impl ByteSource for FileWalker {
    fn bytes(&mut self, n: usize, what: &str) -> Result<Vec<u8>> {
        let b = self.src.read_at(self.pos, n, what)?;
        self.pos += n as u64;
        Ok(b)
    }
    fn offset(&self) -> u64 {
        self.pos
    }
    fn endian(&self) -> Endian {
        self.endian
    }
    fn cstr(&mut self, what: &str) -> Result<String> {
        let mut s = Vec::new();
        loop {
            let chunk = self.src.read_at(self.pos, 1.min(self.src.len.saturating_sub(self.pos) as usize).max(1), what)?;
            self.pos += 1;
            if chunk[0] == 0 {
                break;
            }
            s.push(chunk[0]);
            if s.len() > 4096 {
                return Err(TraceError::new(format!("unterminated string reading {}", what)).at(self.pos).fix(FIX_RECOPY));
            }
        }
        Ok(String::from_utf8_lossy(&s).into_owned())
    }
    fn limit(&self) -> u64 {
        self.src.len.saturating_sub(self.pos)
    }
}

impl ByteSource for Cursor<'_> {
    fn bytes(&mut self, n: usize, what: &str) -> Result<Vec<u8>> {
        Cursor::bytes(self, n, what).map(|b| b.to_vec())
    }
    fn offset(&self) -> u64 {
        Cursor::offset(self)
    }
    fn endian(&self) -> Endian {
        self.endian
    }
    fn cstr(&mut self, what: &str) -> Result<String> {
        Cursor::cstr(self, what)
    }
    fn limit(&self) -> u64 {
        self.remaining() as u64
    }
}
