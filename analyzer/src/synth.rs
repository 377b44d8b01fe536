//! A trace.dat writer for tests and benchmarks: builds v6 or v7 files (compression none,
//! zlib or zstd; any options; several instances; chained options sections) from event
//! records, so every path of the reader can be checked against libtracecmd and against
//! an exact known answer. Not used by conversion itself.

use crate::tracedat::bytes::Endian;
use crate::tracedat::source::Codec;
use std::io::Write;

/// The byte order and kernel long size of a synthetic trace (the recording user space is
/// taken to have the same long).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Abi {
    pub endian: Endian,
    pub long_size: usize,
}

impl Abi {
    /// x86-64, arm64.
    pub const LE64: Abi = Abi { endian: Endian::Little, long_size: 8 };

    pub fn u16(self, v: u16) -> [u8; 2] {
        match self.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }
    pub fn u32(self, v: u32) -> [u8; 4] {
        match self.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }
    pub fn u64(self, v: u64) -> [u8; 8] {
        match self.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }
    /// A ring-buffer event header: the bitfields `type_len:5, time_delta:27`, which a
    /// big-endian kernel lays out from the most significant bit.
    pub fn event_header(self, type_len: u32, delta: u32) -> [u8; 4] {
        match self.endian {
            Endian::Little => self.u32(type_len | delta << 5),
            Endian::Big => self.u32(type_len << 27 | delta),
        }
    }
    /// A kernel long (the low bytes of `v` on a 32-bit kernel).
    pub fn long(self, v: u64) -> Vec<u8> {
        if self.long_size == 4 {
            self.u32(v as u32).to_vec()
        } else {
            self.u64(v).to_vec()
        }
    }
    /// The `header_page` text: the page's commit word is a kernel long.
    pub fn header_page(self) -> String {
        if self.long_size == 8 {
            return HEADER_PAGE.to_string();
        }
        "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:12;\tsize:4084;\tsigned:1;\n".to_string()
    }
}

pub const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";
pub const HEADER_EVENT: &str = "# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n\ttime_stamp : type == 31\n\tdata max type_len  == 28\n";

const COMMON: &str = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

/// A format text with the standard common fields; `fields` are the event's own lines.
pub fn format_text(name: &str, id: u32, fields: &[&str]) -> String {
    format_text_printing(name, id, fields, "\"synthetic\"")
}

/// `format_text` with the `print fmt:` the kernel would give (what libtraceevent prints).
pub fn format_text_printing(name: &str, id: u32, fields: &[&str], print_fmt: &str) -> String {
    let mut s = format!("name: {}\nID: {}\nformat:\n{}", name, id, COMMON);
    for f in fields {
        s.push('\t');
        s.push_str(f);
        s.push('\n');
    }
    s.push_str("\nprint fmt: ");
    s.push_str(print_fmt);
    s.push('\n');
    s
}

/// Packs (timestamp, payload) records of one CPU into ring-buffer pages.
pub struct PageWriter {
    abi: Abi,
    page_size: usize,
    pages: Vec<u8>,
    cur: Vec<u8>,
    page_ts: u64,
    last_ts: u64,
    /// Set the "missed events" flag (with this count) on the next page started.
    pub pending_missed: Option<u64>,
    cur_missed: Option<u64>,
}

impl PageWriter {
    pub fn new(page_size: usize) -> Self {
        Self::with_abi(page_size, Abi::LE64)
    }

    pub fn with_abi(page_size: usize, abi: Abi) -> Self {
        PageWriter { abi, page_size, pages: Vec::new(), cur: Vec::new(), page_ts: 0, last_ts: 0, pending_missed: None, cur_missed: None }
    }

    fn capacity(&self) -> usize {
        // Keep room for a stored missed-events count after the data.
        self.page_size - (8 + self.abi.long_size) - 8
    }

    /// Ends the current page, so the next record starts a new one.
    pub fn flush_page(&mut self) {
        self.flush();
    }

    fn flush(&mut self) {
        if self.cur.is_empty() && self.cur_missed.is_none() {
            return;
        }
        let mut commit = self.cur.len() as u64;
        let mut tail = Vec::new();
        if let Some(n) = self.cur_missed.take() {
            commit |= 1 << 31 | 1 << 30;
            tail = self.abi.long(n);
        }
        let start = self.pages.len();
        self.pages.extend_from_slice(&self.abi.u64(self.page_ts));
        self.pages.extend_from_slice(&self.abi.long(commit));
        self.pages.extend_from_slice(&self.cur);
        self.pages.extend_from_slice(&tail);
        self.pages.resize(start + self.page_size, 0);
        self.cur.clear();
    }

