//! Decoding one ftrace ring-buffer page (a "sub-buffer") into timestamped event records,
//! the way libtraceevent's kbuffer does: page header (timestamp, commit word with the
//! missed-events flags), then 4-byte event headers (type_len:5, time_delta:27) with
//! padding, time-extend and absolute-timestamp entries.

use super::bytes::Endian;
use super::format::PageHeader;

const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
const TS_SHIFT: u32 = 27;
const TS_MSB: u64 = 0xf8 << 56;
const MISSING_EVENTS: u64 = 1 << 31;
const MISSING_STORED: u64 = 1 << 30;
const COMMIT_MASK: u64 = (1 << 27) - 1;

/// Events the kernel dropped before this page (ring buffer overrun).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missed {
    None,
    /// The page says events were lost but not how many.
    Unknown,
    Count(u64),
}

/// Why a page cannot be trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageDamage {
    /// Byte offset inside the page.
    pub at: usize,
    pub what: String,
}

#[derive(Debug, PartialEq, Eq)]
pub struct PageSummary {
    pub missed: Missed,
    pub records: u64,
}

/// Decodes one page, calling `on_record(raw_ts, start, len)` for each event record in
/// order; the record is `page[start..start + len]`.
/// On damage, the records before it have been delivered and the damage is returned.
#[inline]
pub fn decode_page(
    page: &[u8],
    hdr: PageHeader,
    endian: Endian,
    mut on_record: impl FnMut(u64, usize, usize),
) -> Result<PageSummary, PageDamage> {
    if page.len() < hdr.data_offset {
        return Err(PageDamage { at: 0, what: format!("page of {} bytes is shorter than its header", page.len()) });
    }
    let mut timestamp = endian.u64(page[0..8].try_into().unwrap());
    let flags = endian.read_uint(page, 8, hdr.commit_size);
    let size = (flags & COMMIT_MASK) as usize;
    let data = &page[hdr.data_offset..];
    if size > data.len() {
        return Err(PageDamage {
            at: 8,
            what: format!("commit size {} is larger than the page data area ({} bytes)", size, data.len()),
        });
    }
    let missed = if flags & MISSING_EVENTS != 0 {
        if flags & MISSING_STORED != 0 && size + hdr.commit_size <= data.len() {
            Missed::Count(endian.read_uint(data, size, hdr.commit_size))
        } else {
            Missed::Unknown
        }
    } else {
        Missed::None
    };
    let data = &data[..size];
    let read4 = |at: usize| -> Option<u32> { data.get(at..at + 4).map(|b| endian.u32(b.try_into().unwrap())) };
    let mut next = 0usize;
    let mut records = 0u64;
    while next < size {
        let curr = next;
        let Some(word) = read4(curr) else {
            return Err(PageDamage { at: hdr.data_offset + curr, what: "event header runs past the commit size".into() });
        };
        let (type_len, delta) = match endian {
            Endian::Little => (word & 0x1f, (word >> 5) as u64),
            Endian::Big => (word >> 27, (word & ((1 << 27) - 1)) as u64),
        };
        match type_len {
            TYPE_PADDING => {
                // Discarded event or end-of-page filler: its length word says how far to skip.
                let len = read4(curr + 4).unwrap_or(u32::MAX) as usize;
                timestamp = timestamp.wrapping_add(delta);
                next = (curr + 4).saturating_add(len);
            }
            TYPE_TIME_EXTEND | TYPE_TIME_STAMP => {
                let Some(hi) = read4(curr + 4) else {
                    return Err(PageDamage { at: hdr.data_offset + curr, what: "time extend runs past the commit size".into() });
                };
                let ext = ((hi as u64) << TS_SHIFT).wrapping_add(delta);
                if type_len == TYPE_TIME_STAMP {
                    timestamp = ext | (timestamp & TS_MSB);
                } else {
                    timestamp = timestamp.wrapping_add(ext);
                }
                next = curr + 8;
            }
            _ => {
                let (start, len) = if type_len == 0 {
                    let Some(l) = read4(curr + 4) else {
                        return Err(PageDamage { at: hdr.data_offset + curr, what: "event length runs past the commit size".into() });
                    };
                    if l < 4 {
                        return Err(PageDamage { at: hdr.data_offset + curr, what: format!("event length word {} is below 4", l) });
                    }
                    (curr + 8, ((l as usize - 4) + 3) & !3)
                } else {
                    (curr + 4, type_len as usize * 4)
                };
                if start + len > size {
                    return Err(PageDamage {
                        at: hdr.data_offset + curr,
                        what: format!("event of {} bytes runs past the commit size {}", len, size),
                    });
                }
                timestamp = timestamp.wrapping_add(delta);
                on_record(timestamp, hdr.data_offset + start, len);
                records += 1;
                next = start + len;
            }
        }
    }
    Ok(PageSummary { missed, records })
}

#[cfg(test)]
pub mod tests {
    use super::*;

    pub const HDR64: PageHeader = PageHeader { commit_size: 8, data_offset: 16 };

