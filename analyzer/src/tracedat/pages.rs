//! Streams the ring-buffer pages of one CPU of one buffer, with bounded memory:
//! plain data is read a block of pages at a time; compressed data (v7) one chunk at
//! a time (u32 chunk count, then per chunk u32 compressed size, u32 size, data).

use super::bytes::Endian;
use super::error::{Result, TraceError, FIX_RECOPY};
use super::file::{Buffer, CpuData};
use super::source::{Codec, TraceSource};

const PAGES_PER_READ: usize = 256;

/// Calls `on_page(page, file_offset)` for every page; `file_offset` is the page's offset
/// in the file (plain data) or the offset of its compressed chunk.
/// With `salvage`, a truncated CPU section delivers its complete pages and returns
/// the number of bytes that were missing instead of failing.
pub fn for_each_page(
    src: &TraceSource,
    endian: Endian,
    codec: Codec,
    buffer: &Buffer,
    cpu: &CpuData,
    salvage: bool,
    mut on_page: impl FnMut(&[u8], u64) -> Result<()>,
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
        let mut buf = vec![0u8; ps * PAGES_PER_READ];
        let mut off = cpu.offset;
        while off + ps as u64 <= avail_end {
            let n = (((avail_end - off) / ps as u64) as usize).min(PAGES_PER_READ);
            let block = &mut buf[..n * ps];
            src.read_into(off, block, "ring-buffer pages").map_err(|e| e.cpu(cpu.cpu))?;
            for (i, page) in block.chunks_exact(ps).enumerate() {
                on_page(page, off + (i * ps) as u64)?;
            }
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
    let hdr = src.read_at(cpu.offset, 4, "chunk count").map_err(|e| e.cpu(cpu.cpu))?;
    let count = endian.u32(hdr[..4].try_into().unwrap());
    let mut off = cpu.offset + 4;
    let mut out = Vec::new();
    let mut z = Vec::new();
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
        let h = src.read_at(off, 8, "chunk header").map_err(|e| e.cpu(cpu.cpu))?;
        let zsize = endian.u32(h[0..4].try_into().unwrap()) as u64;
        let usize_ = endian.u32(h[4..8].try_into().unwrap()) as usize;
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
        if usize_ % ps != 0 || usize_ > 64 << 20 {
            return Err(TraceError::new(format!("chunk {} uncompressed size {} is not a whole number of pages", i, usize_))
                .at(off)
                .cpu(cpu.cpu)
                .fix(FIX_RECOPY));
        }
        z.resize(zsize as usize, 0);
        src.read_into(off + 8, &mut z, "compressed chunk").map_err(|e| e.cpu(cpu.cpu))?;
        codec.decompress(&z, usize_, &mut out).map_err(|e| {
            TraceError::new(format!("chunk {} does not decompress ({:?}): {}", i, codec, e)).at(off).cpu(cpu.cpu).fix(FIX_RECOPY)
        })?;
        if out.len() != usize_ {
            return Err(TraceError::new(format!("chunk {} decompressed to {} bytes, its header says {}", i, out.len(), usize_))
                .at(off)
                .cpu(cpu.cpu)
                .fix(FIX_RECOPY));
        }
        for page in out.chunks_exact(ps) {
            on_page(page, off)?;
        }
        off += 8 + zsize;
    }
    Ok(missing)
}