    /// Appends one record; timestamps must not go backwards.
    pub fn push(&mut self, ts: u64, payload: &[u8]) {
        let len = (payload.len() + 3) & !3;
        let need = if len <= 112 { 4 + len } else { 8 + len } + 8;
        if self.cur.is_empty() || self.cur.len() + need > self.capacity() {
            self.flush();
            self.page_ts = ts;
            self.last_ts = ts;
            self.cur_missed = self.pending_missed.take();
        }
        let mut delta = ts - self.last_ts;
        if delta >= 1 << 27 {
            self.cur.extend_from_slice(&self.abi.event_header(30, (delta & ((1 << 27) - 1)) as u32));
            self.cur.extend_from_slice(&self.abi.u32((delta >> 27) as u32));
            delta = 0;
        }
        if len <= 112 && len > 0 {
            self.cur.extend_from_slice(&self.abi.event_header((len / 4) as u32, delta as u32));
        } else {
            self.cur.extend_from_slice(&self.abi.event_header(0, delta as u32));
            self.cur.extend_from_slice(&self.abi.u32((payload.len() + 4) as u32));
        }
        self.cur.extend_from_slice(payload);
        self.cur.resize(self.cur.len() + (len - payload.len()), 0);
        self.last_ts = ts;
    }

    pub fn finish(mut self) -> Vec<u8> {
        self.flush();
        self.pages
    }
}

pub struct SynthBuffer {
    pub name: String,
    pub clock: String,
    /// Page data per CPU (a whole number of pages each; may be empty).
    pub cpus: Vec<Vec<u8>>,
}

pub struct SynthTrace {
    pub version: u32,
    pub abi: Abi,
    pub codec: Codec,
    pub page_size: usize,
    /// (system, format text)
    pub formats: Vec<(String, String)>,
    pub cmdlines: String,
    /// Extra options (id, data) written in the first options section.
    pub options: Vec<(u16, Vec<u8>)>,
    /// Options written in a second, chained options section (v7 only).
    pub chained_options: Vec<(u16, Vec<u8>)>,
    pub buffers: Vec<SynthBuffer>,
    /// Pages per compressed chunk.
    pub chunk_pages: usize,
    /// Compressed sections given as is, by section id: (compressed bytes, declared
    /// uncompressed size). Bad-input tests use it for blocks that lie or inflate hugely.
    pub raw_sections: std::collections::HashMap<u16, (Vec<u8>, u32)>,
    /// The kallsyms and printk-formats sections' text (empty: none).
    pub kallsyms: String,
    pub printk: String,
}

fn compress(codec: Codec, data: &[u8]) -> Vec<u8> {
    match codec {
        Codec::None => data.to_vec(),
        Codec::Zstd => zstd::bulk::compress(data, 1).expect("zstd"),
        Codec::Zlib => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
    }
}

