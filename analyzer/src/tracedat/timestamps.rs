//! Turning raw ring-buffer timestamps into the file's time base, exactly as libtracecmd
//! does on open: host/guest time sync (TIME_SHIFT, top buffer only), TSC -> ns
//! (TSC2NSEC), then the fixed offsets (DATE in us, OFFSET in ns).

use super::bytes::{Cursor, Endian};
use super::error::Result;
use super::file::Options;

#[derive(Clone, Copy, Debug)]
pub struct Tsc2Nsec {
    pub mult: u32,
    pub shift: u32,
    pub offset: u64,
}

#[derive(Clone, Copy, Debug)]
struct Sample {
    time: i64,
    offset: i64,
    scaling: u64,
    fraction: u64,
}

/// TIME_SHIFT option: per-CPU offset samples from trace-cmd's host/guest time sync.
#[derive(Clone, Debug)]
pub struct TimeShift {
    pub peer_trace_id: u64,
    pub flags: u32,
    cpus: Vec<Vec<Sample>>,
}

const TSYNC_FLAG_INTERPOLATE: u32 = 1;

impl TimeShift {
    pub fn parse(data: &[u8], endian: Endian) -> Result<TimeShift> {
        let mut c = Cursor::new(data, 0, endian);
        let peer_trace_id = c.u64("time shift peer id")?;
        let flags = c.u32("time shift flags")?;
        let ncpu = c.u32("time shift cpu count")?;
        let mut cpus = Vec::new();
        for _ in 0..ncpu.min(65536) {
            let n = c.u32("time shift sample count")? as usize;
            if n * 24 > c.remaining() {
                return Err(super::error::TraceError::new(format!("time shift option claims {} samples, more than it holds", n)));
            }
            let mut s: Vec<Sample> = (0..n).map(|_| Sample { time: 0, offset: 0, scaling: 1, fraction: 0 }).collect();
            for x in s.iter_mut() {
                x.time = c.u64("sample time")? as i64;
            }
            for x in s.iter_mut() {
                x.offset = c.u64("sample offset")? as i64;
            }
            for x in s.iter_mut() {
                x.scaling = c.u64("sample scaling")?;
            }
            cpus.push(s);
        }
        // Optional trailing fraction bits, one array per CPU.
        if c.remaining() > 0 {
            for s in cpus.iter_mut() {
                for x in s.iter_mut() {
                    x.fraction = c.u64("sample fraction")?;
                }
            }
        }
        for s in cpus.iter_mut() {
            s.sort_by_key(|x| x.time);
            s.dedup_by_key(|x| x.time);
        }
        Ok(TimeShift { peer_trace_id, flags, cpus })
    }

    fn correct(&self, ts: u64, cpu: usize) -> u64 {
        let Some(s) = self.cpus.get(cpu) else { return ts };
        match s.len() {
            0 => ts,
            1 => ts.wrapping_add(s[0].offset as u64),
            n => {
                let i = if ts as i64 <= s[0].time {
                    0
                } else if ts as i64 >= s[n - 1].time {
                    n - 2
                } else {
                    // Last sample whose time <= ts (libtracecmd's binary search lands there).
                    let p = s.partition_point(|x| x.time <= ts as i64);
                    (p - 1).min(n - 2)
                };
                self.calc(ts, &s[i], &s[i + 1])
            }
        }
    }

    fn calc(&self, ts: u64, min: &Sample, max: &Sample) -> u64 {
        let tscor = if self.flags & TSYNC_FLAG_INTERPOLATE != 0 {
            let delta = max.time.wrapping_sub(min.time);
            let off = (ts as i64).wrapping_sub(min.time).wrapping_mul(max.offset.wrapping_sub(min.offset));
            if delta == 0 { min.offset } else { min.offset.wrapping_add(off.wrapping_add(delta / 2) / delta) }
        } else {
            min.offset
        };
        let ts = if min.fraction < 64 { ts.wrapping_mul(min.scaling) >> min.fraction } else { 0 };
        if tscor < 0 { ts.wrapping_sub(tscor.unsigned_abs()) } else { ts.wrapping_add(tscor as u64) }
    }
}

/// The kernel's mul_u64_u32_shr, as trace-cmd uses it.
fn mul_u64_u32_shr(a: u64, mul: u64, shift: u32) -> u64 {
    let al = a & 0xffff_ffff;
    let ah = a >> 32;
    let mut ret = al.wrapping_mul(mul) >> shift;
    if ah != 0 {
        ret = ret.wrapping_add(ah.wrapping_mul(mul) << (32 - shift));
    }
    ret
}

