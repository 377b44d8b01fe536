//! How far a compressed block may inflate. Sizes in a trace file are data: a block that
//! declares more than the file can honestly hold is refused before any memory is set
//! aside for it, so a small file cannot make the converter use gigabytes.
//!
//! trace-cmd compresses each metadata section (options, formats, kallsyms ...) as one
//! block and ring-buffer data in chunks of 10 pages. Two bounds apply to every block:
//! a hard cap per kind of block, and a ratio cap: above `RATIO_FREE_BYTES`, a block may
//! not inflate more than `MAX_RATIO` times its compressed size.

use super::error::{TraceError, FIX_RECOPY};

/// deflate cannot exceed about 1032:1; zstd can, but real trace sections compress 3-20x.
pub const MAX_RATIO: u64 = 1032;
/// Blocks up to this size may have any ratio (a chunk of near-empty pages compresses
/// more than 1000:1, and ten 64 KiB pages are 640 KiB).
pub const RATIO_FREE_BYTES: u64 = 1 << 20;

/// One ring-buffer chunk (trace-cmd writes 10 pages; pages are at most 1 MiB).
pub const MAX_CHUNK: u64 = 64 << 20;
/// The options section: text options, per-CPU stats, time-sync samples.
pub const MAX_OPTIONS: u64 = 64 << 20;
/// header_page + header_event: two short texts.
pub const MAX_HEADER_INFO: u64 = 1 << 20;
/// Event format texts (a kernel with every event: a few MB).
pub const MAX_FORMATS: u64 = 64 << 20;
/// kallsyms, printk formats and saved cmdlines.
pub const MAX_KALLSYMS: u64 = 256 << 20;
pub const MAX_TEXT_SECTION: u64 = 64 << 20;

/// Checks a block that declares `declared` bytes uncompressed from `compressed` bytes.
pub fn check_inflate(what: &str, compressed: u64, declared: u64, hard_cap: u64) -> Result<(), TraceError> {
    let ratio_cap = compressed.saturating_mul(MAX_RATIO).max(RATIO_FREE_BYTES);
    let limit = hard_cap.min(ratio_cap);
    if declared <= limit {
        return Ok(());
    }
    let why = if declared > hard_cap {
        format!("more than the {}-byte limit for the {}", hard_cap, what)
    } else {
        format!("a ratio of {}:1, above the {}:1 real data never reaches", declared / compressed.max(1), MAX_RATIO)
    };
    Err(TraceError::new(format!(
        "{}: a compressed block of {} bytes declares {} bytes uncompressed, {}; refusing to inflate it",
        what, compressed, declared, why
    ))
    .fix(FIX_RECOPY))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds() {
        assert!(check_inflate("options section", 40_000, 1 << 20, MAX_OPTIONS).is_ok());
        assert!(check_inflate("options section", 100, RATIO_FREE_BYTES, MAX_OPTIONS).is_ok(), "small blocks: any ratio");
        let e = check_inflate("options section", 40_000, 1 << 30, MAX_OPTIONS).unwrap_err();
        assert!(e.what.contains("1073741824") && e.what.contains("40000") && e.what.contains("options section"), "{}", e);
        let e = check_inflate("chunk", 2000, 8 << 20, MAX_CHUNK).unwrap_err();
        assert!(e.what.contains("ratio of 4194:1"), "{}", e);
    }
}
