//! Fuzz the whole reader: file header, options, sections, decompression, pages, records
//! and column building. Any input must give Ok or a clean error: no panic, no hang.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ntscope::convert::decode_only(data.to_vec(), data.first().map_or(false, |b| b & 1 == 1));
});