/// C's strtoll(s, NULL, 0): optional sign, 0x hex, leading-0 octal, else decimal;
/// stops at the first character that does not fit.
pub fn strtoll0(s: &str) -> i64 {
    let s = s.trim_start();
    let (neg, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = if s.starts_with("0x") || s.starts_with("0X") {
        (16, &s[2..])
    } else if s.starts_with('0') && s.len() > 1 {
        (8, &s[1..])
    } else {
        (10, s)
    };
    let mut v: i64 = 0;
    for c in digits.chars() {
        match c.to_digit(radix) {
            Some(d) => v = v.saturating_mul(radix as i64).saturating_add(d as i64),
            None => break,
        }
    }
    if neg { -v } else { v }
}

/// Everything needed to correct one buffer's timestamps.
#[derive(Clone, Debug, Default)]
pub struct TimestampRule {
    pub time_shift: Option<TimeShift>,
    pub tsc2nsec: Option<Tsc2Nsec>,
    /// DATE (us -> ns) plus OFFSET (ns).
    pub offset_ns: i64,
}

impl TimestampRule {
    pub fn from_options(o: &Options, top_buffer: bool) -> TimestampRule {
        let mut offset_ns: i64 = 0;
        if let Some(d) = &o.date {
            offset_ns = offset_ns.wrapping_add(strtoll0(d).wrapping_mul(1000));
        }
        if let Some(off) = &o.offset {
            offset_ns = offset_ns.wrapping_add(strtoll0(off));
        }
        TimestampRule {
            // libtracecmd drops the time-sync samples for instance buffers.
            time_shift: if top_buffer { o.time_shift.clone().filter(|t| !t.cpus.is_empty()) } else { None },
            tsc2nsec: o.tsc2nsec.filter(|t| t.mult != 0),
            offset_ns,
        }
    }

    pub fn is_identity(&self) -> bool {
        self.time_shift.is_none() && self.tsc2nsec.is_none() && self.offset_ns == 0
    }

    #[inline]
    pub fn apply(&self, raw: u64, cpu: usize) -> u64 {
        let mut ts = raw;
        if let Some(t) = &self.time_shift {
            ts = t.correct(ts, cpu);
        }
        if let Some(t) = &self.tsc2nsec {
            ts = mul_u64_u32_shr(ts, t.mult as u64, t.shift);
        }
        ts.wrapping_add(self.offset_ns as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtoll_bases() {
        assert_eq!(strtoll0("0x10"), 16);
        assert_eq!(strtoll0("-25"), -25);
        assert_eq!(strtoll0("010"), 8);
        assert_eq!(strtoll0("  42abc"), 42);
        assert_eq!(strtoll0("0"), 0);
    }

    #[test]
    fn date_is_microseconds_offset_is_nanoseconds() {
        let o = Options { date: Some("0x2".into()), offset: Some("-5".into()), ..Default::default() };
        let r = TimestampRule::from_options(&o, true);
        assert_eq!(r.apply(1000, 0), 1000 + 2000 - 5);
    }

    #[test]
    fn tsc2nsec_scales() {
        // mult/2^shift = 0.5: a 2 GHz TSC.
        let o = Options { tsc2nsec: Some(Tsc2Nsec { mult: 1 << 31, shift: 32, offset: 0 }), ..Default::default() };
        let r = TimestampRule::from_options(&o, true);
        assert_eq!(r.apply(4_000_000_000, 0), 2_000_000_000);
        assert_eq!(r.apply(1 << 40, 0), 1 << 39);
    }

    fn shift_bytes(samples: &[(i64, i64)], interpolate: bool) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&7u64.to_le_bytes());
        b.extend_from_slice(&(interpolate as u32).to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&(samples.len() as u32).to_le_bytes());
        for s in samples {
            b.extend_from_slice(&(s.0 as u64).to_le_bytes());
        }
        for s in samples {
            b.extend_from_slice(&(s.1 as u64).to_le_bytes());
        }
        for _ in samples {
            b.extend_from_slice(&1u64.to_le_bytes());
        }
        b
    }

    #[test]
    fn time_shift_steps_and_interpolates() {
        let step = TimeShift::parse(&shift_bytes(&[(100, -10), (200, 40), (300, 90)], false), Endian::Little).unwrap();
        assert_eq!(step.correct(50, 0), 40);
        assert_eq!(step.correct(250, 0), 290);
        assert_eq!(step.correct(400, 0), 440);
        assert_eq!(step.correct(77, 5), 77, "a CPU without samples is left alone");
        let lin = TimeShift::parse(&shift_bytes(&[(100, 0), (200, 100)], true), Endian::Little).unwrap();
        assert_eq!(lin.correct(150, 0), 200);
        let only_top = TimestampRule::from_options(&Options { time_shift: Some(lin), ..Default::default() }, false);
        assert_eq!(only_top.apply(150, 0), 150);
    }
}
