//! The trace.dat container (versions 6 and 7): header, options (chained in v7), metadata
//! sections, and where each buffer's per-CPU ring-buffer pages are.
//! Reference: trace-cmd.dat.v6(5) and trace-cmd.dat.v7(5).

use super::bytes::{until_nul, Cursor, Endian};
use super::error::{Result, TraceError, FIX_RECOPY};
use super::format::{parse_event_format, parse_header_page, EventFormat, PageHeader};
use super::source::{ByteSource, Codec, FileWalker, TraceSource};
use super::symbols::TraceSymbols;
use super::timestamps::{TimeShift, TimestampRule, Tsc2Nsec};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

const MAGIC: &[u8; 10] = b"\x17\x08\x44tracing";

// Option ids (shared by v6 options and v7 option/section ids).
const OPT_DONE: u16 = 0;
const OPT_DATE: u16 = 1;
const OPT_CPUSTAT: u16 = 2;
const OPT_BUFFER: u16 = 3;
const OPT_TRACECLOCK: u16 = 4;
const OPT_UNAME: u16 = 5;
const OPT_HOOK: u16 = 6;
const OPT_OFFSET: u16 = 7;
const OPT_CPUCOUNT: u16 = 8;
const OPT_VERSION: u16 = 9;
const OPT_PROCMAPS: u16 = 10;
const OPT_TRACEID: u16 = 11;
const OPT_TIME_SHIFT: u16 = 12;
const OPT_GUEST: u16 = 13;
const OPT_TSC2NSEC: u16 = 14;
const OPT_STRINGS: u16 = 15;
const OPT_HEADER_INFO: u16 = 16;
const OPT_FTRACE_EVENTS: u16 = 17;
const OPT_EVENT_FORMATS: u16 = 18;
const OPT_KALLSYMS: u16 = 19;
const OPT_PRINTK: u16 = 20;
const OPT_CMDLINES: u16 = 21;
const OPT_BUFFER_TEXT: u16 = 22;
const OPT_BTF_FILE: u16 = 23;
const OPT_LAST_BOOT_INFO: u16 = 24;
const OPT_MODULES_FILE: u16 = 25;
const SEC_FL_COMPRESS: u16 = 1;

/// Where one CPU's ring-buffer pages are in the file.
#[derive(Clone, Debug)]
pub struct CpuData {
    pub cpu: u32,
    pub offset: u64,
    /// Bytes in the file (compressed size when the buffer is compressed).
    pub size: u64,
}

/// One ftrace instance ("" is the top buffer).
#[derive(Clone, Debug)]
pub struct Buffer {
    pub name: String,
    pub clock: String,
    pub page_size: usize,
    pub cpus: Vec<CpuData>,
    pub compressed: bool,
    /// A latency-tracer text buffer (no events to decode).
    pub latency: bool,
}

/// An option we do not know, kept so metadata can report it.
#[derive(Clone, Debug)]
pub struct UnknownOption {
    pub id: u16,
    pub size: u32,
    pub offset: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    pub date: Option<String>,
    pub offset: Option<String>,
    pub trace_clock: Option<String>,
    pub uname: Option<String>,
    pub tracecmd_version: Option<String>,
    pub cpu_count: Option<u32>,
    pub trace_id: Option<u64>,
    pub cpustats: Vec<String>,
    pub tsc2nsec: Option<Tsc2Nsec>,
    pub time_shift: Option<TimeShift>,
    pub guests: Vec<String>,
    pub hooks: Vec<String>,
    pub unknown: Vec<UnknownOption>,
}

pub struct TraceFile {
    pub src: Arc<TraceSource>,
    pub version: u32,
    pub endian: Endian,
    /// Long size of the recording user space, from the file header.
    pub user_long_size: usize,
    /// Kernel long size (the ring buffer's commit word), from header_page.
    pub long_size: usize,
    pub page_size: usize,
    pub codec: Codec,
    pub compression: String,
    pub page_header: PageHeader,
    pub events: HashMap<u32, Arc<EventFormat>>,
    pub cmdlines: HashMap<i32, Arc<str>>,
    pub buffers: Vec<Buffer>,
    pub options: Options,
    /// The kallsyms and printk-formats sections (empty when the file has none).
    pub symbols: Arc<TraceSymbols>,
}