fn cstr(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

fn align(out: &mut Vec<u8>, to: usize) {
    let n = (out.len() + to - 1) / to * to;
    out.resize(n, 0);
}

impl SynthTrace {
    pub fn new(version: u32, codec: Codec) -> Self {
        SynthTrace {
            version,
            abi: Abi::LE64,
            codec,
            page_size: 4096,
            formats: Vec::new(),
            cmdlines: String::new(),
            options: Vec::new(),
            chained_options: Vec::new(),
            buffers: Vec::new(),
            chunk_pages: 10,
            raw_sections: std::collections::HashMap::new(),
            kallsyms: String::new(),
            printk: String::new(),
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        if self.version == 6 {
            self.v6()
        } else {
            self.v7()
        }
    }

    fn preamble(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"\x17\x08\x44tracing");
        cstr(out, &self.version.to_string());
        out.push((self.abi.endian == Endian::Big) as u8);
        out.push(self.abi.long_size as u8);
        out.extend_from_slice(&self.abi.u32(self.page_size as u32));
    }

    fn header_info(&self, out: &mut Vec<u8>) {
        let page = self.abi.header_page();
        out.extend_from_slice(b"header_page\0");
        out.extend_from_slice(&self.abi.u64(page.len() as u64));
        out.extend_from_slice(page.as_bytes());
        out.extend_from_slice(b"header_event\0");
        out.extend_from_slice(&self.abi.u64(HEADER_EVENT.len() as u64));
        out.extend_from_slice(HEADER_EVENT.as_bytes());
    }

    /// The ftrace formats section: the formats of system "ftrace" (count, then each sized).
    fn ftrace_formats(&self, out: &mut Vec<u8>) {
        let texts: Vec<&String> = self.formats.iter().filter(|(x, _)| x == "ftrace").map(|(_, t)| t).collect();
        out.extend_from_slice(&self.abi.u32(texts.len() as u32));
        for t in texts {
            out.extend_from_slice(&self.abi.u64(t.len() as u64));
            out.extend_from_slice(t.as_bytes());
        }
    }

    /// The event formats section: every other system's.
    fn event_formats(&self, out: &mut Vec<u8>) {
        let mut systems: Vec<&str> = Vec::new();
        for (s, _) in &self.formats {
            if s != "ftrace" && !systems.contains(&s.as_str()) {
                systems.push(s);
            }
        }
        out.extend_from_slice(&self.abi.u32(systems.len() as u32));
        for s in systems {
            cstr(out, s);
            let texts: Vec<&String> = self.formats.iter().filter(|(x, _)| x == s).map(|(_, t)| t).collect();
            out.extend_from_slice(&self.abi.u32(texts.len() as u32));
            for t in texts {
                out.extend_from_slice(&self.abi.u64(t.len() as u64));
                out.extend_from_slice(t.as_bytes());
            }
        }
    }

    /// A text section as trace-cmd writes kallsyms and printk formats: a 4-byte size, then the text.
    fn sized_text(&self, text: &str) -> Vec<u8> {
        let mut out = self.abi.u32(text.len() as u32).to_vec();
        out.extend_from_slice(text.as_bytes());
        out
    }

    fn option(&self, out: &mut Vec<u8>, id: u16, data: &[u8]) {
        out.extend_from_slice(&self.abi.u16(id));
        out.extend_from_slice(&self.abi.u32(data.len() as u32));
        out.extend_from_slice(data);
    }

    fn v6(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.preamble(&mut out);
        self.header_info(&mut out);
        self.ftrace_formats(&mut out);
        self.event_formats(&mut out);
        out.extend_from_slice(&self.sized_text(&self.kallsyms));
        out.extend_from_slice(&self.sized_text(&self.printk));
        out.extend_from_slice(&self.abi.u64(self.cmdlines.len() as u64));
        out.extend_from_slice(self.cmdlines.as_bytes());
        let top = &self.buffers[0];
        let ncpu = top.cpus.len();
        out.extend_from_slice(&self.abi.u32(ncpu as u32));
        out.extend_from_slice(b"options  \0");
        for (id, d) in &self.options {
            self.option(&mut out, *id, d);
        }
        // Instance buffers: BUFFER option -> offset of their own "flyrecord" block.
        let mut patch = Vec::new();
        for b in &self.buffers[1..] {
            let mut d = vec![0u8; 8];
            cstr(&mut d, &b.name);
            patch.push(out.len() + 6);
            self.option(&mut out, 3, &d);
        }
        out.extend_from_slice(&self.abi.u16(0));
        let mut tables = Vec::new();
        for (i, b) in self.buffers.iter().enumerate() {
            if i > 0 {
                let at = patch[i - 1];
                let here = out.len() as u64;
                out[at..at + 8].copy_from_slice(&self.abi.u64(here));
            }
            out.extend_from_slice(b"flyrecord\0");
            tables.push(out.len());
            out.resize(out.len() + 16 * ncpu, 0);
            let _ = b;
        }
        for (i, b) in self.buffers.iter().enumerate() {
            for (c, data) in b.cpus.iter().enumerate() {
                align(&mut out, self.page_size);
                let off = out.len() as u64;
                out.extend_from_slice(data);
                let t = tables[i] + 16 * c;
                out[t..t + 8].copy_from_slice(&self.abi.u64(off));
                out[t + 8..t + 16].copy_from_slice(&self.abi.u64(data.len() as u64));
            }
        }
        out
    }

    /// A v7 section: header then (optionally compressed) content. Returns its offset.
    fn section(&self, out: &mut Vec<u8>, id: u16, content: &[u8], compressible: bool) -> u64 {
        let at = out.len() as u64;
        let comp = compressible && self.codec != Codec::None;
        let body = if comp {
            let (z, declared) = match self.raw_sections.get(&id) {
                Some((z, declared)) => (z.clone(), *declared),
                None => (compress(self.codec, content), content.len() as u32),
            };
            let mut b = Vec::new();
            b.extend_from_slice(&self.abi.u32(z.len() as u32));
            b.extend_from_slice(&self.abi.u32(declared));
            b.extend_from_slice(&z);
            b
        } else {
            content.to_vec()
        };
        out.extend_from_slice(&self.abi.u16(id));
        out.extend_from_slice(&self.abi.u16(comp as u16));
        out.extend_from_slice(&self.abi.u32(0));
        out.extend_from_slice(&self.abi.u64(body.len() as u64));
        out.extend_from_slice(&body);
        at
    }

    fn v7(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.preamble(&mut out);
        match self.codec {
            Codec::None => {
                cstr(&mut out, "none");
                cstr(&mut out, "");
            }
            Codec::Zstd => {
                cstr(&mut out, "zstd");
                cstr(&mut out, "1.5.4");
            }
            Codec::Zlib => {
                cstr(&mut out, "zlib");
                cstr(&mut out, "1.2.13");
            }
        }
        let first_opt_patch = out.len();
        out.extend_from_slice(&0u64.to_le_bytes());
        let mut hi = Vec::new();
        self.header_info(&mut hi);
        let hdr_off = self.section(&mut out, 16, &hi, true);
        let mut ft = Vec::new();
        self.ftrace_formats(&mut ft);
        let ftrace_off = self.section(&mut out, 17, &ft, true);
        let mut ev = Vec::new();
        self.event_formats(&mut ev);
        let ev_off = self.section(&mut out, 18, &ev, true);
        let mut symbol_sections = Vec::new();
        if !self.kallsyms.is_empty() {
            symbol_sections.push((19u16, self.section(&mut out, 19, &self.sized_text(&self.kallsyms), true)));
        }
        if !self.printk.is_empty() {
            symbol_sections.push((20u16, self.section(&mut out, 20, &self.sized_text(&self.printk), true)));
        }
        let mut cl = self.abi.u64(self.cmdlines.len() as u64).to_vec();
        cl.extend_from_slice(self.cmdlines.as_bytes());
        let cl_off = self.section(&mut out, 21, &cl, true);
        // Flyrecord sections, page aligned per CPU.
        let mut buffer_opts = Vec::new();
        for b in &self.buffers {
            let sec_at = out.len() as u64;
            let comp = self.codec != Codec::None;
            out.extend_from_slice(&self.abi.u16(3));
            out.extend_from_slice(&self.abi.u16(comp as u16));
            out.extend_from_slice(&self.abi.u32(0));
            let size_at = out.len();
            out.extend_from_slice(&0u64.to_le_bytes());
            let start = out.len();
            let mut cpus = Vec::new();
            for data in &b.cpus {
                align(&mut out, self.page_size);
                let off = out.len() as u64;
                if comp {
                    let chunks: Vec<&[u8]> = data.chunks(self.page_size * self.chunk_pages).collect();
                    out.extend_from_slice(&self.abi.u32(chunks.len() as u32));
                    let mut size = 0u64;
                    for ch in chunks {
                        let z = compress(self.codec, ch);
                        out.extend_from_slice(&self.abi.u32(z.len() as u32));
                        out.extend_from_slice(&self.abi.u32(ch.len() as u32));
                        out.extend_from_slice(&z);
                        size += 8 + z.len() as u64;
                    }
                    cpus.push((off, size));
                } else {
                    out.extend_from_slice(data);
                    cpus.push((off, data.len() as u64));
                }
            }
            let sec_size = (out.len() - start) as u64;
            out[size_at..size_at + 8].copy_from_slice(&self.abi.u64(sec_size));
            let mut d = self.abi.u64(sec_at).to_vec();
            cstr(&mut d, &b.name);
            cstr(&mut d, &b.clock);
            d.extend_from_slice(&self.abi.u32(self.page_size as u32));
            d.extend_from_slice(&self.abi.u32(cpus.len() as u32));
            for (i, (off, size)) in cpus.iter().enumerate() {
                d.extend_from_slice(&self.abi.u32(i as u32));
                d.extend_from_slice(&self.abi.u64(*off));
                d.extend_from_slice(&self.abi.u64(*size));
            }
            buffer_opts.push(d);
        }
        // Options section(s).
        let mut opts = Vec::new();
        for (id, off) in [(16u16, hdr_off), (17, ftrace_off), (18, ev_off), (21, cl_off)].into_iter().chain(symbol_sections) {
            self.option(&mut opts, id, &self.abi.u64(off));
        }
        for (id, d) in &self.options {
            self.option(&mut opts, *id, d);
        }
        for d in &buffer_opts {
            self.option(&mut opts, 3, d);
        }
        let done_at = opts.len() + 6;
        self.option(&mut opts, 0, &0u64.to_le_bytes());
        let first_opt = if self.chained_options.is_empty() {
            self.section(&mut out, 0, &opts, false)
        } else {
            let mut second = Vec::new();
            for (id, d) in &self.chained_options {
                self.option(&mut second, *id, d);
            }
            self.option(&mut second, 0, &0u64.to_le_bytes());
            let second_at = self.section(&mut out, 0, &second, true);
            opts[done_at..done_at + 8].copy_from_slice(&self.abi.u64(second_at));
            self.section(&mut out, 0, &opts, false)
        };
        out[first_opt_patch..first_opt_patch + 8].copy_from_slice(&self.abi.u64(first_opt));
        out
    }
}

/// Payload for an event with the standard common fields (little-endian).
pub fn common(id: u16, pid: i32) -> Vec<u8> {
    common_abi(Abi::LE64, id, pid)
}

/// Payload for an event with the standard common fields, in `abi`'s byte order.
pub fn common_abi(abi: Abi, id: u16, pid: i32) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&abi.u16(id));
    p.push(1); // flags
    p.push(0); // preempt count
    p.extend_from_slice(&abi.u32(pid as u32));
    p
}