    /// Builds a page: header timestamp, commit flags, then raw event words.
    pub fn page(ts: u64, flags_extra: u64, body: &[u8], lost: Option<u64>) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&ts.to_le_bytes());
        p.extend_from_slice(&(body.len() as u64 | flags_extra).to_le_bytes());
        p.extend_from_slice(body);
        if let Some(l) = lost {
            p.extend_from_slice(&l.to_le_bytes());
        }
        p.resize(4096, 0);
        p
    }

    pub fn ev_header(type_len: u32, delta: u32) -> [u8; 4] {
        (type_len | (delta << 5)).to_le_bytes()
    }

    fn collect(p: &[u8]) -> (Result<PageSummary, PageDamage>, Vec<(u64, Vec<u8>)>) {
        let mut v = Vec::new();
        let r = decode_page(p, HDR64, Endian::Little, |ts, s, l| v.push((ts, p[s..s + l].to_vec())));
        (r, v)
    }

    #[test]
    fn small_events_accumulate_deltas() {
        let mut b = Vec::new();
        b.extend_from_slice(&ev_header(2, 10)); // 8 bytes of data
        b.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        b.extend_from_slice(&ev_header(1, 5));
        b.extend_from_slice(&[9, 9, 9, 9]);
        let (r, v) = collect(&page(1000, 0, &b, None));
        assert_eq!(r.unwrap(), PageSummary { missed: Missed::None, records: 2 });
        assert_eq!(v, vec![(1010, vec![1, 2, 3, 4, 5, 6, 7, 8]), (1015, vec![9, 9, 9, 9])]);
    }

    #[test]
    fn long_event_uses_length_word_and_rounds_up() {
        let mut b = Vec::new();
        b.extend_from_slice(&ev_header(0, 1));
        b.extend_from_slice(&(4u32 + 6).to_le_bytes()); // 6 data bytes, stored in 8
        b.extend_from_slice(&[1, 2, 3, 4, 5, 6, 0, 0]);
        let (r, v) = collect(&page(0, 0, &b, None));
        assert_eq!(r.unwrap().records, 1);
        assert_eq!(v[0], (1, vec![1, 2, 3, 4, 5, 6, 0, 0]));
    }

    #[test]
    fn time_extend_and_absolute_timestamp() {
        let mut b = Vec::new();
        b.extend_from_slice(&ev_header(30, 3));
        b.extend_from_slice(&2u32.to_le_bytes()); // + (2<<27)+3
        b.extend_from_slice(&ev_header(1, 1));
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(&ev_header(31, 7));
        b.extend_from_slice(&1u32.to_le_bytes()); // absolute (1<<27)+7
        b.extend_from_slice(&ev_header(1, 0));
        b.extend_from_slice(&[0; 4]);
        let (_, v) = collect(&page(100, 0, &b, None));
        assert_eq!(v[0].0, 100 + (2 << 27) + 3 + 1);
        assert_eq!(v[1].0, (1 << 27) + 7);
    }

    #[test]
    fn padding_is_skipped_but_its_delta_counts() {
        let mut b = Vec::new();
        b.extend_from_slice(&ev_header(29, 4));
        b.extend_from_slice(&8u32.to_le_bytes()); // skip the length word and 4 more bytes
        b.extend_from_slice(&[0xee; 4]);
        b.extend_from_slice(&ev_header(1, 1));
        b.extend_from_slice(&[7; 4]);
        let (r, v) = collect(&page(10, 0, &b, None));
        assert_eq!(r.unwrap().records, 1);
        assert_eq!(v, vec![(15, vec![7; 4])]);
    }

    #[test]
    fn missed_events_flags() {
        let b = [ev_header(1, 0).as_slice(), &[0; 4]].concat();
        let (r, _) = collect(&page(0, MISSING_EVENTS | MISSING_STORED, &b, Some(42)));
        assert_eq!(r.unwrap().missed, Missed::Count(42));
        let (r, _) = collect(&page(0, MISSING_EVENTS, &b, None));
        assert_eq!(r.unwrap().missed, Missed::Unknown);
    }

    #[test]
    fn damage_is_reported_with_position() {
        let mut p = page(0, 0, &[], None);
        p[8..16].copy_from_slice(&5000u64.to_le_bytes());
        let (r, _) = collect(&p);
        assert!(r.unwrap_err().what.contains("commit size 5000"));
        let mut b = Vec::new();
        b.extend_from_slice(&ev_header(1, 0));
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(&ev_header(20, 0)); // claims 80 bytes, only 4 follow
        b.extend_from_slice(&[0; 4]);
        let (r, v) = collect(&page(0, 0, &b, None));
        let d = r.unwrap_err();
        assert_eq!(d.at, 16 + 8);
        assert_eq!(v.len(), 1, "records before the damage are delivered");
    }

    #[test]
    fn empty_page_has_no_records() {
        let (r, v) = collect(&page(0, 0, &[], None));
        assert_eq!(r.unwrap().records, 0);
        assert!(v.is_empty());
    }
}