impl TraceFile {
    /// Opens a trace.dat and reads everything but the event data.
    pub fn open(path: &str) -> Result<TraceFile> {
        let src = Arc::new(TraceSource::open(path)?);
        Self::parse(src).map_err(|e| e.file(path))
    }

    /// Parses a trace held in memory (fuzzing, tests).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<TraceFile> {
        Self::parse(Arc::new(TraceSource::from_bytes(bytes, "<memory>")))
    }

    fn parse(src: Arc<TraceSource>) -> Result<TraceFile> {
        let head = src.read_at(0, 10.min(src.len as usize), "file magic")?;
        if head.as_slice() != MAGIC {
            return Err(TraceError::new(format!("not a trace-cmd trace.dat file (first bytes {:02x?})", head))
                .at(0)
                .fix("pass the trace.dat written by `trace-cmd record` (or `just capture`)"));
        }
        let mut w = FileWalker { src: src.clone(), pos: 10, endian: Endian::Little };
        let version_s = w.cstr("file version")?;
        let version: u32 = version_s.parse().map_err(|_| {
            TraceError::new(format!("unreadable file version {:?}", version_s)).at(10).fix(FIX_RECOPY)
        })?;
        if version != 6 && version != 7 {
            return Err(TraceError::new(format!("trace.dat version {} is not supported", version))
                .at(10)
                .fix("ntscope reads versions 6 and 7; convert with `trace-cmd convert --file-version 7`"));
        }
        let endian = match w.bytes(1, "endianness")?[0] {
            0 => Endian::Little,
            1 => Endian::Big,
            v => return Err(TraceError::new(format!("bad endianness byte {}", v)).at(w.pos - 1).fix(FIX_RECOPY)),
        };
        w.endian = endian;
        let user_long_size = w.bytes(1, "long size")?[0] as usize;
        let page_size = w.u32("page size")? as usize;
        if !(4096..=1 << 20).contains(&page_size) || !page_size.is_power_of_two() {
            return Err(TraceError::new(format!("implausible page size {}", page_size)).at(w.pos - 4).fix(FIX_RECOPY));
        }
        let mut tf = TraceFile {
            version,
            endian,
            user_long_size,
            long_size: 8,
            page_size,
            codec: Codec::None,
            compression: "none".into(),
            page_header: PageHeader { commit_size: 8, data_offset: 16 },
            events: HashMap::new(),
            cmdlines: HashMap::new(),
            buffers: Vec::new(),
            options: Options::default(),
            symbols: Arc::new(TraceSymbols::default()),
            src,
        };
        if version == 6 {
            let pos = w.pos;
            tf.parse_v6(pos)?;
        } else {
            let name = w.cstr("compression name")?;
            let cver = w.cstr("compression version")?;
            tf.codec = Codec::from_name(&name).map_err(|e| e.at(w.pos))?;
            tf.compression = if name.is_empty() { "none".into() } else { format!("{} {}", name, cver) };
            let first = w.u64("first options offset")?;
            tf.parse_v7(first)?;
        }
        if tf.buffers.is_empty() {
            return Err(TraceError::new("the file describes no trace buffer (no flyrecord data)")
                .fix("the recording did not finish writing the file: re-record, or copy the file again"));
        }
        Ok(tf)
    }

    // ---------------- version 6 ----------------

    fn parse_v6(&mut self, start: u64) -> Result<()> {
        let mut w = FileWalker { src: self.src.clone(), pos: start, endian: self.endian };
        let (ph, _) = read_header_info(&mut w)?;
        self.set_page_header(ph);
        let formats = read_ftrace_formats(&mut w)?;
        let mut all = formats;
        all.extend(read_event_formats(&mut w)?);
        let kallsyms = w.sized_blob(4, "kallsyms")?;
        let printk = w.sized_blob(4, "printk formats")?;
        self.set_symbols(kallsyms, &printk);
        let cmdlines = w.sized_blob(8, "saved cmdlines")?;
        let cpus = w.u32("cpu count")?;
        let mut kind = w.bytes(10, "options/flyrecord tag")?;
        let mut pending_buffers = Vec::new();
        if kind.starts_with(b"options") {
            loop {
                let at = w.pos;
                let id = u16_of(&w.bytes(2, "option id")?, self.endian);
                if id == OPT_DONE {
                    break;
                }
                let size = w.u32("option size")?;
                if size as u64 > w.limit() {
                    return Err(TraceError::new(format!("option {} claims {} bytes, more than the file holds", id, size))
                        .at(at)
                        .fix(FIX_RECOPY));
                }
                let data = w.bytes(size as usize, "option data")?;
                if id == OPT_BUFFER {
                    let mut c = Cursor::new(&data, at + 6, self.endian);
                    let off = c.u64("buffer offset")?;
                    let name = c.cstr("buffer name")?;
                    pending_buffers.push((name, off));
                } else {
                    self.apply_option(id, &data, at)?;
                }
            }
            kind = w.bytes(10, "flyrecord tag")?;
        }
        self.install_formats(all)?;
        self.parse_cmdlines(&cmdlines);
        let clock = selected_clock(&self.options.trace_clock.clone().unwrap_or_default());
        let top = self.read_v6_flyrecord(&kind, w.pos, cpus, "", &clock)?;
        self.buffers.push(top);
        for (name, off) in pending_buffers {
            let tag = self.src.read_at(off, 10, "instance buffer tag")?;
            let mut pos = off + 10;
            let mut tag = tag;
            if tag.starts_with(b"options") {
                // An instance may carry its own options list before its flyrecord tag.
                let mut w2 = FileWalker { src: self.src.clone(), pos, endian: self.endian };
                loop {
                    let id = u16_of(&w2.bytes(2, "option id")?, self.endian);
                    if id == OPT_DONE {
                        break;
                    }
                    let size = w2.u32("option size")?;
                    w2.bytes(size as usize, "option data")?;
                }
                tag = w2.bytes(10, "flyrecord tag")?;
                pos = w2.pos;
            }
            let b = self.read_v6_flyrecord(&tag, pos, cpus, &name, &clock)?;
            self.buffers.push(b);
        }
        Ok(())
    }

    fn read_v6_flyrecord(&self, tag: &[u8], pos: u64, cpus: u32, name: &str, clock: &str) -> Result<Buffer> {
        if tag.starts_with(b"latency") {
            return Ok(Buffer { name: name.into(), clock: clock.into(), page_size: self.page_size, cpus: vec![], compressed: false, latency: true });
        }
        if !tag.starts_with(b"flyrecord") {
            return Err(TraceError::new(format!("expected \"flyrecord\" tag, found {:?}", String::from_utf8_lossy(until_nul(tag))))
                .at(pos - 10)
                .fix(FIX_RECOPY));
        }
        let mut w = FileWalker { src: self.src.clone(), pos, endian: self.endian };
        let mut list = Vec::new();
        for cpu in 0..cpus {
            let offset = w.u64("cpu data offset")?;
            let size = w.u64("cpu data size")?;
            list.push(CpuData { cpu, offset, size });
        }
        Ok(Buffer { name: name.into(), clock: clock.into(), page_size: self.page_size, cpus: list, compressed: false, latency: false })
    }

    // ---------------- version 7 ----------------

    /// Reads a section header at `off`; returns (id, flags, size, data offset).
    fn section_header(&self, off: u64) -> Result<(u16, u16, u64, u64)> {
        let h = self.src.read_at(off, 16, "section header")?;
        let id = u16_of(&h[0..2], self.endian);
        let flags = u16_of(&h[2..4], self.endian);
        let size = self.endian.u64(h[8..16].try_into().unwrap());
        if off.checked_add(16).and_then(|x| x.checked_add(size)).map_or(true, |end| end > self.src.len) {
            return Err(TraceError::new(format!(
                "section {} claims {} bytes but the file ends {} bytes after its header",
                id,
                size,
                self.src.len.saturating_sub(off + 16)
            ))
            .at(off)
            .fix(FIX_RECOPY));
        }
        Ok((id, flags, size, off + 16))
    }

    /// The (decompressed) content of a metadata section.
    fn section_data(&self, off: u64, want_id: u16, what: &str) -> Result<(Vec<u8>, u64)> {
        let (id, flags, size, data_off) = self.section_header(off)?;
        if id != want_id {
            return Err(TraceError::new(format!("{}: expected section id {} at this offset, found {}", what, want_id, id))
                .at(off)
                .fix(FIX_RECOPY));
        }
        if flags & SEC_FL_COMPRESS != 0 {
            use super::limits::*;
            let max = match want_id {
                OPT_DONE => MAX_OPTIONS,
                OPT_HEADER_INFO => MAX_HEADER_INFO,
                OPT_FTRACE_EVENTS | OPT_EVENT_FORMATS => MAX_FORMATS,
                OPT_KALLSYMS => MAX_KALLSYMS,
                _ => MAX_TEXT_SECTION,
            };
            let (data, end) = self.src.read_compressed_block(data_off, self.endian, self.codec, what, max)?;
            if end > data_off + size {
                return Err(TraceError::new(format!("{}: compressed block runs past its section ({} bytes)", what, size))
                    .at(data_off)
                    .fix(FIX_RECOPY));
            }
            Ok((data, data_off))
        } else {
            Ok((self.src.read_at(data_off, size as usize, what)?, data_off))
        }
    }

    fn parse_v7(&mut self, first: u64) -> Result<()> {
        let mut sections: BTreeMap<u16, u64> = BTreeMap::new();
        let mut buffer_opts: Vec<(Vec<u8>, u64, u16)> = Vec::new();
        let mut next = first;
        let mut seen = std::collections::HashSet::new();
        while next != 0 {
            if !seen.insert(next) {
                return Err(TraceError::new("options sections form a loop").at(next).fix(FIX_RECOPY));
            }
            let (data, base) = self.section_data(next, OPT_DONE, "options section")?;
            let mut c = Cursor::new(&data, base, self.endian);
            next = 0;
            loop {
                let at = c.offset();
                let id = c.u16("option id")?;
                let size = c.u32("option size")?;
                let body = c.bytes(size as usize, "option data").map_err(|e| {
                    TraceError::new(format!("option {} claims {} bytes, more than its options section holds", id, size))
                        .at(at)
                        .fix(e.fix)
                })?;
                match id {
                    OPT_DONE => {
                        if body.len() >= 8 {
                            next = self.endian.u64(body[..8].try_into().unwrap());
                        }
                        break;
                    }
                    OPT_BUFFER | OPT_BUFFER_TEXT => buffer_opts.push((body.to_vec(), at, id)),
                    OPT_HEADER_INFO | OPT_FTRACE_EVENTS | OPT_EVENT_FORMATS | OPT_KALLSYMS | OPT_PRINTK | OPT_CMDLINES => {
                        if body.len() >= 8 {
                            sections.insert(id, self.endian.u64(body[..8].try_into().unwrap()));
                        }
                    }
                    _ => self.apply_option(id, body, at)?,
                }
            }
        }
        let hdr_off = *sections.get(&OPT_HEADER_INFO).ok_or_else(|| {
            TraceError::new("no HEADER_INFO section (ring-buffer page layout)").fix(FIX_RECOPY)
        })?;
        let (hdr, base) = self.section_data(hdr_off, OPT_HEADER_INFO, "header info")?;
        let (ph, _) = read_header_info(&mut Cursor::new(&hdr, base, self.endian))?;
        self.set_page_header(ph);
        let mut formats = Vec::new();
        if let Some(&off) = sections.get(&OPT_FTRACE_EVENTS) {
            let (d, base) = self.section_data(off, OPT_FTRACE_EVENTS, "ftrace event formats")?;
            formats.extend(read_ftrace_formats(&mut Cursor::new(&d, base, self.endian))?);
        }
        if let Some(&off) = sections.get(&OPT_EVENT_FORMATS) {
            let (d, base) = self.section_data(off, OPT_EVENT_FORMATS, "event formats")?;
            formats.extend(read_event_formats(&mut Cursor::new(&d, base, self.endian))?);
        }
        self.install_formats(formats)?;
        // Each holds a 4-byte size, then the text.
        let text_section = |id: u16, what: &str| -> Result<Vec<u8>> {
            match sections.get(&id) {
                Some(&off) => {
                    let (d, base) = self.section_data(off, id, what)?;
                    Cursor::new(&d, base, self.endian).sized_blob(4, what)
                }
                None => Ok(Vec::new()),
            }
        };
        let kallsyms = text_section(OPT_KALLSYMS, "kallsyms")?;
        let printk = text_section(OPT_PRINTK, "printk formats")?;
        self.set_symbols(kallsyms, &printk);
        if let Some(&off) = sections.get(&OPT_CMDLINES) {
            let (d, base) = self.section_data(off, OPT_CMDLINES, "saved cmdlines")?;
            let blob = Cursor::new(&d, base, self.endian).sized_blob(8, "saved cmdlines")?;
            self.parse_cmdlines(&blob);
        }
        for (body, at, id) in buffer_opts {
            let b = self.parse_v7_buffer(&body, at, id)?;
            self.buffers.push(b);
        }
        // The top buffer first, as trace-cmd reports it.
        self.buffers.sort_by_key(|b| !b.name.is_empty());
        Ok(())
    }

    fn parse_v7_buffer(&self, body: &[u8], at: u64, id: u16) -> Result<Buffer> {
        let mut c = Cursor::new(body, at + 6, self.endian);
        let sec_off = c.u64("buffer section offset")?;
        let name = c.cstr("buffer name")?;
        let clock = c.cstr("buffer clock")?;
        if id == OPT_BUFFER_TEXT {
            return Ok(Buffer { name, clock, page_size: self.page_size, cpus: vec![], compressed: false, latency: true });
        }
        let page_size = c.u32("buffer page size")? as usize;
        let ncpu = c.u32("buffer cpu count")?;
        if ncpu as usize > c.remaining() / 20 + 1 {
            return Err(TraceError::new(format!("buffer {:?} claims {} CPUs, more than its option holds", name, ncpu))
                .at(at)
                .fix(FIX_RECOPY));
        }
        let mut cpus = Vec::new();
        for _ in 0..ncpu {
            let cpu = c.u32("cpu id")?;
            let offset = c.u64("cpu data offset")?;
            let size = c.u64("cpu data size")?;
            cpus.push(CpuData { cpu, offset, size });
        }
        let (_, flags, _, _) = self.section_header(sec_off)?;
        if !(4096..=1 << 20).contains(&page_size) {
            return Err(TraceError::new(format!("buffer {:?}: implausible page size {}", name, page_size)).at(at).fix(FIX_RECOPY));
        }
        Ok(Buffer { name, clock, page_size, cpus, compressed: flags & SEC_FL_COMPRESS != 0, latency: false })
    }

    // ---------------- shared ----------------

    fn set_symbols(&mut self, kallsyms: Vec<u8>, printk: &[u8]) {
        self.symbols = Arc::new(TraceSymbols::new(kallsyms, printk));
    }

    fn set_page_header(&mut self, ph: PageHeader) {
        self.long_size = ph.commit_size;
        self.page_header = ph;
    }

    fn install_formats(&mut self, formats: Vec<(String, String)>) -> Result<()> {
        for (system, text) in formats {
            let f = parse_event_format(&system, &text, self.long_size)?;
            self.events.insert(f.id, Arc::new(f));
        }
        Ok(())
    }

    fn parse_cmdlines(&mut self, blob: &[u8]) {
        for line in String::from_utf8_lossy(blob).lines() {
            let line = line.trim_start();
            if let Some((pid, comm)) = line.split_once(' ') {
                if let Ok(pid) = pid.parse::<i32>() {
                    self.cmdlines.insert(pid, Arc::from(comm));
                }
            }
        }
    }

    fn apply_option(&mut self, id: u16, data: &[u8], at: u64) -> Result<()> {
        let text = || String::from_utf8_lossy(until_nul(data)).trim().to_string();
        let o = &mut self.options;
        match id {
            OPT_DATE => o.date = Some(text()),
            OPT_OFFSET => o.offset = Some(text()),
            OPT_CPUSTAT => o.cpustats.push(text()),
            OPT_TRACECLOCK => o.trace_clock = Some(text()),
            OPT_UNAME => o.uname = Some(text()),
            OPT_VERSION => o.tracecmd_version = Some(text()),
            OPT_HOOK => o.hooks.push(text()),
            OPT_CPUCOUNT if data.len() >= 4 => o.cpu_count = Some(self.endian.u32(data[..4].try_into().unwrap())),
            OPT_TRACEID if data.len() >= 8 => o.trace_id = Some(self.endian.u64(data[..8].try_into().unwrap())),
            OPT_TSC2NSEC if data.len() >= 16 => {
                o.tsc2nsec = Some(Tsc2Nsec {
                    mult: self.endian.u32(data[0..4].try_into().unwrap()),
                    shift: self.endian.u32(data[4..8].try_into().unwrap()),
                    offset: self.endian.u64(data[8..16].try_into().unwrap()),
                })
            }
            OPT_TIME_SHIFT if data.len() >= 16 => {
                o.time_shift = Some(TimeShift::parse(data, self.endian).map_err(|e| e.at(at))?);
            }
            OPT_GUEST => o.guests.push(String::from_utf8_lossy(until_nul(data)).into_owned()),
            OPT_CPUCOUNT | OPT_TRACEID | OPT_TSC2NSEC | OPT_TIME_SHIFT => {}
            OPT_PROCMAPS | OPT_STRINGS | OPT_BTF_FILE | OPT_LAST_BOOT_INFO | OPT_MODULES_FILE => {}
            _ => o.unknown.push(UnknownOption { id, size: data.len() as u32, offset: at }),
        }
        Ok(())
    }

    /// How raw ring-buffer timestamps of `buffer` become ns on the host's trace clock.
    pub fn timestamp_rule(&self, buffer: &Buffer) -> TimestampRule {
        TimestampRule::from_options(&self.options, buffer.name.is_empty())
    }

    pub fn trace_clock(&self) -> String {
        let top = self.buffers.iter().find(|b| b.name.is_empty());
        if let Some(b) = top {
            if !b.clock.is_empty() {
                return b.clock.clone();
            }
        }
        selected_clock(&self.options.trace_clock.clone().unwrap_or_default())
    }
}