// ---------------- a trace with an exact known answer ----------------

pub const ALL_KINDS_ID: u16 = 900;
pub const TICK_ID: u16 = 901;

/// Every kind of field the reader handles, with round values computed from (cpu, i).
pub fn all_kinds_format() -> String {
    format_text(
        "all_kinds",
        ALL_KINDS_ID as u32,
        &[
            "field:s8 a_s8;\toffset:8;\tsize:1;\tsigned:1;",
            "field:short a_s16;\toffset:10;\tsize:2;\tsigned:1;",
            "field:int a_s32;\toffset:12;\tsize:4;\tsigned:1;",
            "field:long long a_s64;\toffset:16;\tsize:8;\tsigned:1;",
            "field:u64 a_u64;\toffset:24;\tsize:8;\tsigned:0;",
            "field:char name[8];\toffset:32;\tsize:8;\tsigned:0;",
            "field:u8 raw[4];\toffset:40;\tsize:4;\tsigned:0;",
            "field:s16 pair[2];\toffset:44;\tsize:4;\tsigned:1;",
            "field:__data_loc char[] msg;\toffset:48;\tsize:4;\tsigned:0;",
            "field:__data_loc u32[] vals;\toffset:52;\tsize:4;\tsigned:0;",
            "field:__rel_loc char[] rel;\toffset:56;\tsize:4;\tsigned:0;",
            "field:int pid;\toffset:60;\tsize:4;\tsigned:1;",
        ],
    )
}

