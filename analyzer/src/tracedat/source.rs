//! Reading the trace file itself: positional reads with truncation errors, a sequential
//! reader for the v6 header walk, and block decompression for v7 sections and chunks.

use super::bytes::{Cursor, Endian};
use super::error::{Result, TraceError, FIX_RECOPY};
use std::fs::File;
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

}

/// Reusable decompression state (one per thread): contexts are created once, not per
/// chunk, and output goes straight into the caller's buffer (no zero-fill, no copy).
#[derive(Default)]
pub struct Inflater {
    zstd: Option<zstd::bulk::Decompressor<'static>>,
    zlib: Option<flate2::Decompress>,
}

impl Inflater {
    /// Decompresses one block that must inflate to exactly `expected` bytes into `out`
    /// (replacing its contents). The caller checked `expected` against the limits; the
    /// output never grows past `expected + 1` bytes, whatever the stream says.
    pub fn inflate(&mut self, codec: Codec, input: &[u8], expected: usize, out: &mut Vec<u8>) -> std::result::Result<(), String> {
        out.clear();
        // One byte of slack tells "exactly expected" from "more than expected".
        let cap = expected + 1;
        match codec {
            Codec::None => out.extend_from_slice(&input[..input.len().min(cap)]),
            Codec::Zstd => {
                if self.zstd.is_none() {
                    self.zstd = Some(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?);
                }
                out.reserve_exact(cap);
                let d = self.zstd.as_mut().unwrap();
                // Writes into out's capacity only: a frame that inflates further fails here.
                if let Err(e) = d.decompress_to_buffer(input, out) {
                    return Err(if e.to_string().contains("too small") {
                        format!("inflates to more than the {} bytes its header declares", expected)
                    } else {
                        e.to_string()
                    });
                }
            }
            Codec::Zlib => {
                let d = self.zlib.get_or_insert_with(|| flate2::Decompress::new(true));
                d.reset(true);
                out.reserve_exact(cap);
                // decompress_vec fills spare capacity only; loop while it makes progress.
                loop {
                    let (in_before, out_before) = (d.total_in(), out.len());
                    let rest = &input[(d.total_in() as usize).min(input.len())..];
                    let st = d.decompress_vec(rest, out, flate2::FlushDecompress::Finish).map_err(|e| e.to_string())?;
                    if st == flate2::Status::StreamEnd || out.len() >= cap {
                        break;
                    }
                    if d.total_in() == in_before && out.len() == out_before {
                        return Err("the zlib stream ends before its end marker".into());
                    }
                }
            }
        }
        if out.len() > expected {
            return Err(format!("inflates to more than the {} bytes its header declares", expected));
        }
        if out.len() < expected {
            return Err(format!("inflates to {} bytes, its header declares {}", out.len(), expected));
        }
        Ok(())
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
    /// Opens a regular file for reading. Anything else (FIFO, socket, device, directory)
    /// is refused before it is opened: opening a FIFO for reading blocks until a writer
    /// comes, and opening some devices has side effects. The file is then opened
    /// non-blocking and checked again, in case it was swapped in between.
    pub fn open(path: &str) -> Result<TraceSource> {
        let cannot_open = |e: std::io::Error| {
            TraceError::new(format!("cannot open: {}", e)).fix("check the path; a run keeps one trace.dat per host under runs/<run>/<host>/")
        };
        let meta = std::fs::metadata(path).map_err(cannot_open)?;
        refuse_non_regular(&meta)?;
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path).map_err(cannot_open)?;
        let meta = file.metadata().map_err(|e| TraceError::new(format!("cannot stat: {}", e)))?;
        refuse_non_regular(&meta)?;
        Ok(TraceSource { backing: Backing::File(file), len: meta.len(), path: path.to_string() })
    }

    /// The bytes, when the trace is held in memory.
    pub fn memory(&self) -> Option<&[u8]> {
        match &self.backing {
            Backing::Memory(m) => Some(m),
            Backing::File(_) => None,
        }
    }

    /// The open file itself (for a checksum of exactly the bytes that were read).
    pub fn file(&self) -> Option<&File> {
        match &self.backing {
            Backing::File(f) => Some(f),
            Backing::Memory(_) => None,
        }
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

    /// Reads a compressed block (u32 compressed size, u32 uncompressed size, data) at `offset`
    /// that may inflate to at most `max_bytes` (see `limits`). Returns the uncompressed
    /// bytes and the offset just past the block.
    pub fn read_compressed_block(&self, offset: u64, endian: Endian, codec: Codec, what: &str, max_bytes: u64) -> Result<(Vec<u8>, u64)> {
        let hdr = self.read_at(offset, 8, what)?;
        let zsize = endian.u32(hdr[0..4].try_into().unwrap()) as usize;
        let usize_ = endian.u32(hdr[4..8].try_into().unwrap()) as usize;
        super::limits::check_inflate(what, zsize as u64, usize_ as u64, max_bytes).map_err(|e| e.at(offset))?;
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
        Inflater::default()
            .inflate(codec, &z, usize_, &mut out)
            .map_err(|e| TraceError::new(format!("{}: cannot decompress ({:?}): {}", what, codec, e)).at(offset).fix(FIX_RECOPY))?;
        Ok((out, offset + 8 + zsize as u64))
    }
}

/// Refuses what is not a regular file, naming what it is.
fn refuse_non_regular(meta: &std::fs::Metadata) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    let kind = if t.is_file() {
        return Ok(());
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    };
    Err(TraceError::new(format!("the trace is {}, not a regular file; refusing to read it", kind))
        .fix("pass the trace.dat file itself (copy a stream to a file first: trace-cmd record -o FILE, or cat PIPE > trace.dat)"))
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
            // one byte at a time (a read past the end fails as "file truncated")
            let chunk = self.src.read_at(self.pos, 1, what)?;
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
