//! Streams the ring-buffer pages of one CPU of one buffer, a block of pages at a time,
//! with bounded memory: plain data is read `PAGES_PER_READ` pages at a time; compressed
//! data (v7) one chunk at a time (u32 chunk count, then per chunk u32 compressed size,
//! u32 size, data). Buffers and decompression contexts live in a `PageReader` that a
//! thread reuses for every CPU it decodes.

use super::bytes::Endian;
use super::error::{Result, TraceError, FIX_RECOPY};
use super::file::{Buffer, CpuData};
use super::limits;
use super::source::{Codec, Inflater, TraceSource};

const PAGES_PER_READ: usize = 256;
/// Compressed chunks are small (10 pages); they are read from the file this many bytes
/// at a time and sliced from memory.
const COMPRESSED_READ: usize = 1 << 20;

/// A run of whole pages in memory.
pub struct PageBlock<'a> {
    pub data: &'a [u8],
    pub page_size: usize,
    /// File offset of the first page (plain data) or of the compressed chunk.
    pub file_offset: u64,
    /// Bytes of the file this block was read from (compressed size when compressed).
    pub file_bytes: u64,
    pub compressed: bool,
}

impl PageBlock<'_> {
    pub fn pages(&self) -> std::slice::ChunksExact<'_, u8> {
        self.data.chunks_exact(self.page_size)
    }
    /// Where page `i` of the block is in the file (the chunk's offset when compressed).
    pub fn page_offset(&self, i: usize) -> u64 {
        if self.compressed {
            self.file_offset
        } else {
            self.file_offset + (i * self.page_size) as u64
        }
    }
}

/// Per-thread buffers and decompression contexts.
#[derive(Default)]
pub struct PageReader {
    inflater: Inflater,
    /// Plain pages, or decompressed chunk.
    pages: Vec<u8>,
    ahead: ReadAhead,
}

/// Compressed bytes read ahead: `buf` holds the file's bytes from `start`.
#[derive(Default)]
struct ReadAhead {
    buf: Vec<u8>,
    start: u64,
}

impl ReadAhead {
    /// File bytes `offset..offset + n`, from memory when already read; otherwise reads
    /// from `offset` on, up to `COMPRESSED_READ` bytes or `end`, whichever is first.
    fn slice(&mut self, src: &TraceSource, offset: u64, n: usize, end: u64, what: &str) -> Result<&[u8]> {
        let have = offset >= self.start && offset + n as u64 <= self.start + self.buf.len() as u64;
        if !have {
            let want = (COMPRESSED_READ as u64).min(end.saturating_sub(offset)).max(n as u64) as usize;
            self.buf.resize(want, 0);
            src.read_into(offset, &mut self.buf, what)?;
            self.start = offset;
        }
        let at = (offset - self.start) as usize;
        Ok(&self.buf[at..at + n])
    }
}