pub fn tick_format() -> String {
    format_text("tick", TICK_ID as u32, &["field:u32 seq;\toffset:8;\tsize:4;\tsigned:0;"])
}

/// The values of all_kinds record `i` on `cpu`.
pub struct AllKinds {
    pub a_s8: i8,
    pub a_s16: i16,
    pub a_s32: i32,
    pub a_s64: i64,
    pub a_u64: u64,
    pub name: String,
    pub raw: [u8; 4],
    pub pair: [i16; 2],
    pub msg: String,
    pub vals: Vec<u32>,
    pub rel: String,
    pub pid: i32,
    pub common_pid: i32,
}

pub fn all_kinds_values(cpu: u32, i: u64) -> AllKinds {
    AllKinds {
        a_s8: -((i % 100) as i8),
        a_s16: -(i as i16),
        a_s32: (i as i32).wrapping_mul(1000) - 5,
        a_s64: -(i as i64) * 1_000_000_007,
        a_u64: u64::MAX - i,
        name: format!("n{}", i % 1000),
        raw: [i as u8, 1, 2, 3],
        pair: [-1, i as i16],
        msg: format!("msg-{}-{}", cpu, i),
        vals: (0..(i % 4) as u32).map(|k| i as u32 + k).collect(),
        rel: format!("r{}", i),
        pid: 1000 + cpu as i32,
        // Every 7th record comes from a pid without a saved cmdline.
        common_pid: if i % 7 == 6 { 999 } else { 100 + cpu as i32 },
    }
}