/// The clock in use from the text of tracefs' trace_clock: "local global [mono] ...".
fn selected_clock(raw: &str) -> String {
    raw.split_whitespace()
        .find(|w| w.starts_with('['))
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        .unwrap_or_else(|| raw.trim().to_string())
}

fn u16_of(b: &[u8], e: Endian) -> u16 {
    e.u16([b[0], b[1]])
}

/// A NUL-terminated tag such as "header_page" followed by a u64-sized blob.
fn tagged_blob(w: &mut dyn ByteSource, tag: &str) -> Result<Vec<u8>> {
    let at = w.offset();
    let got = w.bytes(tag.len() + 1, tag)?;
    if &got[..tag.len()] != tag.as_bytes() || got[tag.len()] != 0 {
        return Err(TraceError::new(format!("expected {:?}, found {:?}", tag, String::from_utf8_lossy(&got)))
            .at(at)
            .fix(FIX_RECOPY));
    }
    w.sized_blob(8, tag)
}

/// header_page (the ring-buffer page layout) and header_event blobs.
fn read_header_info(w: &mut dyn ByteSource) -> Result<(PageHeader, Vec<u8>)> {
    let at = w.offset();
    let page = tagged_blob(w, "header_page")?;
    let event = tagged_blob(w, "header_event")?;
    let ph = parse_header_page(&String::from_utf8_lossy(&page)).map_err(|e| e.at(at))?;
    Ok((ph, event))
}