/// Calls `on_block` for every run of pages of one CPU, in file order.
/// With `salvage`, a truncated CPU section delivers its complete pages and returns
/// the number of bytes that were missing instead of failing.
#[allow(clippy::too_many_arguments)]
pub fn for_each_block(
    src: &TraceSource,
    endian: Endian,
    codec: Codec,
    buffer: &Buffer,
    cpu: &CpuData,
    salvage: bool,
    reader: &mut PageReader,
    mut on_block: impl FnMut(&PageBlock) -> Result<()>,
) -> Result<u64> {
    let ps = buffer.page_size;
    if cpu.size == 0 {
        return Ok(0);
    }
    // For compressed data the recorded size does not count the leading u32 chunk count.
    let extra = if buffer.compressed { 4 } else { 0 };
    let end = cpu.offset.saturating_add(cpu.size).saturating_add(extra);
    let mut missing = 0u64;
    let avail_end = if end > src.len {
        if !salvage {
            return Err(TraceError::new(format!(
                "file truncated: CPU data needs bytes {:#x}..{:#x} but the file has {} bytes ({} bytes missing)",
                cpu.offset,
                end,
                src.len,
                end - src.len
            ))
            .at(src.len)
            .cpu(cpu.cpu)
            .fix("copy the trace.dat again (it is incomplete); or pass --salvage to convert the complete pages and record the loss in metadata.json"));
        }
        missing = end - src.len;
        src.len
    } else {
        end
    };
    if !buffer.compressed {
        let mut off = cpu.offset;
        while off + ps as u64 <= avail_end {
            let n = (((avail_end - off) / ps as u64) as usize).min(PAGES_PER_READ);
            reader.pages.resize(n * ps, 0);
            src.read_into(off, &mut reader.pages, "ring-buffer pages").map_err(|e| e.cpu(cpu.cpu))?;
            on_block(&PageBlock { data: &reader.pages, page_size: ps, file_offset: off, file_bytes: (n * ps) as u64, compressed: false })?;
            off += (n * ps) as u64;
        }
        let tail = avail_end - off;
        if tail > 0 && !salvage && missing == 0 {
            return Err(TraceError::new(format!("CPU data size {} is not a whole number of {}-byte pages", cpu.size, ps))
                .at(off)
                .cpu(cpu.cpu)
                .fix(FIX_RECOPY));
        }
        return Ok(missing + tail);
    }
    // Compressed chunks.
    reader.ahead.buf.clear();
    let count = {
        let h = reader.ahead.slice(src, cpu.offset, 4, avail_end, "chunk count").map_err(|e| e.cpu(cpu.cpu))?;
        endian.u32(h.try_into().unwrap())
    };
    let mut off = cpu.offset + 4;
    for i in 0..count {
        if off + 8 > avail_end {
            if salvage {
                return Ok(missing.max(1));
            }
            return Err(TraceError::new(format!("chunk {} of {} starts past the end of the CPU data", i, count))
                .at(off)
                .cpu(cpu.cpu)
                .fix(FIX_RECOPY));
        }
        let (zsize, usize_) = {
            let h = reader.ahead.slice(src, off, 8, avail_end, "chunk header").map_err(|e| e.cpu(cpu.cpu))?;
            (endian.u32(h[0..4].try_into().unwrap()) as u64, endian.u32(h[4..8].try_into().unwrap()) as usize)
        };
        if off + 8 + zsize > avail_end {
            if salvage {
                return Ok(missing.max(off + 8 + zsize - avail_end));
            }
            return Err(TraceError::new(format!(
                "chunk {} of {} claims {} compressed bytes, past the end of the CPU data at {:#x}",
                i, count, zsize, end
            ))
            .at(off)
            .cpu(cpu.cpu)
            .fix(FIX_RECOPY));
        }
        if usize_ % ps != 0 {
            return Err(TraceError::new(format!("chunk {} uncompressed size {} is not a whole number of {}-byte pages", i, usize_, ps))
                .at(off)
                .cpu(cpu.cpu)
                .fix(FIX_RECOPY));
        }
        limits::check_inflate("ring-buffer chunk", zsize, usize_ as u64, limits::MAX_CHUNK).map_err(|e| e.at(off).cpu(cpu.cpu))?;
        let z = reader.ahead.slice(src, off + 8, zsize as usize, avail_end, "compressed chunk").map_err(|e| e.cpu(cpu.cpu))?;
        reader.inflater.inflate(codec, z, usize_, &mut reader.pages).map_err(|e| {
            TraceError::new(format!("chunk {} of {} does not decompress ({:?}): {}", i, count, codec, e)).at(off).cpu(cpu.cpu).fix(FIX_RECOPY)
        })?;
        on_block(&PageBlock { data: &reader.pages, page_size: ps, file_offset: off, file_bytes: 8 + zsize, compressed: true })?;
        off += 8 + zsize;
    }
    Ok(missing)
}