pub fn all_kinds_payload(abi: Abi, cpu: u32, i: u64) -> Vec<u8> {
    let v = all_kinds_values(cpu, i);
    let mut p = common_abi(abi, ALL_KINDS_ID, v.common_pid);
    p.resize(64, 0);
    p[8] = v.a_s8 as u8;
    p[10..12].copy_from_slice(&abi.u16(v.a_s16 as u16));
    p[12..16].copy_from_slice(&abi.u32(v.a_s32 as u32));
    p[16..24].copy_from_slice(&abi.u64(v.a_s64 as u64));
    p[24..32].copy_from_slice(&abi.u64(v.a_u64));
    p[32..32 + v.name.len()].copy_from_slice(v.name.as_bytes());
    p[40..44].copy_from_slice(&v.raw);
    p[44..46].copy_from_slice(&abi.u16(v.pair[0] as u16));
    p[46..48].copy_from_slice(&abi.u16(v.pair[1] as u16));
    p[60..64].copy_from_slice(&abi.u32(v.pid as u32));
    // Dynamic area: msg\0, vals, rel\0.
    let msg_at = p.len();
    p.extend_from_slice(v.msg.as_bytes());
    p.push(0);
    let vals_at = p.len();
    for x in &v.vals {
        p.extend_from_slice(&abi.u32(*x));
    }
    let rel_at = p.len();
    p.extend_from_slice(v.rel.as_bytes());
    p.push(0);
    let loc = |at: usize, len: usize| abi.u32((len as u32) << 16 | at as u32);
    p[48..52].copy_from_slice(&loc(msg_at, v.msg.len() + 1));
    p[52..56].copy_from_slice(&loc(vals_at, v.vals.len() * 4));
    // __rel_loc offsets count from the end of the field itself (56 + 4).
    p[56..60].copy_from_slice(&loc(rel_at - 60, v.rel.len() + 1));
    p
}

/// Raw timestamp of record `i` on `cpu`: 1.5 us apart, with a 2^28 ns gap every 1000
/// records so that time-extend entries are exercised.
pub fn raw_ts(cpu: u32, i: u64) -> u64 {
    1_000_000_000 + i * 1500 + (i / 1000) * (1 << 28) + cpu as u64 * 7
}

/// Page data for one CPU: `n` records alternating all_kinds and tick.
pub fn known_cpu_pages(abi: Abi, cpu: u32, n: u64, page_size: usize, missed_at: Option<u64>) -> Vec<u8> {
    let mut w = PageWriter::with_abi(page_size, abi);
    for i in 0..n {
        if Some(i) == missed_at {
            w.pending_missed = Some(42);
            w.flush_page();
        }
        if i % 2 == 0 {
            w.push(raw_ts(cpu, i), &all_kinds_payload(abi, cpu, i));
        } else {
            let mut p = common_abi(abi, TICK_ID, 100 + cpu as i32);
            p.extend_from_slice(&abi.u32(i as u32));
            w.push(raw_ts(cpu, i), &p);
        }
    }
    w.finish()
}

/// A known trace: `cpus` CPUs of `n` records each in the top buffer, and (optionally)
/// one instance "inst" with `n / 2` records on CPU 0.
pub fn known_trace(version: u32, codec: Codec, cpus: u32, n: u64, instance: bool) -> SynthTrace {
    known_trace_abi(Abi::LE64, version, codec, cpus, n, instance)
}