/// (system, format text) of each ftrace-internal event.
fn read_ftrace_formats(w: &mut dyn ByteSource) -> Result<Vec<(String, String)>> {
    let at = w.offset();
    let n = w.u32("ftrace format count")?;
    if n > 100_000 {
        return Err(TraceError::new(format!("implausible ftrace format count {}", n)).at(at).fix(FIX_RECOPY));
    }
    let mut out = Vec::new();
    for _ in 0..n {
        let text = w.sized_blob(8, "ftrace event format")?;
        out.push(("ftrace".to_string(), String::from_utf8_lossy(&text).into_owned()));
    }
    Ok(out)
}

fn read_event_formats(w: &mut dyn ByteSource) -> Result<Vec<(String, String)>> {
    let at = w.offset();
    let nsys = w.u32("event system count")?;
    if nsys > 100_000 {
        return Err(TraceError::new(format!("implausible event system count {}", nsys)).at(at).fix(FIX_RECOPY));
    }
    let mut out = Vec::new();
    for _ in 0..nsys {
        let system = w.cstr("event system name")?;
        let at = w.offset();
        let n = w.u32("event count")?;
        if n > 100_000 {
            return Err(TraceError::new(format!("implausible event count {} in system {}", n, system)).at(at).fix(FIX_RECOPY));
        }
        for _ in 0..n {
            let text = w.sized_blob(8, "event format")?;
            out.push((system.clone(), String::from_utf8_lossy(&text).into_owned()));
        }
    }
    Ok(out)
}