/// `known_trace` in another byte order or kernel long size.
pub fn known_trace_abi(abi: Abi, version: u32, codec: Codec, cpus: u32, n: u64, instance: bool) -> SynthTrace {
    let mut t = SynthTrace::new(version, codec);
    t.abi = abi;
    t.formats = vec![("ntscope_test".into(), all_kinds_format()), ("ntscope_test".into(), tick_format())];
    t.cmdlines = "100 proc-a\n101 proc-b\n".into();
    t.options.push((4, b"local global [mono] tai\0".to_vec()));
    t.options.push((5, b"Linux synth 6.1.0 x86_64\0".to_vec()));
    t.options.push((8, abi.u32(cpus).to_vec()));
    t.buffers.push(SynthBuffer {
        name: String::new(),
        clock: "mono".into(),
        cpus: (0..cpus).map(|c| known_cpu_pages(abi, c, n, t.page_size, None)).collect(),
    });
    if instance {
        let mut inst: Vec<Vec<u8>> = (0..cpus).map(|_| Vec::new()).collect();
        inst[0] = known_cpu_pages(abi, 0, n / 2, t.page_size, None);
        t.buffers.push(SynthBuffer { name: "inst".into(), clock: "mono".into(), cpus: inst });
    }
    t
}

// ---------------- scale: replicate real pages ----------------

/// Builds a large trace from a real one: the real pages of every CPU of the top buffer,
/// repeated (each copy shifted later in time) until at least `min_events` records.
/// Event formats, saved cmdlines, clock and uname are those of the real file.
pub fn replicate(path: &str, min_events: u64, codec: Codec) -> crate::tracedat::error::Result<(SynthTrace, u64)> {
    use crate::tracedat::file::TraceFile;
    use crate::tracedat::pages::{for_each_block, PageReader};
    use crate::tracedat::ringbuf::decode_page;
    let tf = TraceFile::open(path)?;
    let mut reader = PageReader::default();
    let top = tf.buffers.iter().find(|b| b.name.is_empty() && !b.latency).ok_or_else(|| {
        crate::tracedat::error::TraceError::new("no top buffer to replicate").file(path)
    })?;
    let mut per_cpu: Vec<Vec<u8>> = Vec::new();
    let mut events = 0u64;
    let (mut first, mut last) = (u64::MAX, 0u64);
    for cpu in &top.cpus {
        let mut pages = Vec::new();
        for_each_block(&tf.src, tf.endian, tf.codec, top, cpu, false, &mut reader, |block| {
            for page in block.pages() {
                let mut n = 0;
                let _ = decode_page(page, tf.page_header, tf.endian, |ts, _, _| {
                    first = first.min(ts);
                    last = last.max(ts);
                    n += 1;
                });
                if n > 0 {
                    events += n;
                    pages.extend_from_slice(page);
                }
            }
            Ok(())
        })?;
        per_cpu.push(pages);
    }
    if events == 0 {
        return Err(crate::tracedat::error::TraceError::new("the trace has no events to replicate").file(path));
    }
    let copies = min_events.div_ceil(events);
    let span = last - first + 1_000_000;
    let ps = top.page_size;
    let mut t = SynthTrace::new(7, codec);
    t.abi = Abi { endian: tf.endian, long_size: tf.long_size };
    t.page_size = ps;
    let mut systems: Vec<_> = tf.events.values().filter(|f| f.system != "ftrace").collect();
    systems.sort_by_key(|f| f.id);
    t.formats = systems.iter().map(|f| (f.system.clone(), f.text.clone())).collect();
    let mut cl: Vec<_> = tf.cmdlines.iter().collect();
    cl.sort();
    t.cmdlines = cl.iter().map(|(p, c)| format!("{} {}\n", p, c)).collect();
    if let Some(u) = &tf.options.uname {
        t.options.push((5, format!("{}\0", u).into_bytes()));
    }
    t.options.push((4, format!("[{}]\0", tf.trace_clock()).into_bytes()));
    let cpus = per_cpu
        .iter()
        .map(|pages| {
            let mut out = Vec::with_capacity(pages.len() * copies as usize);
            for k in 0..copies {
                for page in pages.chunks_exact(ps) {
                    let ts = tf.endian.u64(page[0..8].try_into().unwrap()) + k * span;
                    out.extend_from_slice(&t.abi.u64(ts));
                    out.extend_from_slice(&page[8..]);
                }
            }
            out
        })
        .collect();
    t.buffers.push(SynthBuffer { name: String::new(), clock: tf.trace_clock(), cpus });
    Ok((t, events * copies))
}
