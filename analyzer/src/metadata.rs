//! metadata.json: what the trace file says about itself (clock, uname, versions, CPUs),
//! per-CPU decode statistics and every kind of loss, so later stages can report it.

use crate::columns::ExtractCounts;
use crate::layout::Layout;
use crate::tracedat::file::TraceFile;
use crate::tracedat::source::TraceSource;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};

/// What decoding one CPU of one buffer found.
#[derive(Debug, Default)]
pub struct CpuStats {
    pub buffer: String,
    pub cpu: u32,
    pub pages: u64,
    pub events: u64,
    pub first_ts: Option<u64>,
    pub last_ts: Option<u64>,
    /// Records whose timestamp is below the previous one on the same CPU.
    pub out_of_order: u64,
    /// Pages flagged "events missed before this page", with a stored count.
    pub missed_pages: u64,
    pub missed_events: u64,
    /// Pages flagged "events missed" without a count.
    pub missed_pages_uncounted: u64,
    pub short_records: u64,
    pub unknown_ids: BTreeMap<u32, u64>,
    /// Records of event types skipped for their names (see `layout`).
    pub skipped_ids: BTreeMap<u32, u64>,
    /// (file offset, reason) of pages skipped under --salvage.
    pub damaged_pages: Vec<(u64, String)>,
    /// Bytes of CPU data beyond the end of a truncated file (--salvage).
    pub missing_bytes: u64,
    pub write_error: Option<String>,
}

impl CpuStats {
    pub fn new(buffer: &str, cpu: u32) -> CpuStats {
        CpuStats { buffer: buffer.to_string(), cpu, ..Default::default() }
    }
}

/// SHA-256 of the trace's bytes, read from the already-open file (the same bytes that
/// were decoded, even if the path is replaced meanwhile).
pub fn sha256_source(src: &TraceSource) -> std::io::Result<String> {
    use std::os::unix::fs::FileExt;
    let mut h = Sha256::new();
    match src.file() {
        None => h.update(src.memory().unwrap_or_default()),
        Some(f) => {
            let mut buf = vec![0u8; 1 << 20];
            let mut off = 0u64;
            while off < src.len {
                let n = f.read_at(&mut buf, off)?;
                if n == 0 {
                    break;
                }
                h.update(&buf[..n]);
                off += n as u64;
            }
        }
    }
    Ok(h.finalize().iter().map(|b| format!("{:02x}", b)).collect())
}

/// A CPUSTAT option ("CPU: 0\nentries: 0\noverrun: 0\n...") as an object with
/// snake_case keys; numbers where the value is one.
pub fn cpustat_json(text: &str) -> Value {
    let mut m = Map::new();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once(':') {
            let key = k.trim().to_lowercase().replace(' ', "_");
            let v = v.trim();
            let val = v.parse::<u64>().map(Value::from).or_else(|_| v.parse::<f64>().map(Value::from)).unwrap_or(Value::from(v));
            m.insert(if key == "cpu" { "cpu".into() } else { key }, val);
        }
    }
    Value::Object(m)
}

pub fn build(tf: &TraceFile, layout: &Layout, stats: &[CpuStats], rows: &HashMap<String, u64>, sha256: &str, counts: &ExtractCounts, seconds: f64) -> Value {
    let (short_records, bad_dynamic, invalid_utf8) = (counts.short_records, counts.bad_dynamic, counts.invalid_utf8);
    let sym = &tf.symbols;
    let o = &tf.options;
    let cpustats: Vec<Value> = o.cpustats.iter().map(|s| cpustat_json(s)).collect();
    // Lost events per CPU of the top buffer: the kernel's own counters (overrun, dropped)
    // and what the page flags told us; either may be the only one available.
    let mut lost = Map::new();
    for st in stats.iter().filter(|s| s.buffer.is_empty()) {
        let ks = cpustats.iter().find(|c| c.get("cpu").and_then(Value::as_u64) == Some(st.cpu as u64));
        let num = |k: &str| ks.and_then(|c| c.get(k)).and_then(Value::as_u64).unwrap_or(0);
        let (overrun, dropped) = (num("overrun"), num("dropped_events"));
        lost.insert(
            st.cpu.to_string(),
            json!({
                "ring_overrun": overrun,
                "dropped_events": dropped,
                "missed_events_in_pages": st.missed_events,
                "pages_with_missed_events": st.missed_pages + st.missed_pages_uncounted,
                "lost_events": (overrun + dropped).max(st.missed_events),
            }),
        );
    }
    let mut files: Vec<_> = layout.files.iter().filter(|f| rows.contains_key(&f.rel)).collect();
    files.sort_by_key(|f| (f.buffer, &tf.events[&f.id].system, &tf.events[&f.id].name));
    let event_rows: Vec<Value> = files
        .iter()
        .map(|f| {
            let e = &tf.events[&f.id];
            json!({"buffer": tf.buffers[f.buffer].name, "system": e.system, "event": e.name, "id": f.id, "rows": rows[&f.rel], "file": f.rel})
        })
        .collect();
    let mut skipped_records: BTreeMap<u32, u64> = BTreeMap::new();
    for s in stats {
        for (k, v) in &s.skipped_ids {
            *skipped_records.entry(*k).or_default() += v;
        }
    }
    let skipped_types: Vec<Value> = layout
        .skipped_types
        .iter()
        .map(|(id, why)| {
            let e = &tf.events[id];
            json!({"id": id, "system": e.system, "event": e.name, "reason": why, "records": skipped_records.get(id).copied().unwrap_or(0)})
        })
        .collect();
    let skipped_buffers: Vec<Value> = layout
        .skipped_buffers
        .iter()
        .map(|(bi, why)| {
            let b = &tf.buffers[*bi];
            json!({"name": b.name, "reason": why, "cpus": b.cpus.len(), "bytes": b.cpus.iter().map(|c| c.size).sum::<u64>()})
        })
        .collect();
    let mut unknown_ids: BTreeMap<u32, u64> = BTreeMap::new();
    for s in stats {
        for (k, v) in &s.unknown_ids {
            *unknown_ids.entry(*k).or_default() += v;
        }
    }
    let cpus: Vec<Value> = stats
        .iter()
        .map(|s| {
            json!({
                "buffer": s.buffer, "cpu": s.cpu, "pages": s.pages, "events": s.events,
                "first_ts": s.first_ts, "last_ts": s.last_ts, "out_of_order": s.out_of_order,
                "missed_events_in_pages": s.missed_events,
                "pages_with_missed_events": s.missed_pages + s.missed_pages_uncounted,
                "damaged_pages": s.damaged_pages.iter().map(|(off, what)| json!({"offset": off, "what": what})).collect::<Vec<_>>(),
                "missing_bytes": s.missing_bytes,
                "short_records": s.short_records,
            })
        })
        .collect();
    json!({
        // the ntscope version that wrote it (the crate's version is ntscope's: a test holds them equal)
        "ntscope_version": env!("CARGO_PKG_VERSION"),
        "source": {"path": tf.src.path, "size_bytes": tf.src.len, "sha256": sha256},
        "file_version": tf.version,
        "compression": tf.compression,
        "endian": format!("{:?}", tf.endian).to_lowercase(),
        "page_size": tf.page_size,
        "kernel_long_size": tf.long_size,
        "user_long_size": tf.user_long_size,
        "trace_clock": tf.trace_clock(),
        "uname": o.uname,
        "tracecmd_version": o.tracecmd_version,
        "trace_id": o.trace_id,
        "cpu_count": o.cpu_count.unwrap_or_else(|| tf.buffers.iter().map(|b| b.cpus.len() as u32).max().unwrap_or(0)),
        "timestamp_corrections": {
            "date": o.date, "offset": o.offset,
            "tsc2nsec": o.tsc2nsec.map(|t| json!({"mult": t.mult, "shift": t.shift, "offset": t.offset})),
            "time_shift_peer": o.time_shift.as_ref().map(|t| t.peer_trace_id),
        },
        "buffers": tf.buffers.iter().map(|b| json!({"name": b.name, "clock": b.clock, "page_size": b.page_size,
            "cpus": b.cpus.len(), "compressed": b.compressed, "latency": b.latency})).collect::<Vec<_>>(),
        "cpustats": cpustats,
        "lost_events_per_cpu": lost,
        "cpus": cpus,
        "events": event_rows,
        "total_events": stats.iter().map(|s| s.events).sum::<u64>(),
        "skipped_event_types": skipped_types,
        "skipped_buffers": skipped_buffers,
        "unknown_event_ids": unknown_ids.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<Map<String, Value>>(),
        "short_records": short_records + stats.iter().map(|s| s.short_records).sum::<u64>(),
        "bad_dynamic_fields": bad_dynamic,
        "invalid_utf8_strings": invalid_utf8,
        "printk_formats_missing": counts.printk_missing,
        "kallsyms": {"symbols": sym.kallsyms().len(), "unreadable_lines": sym.kallsyms().bad_lines, "file": crate::symbol_files::KALLSYMS_FILE},
        "printk_formats": {"formats": sym.printk.formats.len(), "unreadable_lines": sym.printk.bad_lines, "file": crate::symbol_files::PRINTK_FILE},
        "unknown_options": o.unknown.iter().map(|u| json!({"id": u.id, "size": u.size, "offset": u.offset})).collect::<Vec<_>>(),
        "guests": o.guests,
        "converter": {"name": "ntscope", "version": env!("CARGO_PKG_VERSION"), "seconds": (seconds * 1000.0).round() / 1000.0},
    })
}

/// One line per kind of loss found in a metadata document (empty when none): records the
/// kernel dropped or the converter could not convert. `--strict` exits 1 on these only.
pub fn loss_notes(md: &Value) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(lost) = md["lost_events_per_cpu"].as_object() {
        for (cpu, v) in lost {
            let n = v["lost_events"].as_u64().unwrap_or(0);
            let pages = v["pages_with_missed_events"].as_u64().unwrap_or(0);
            if n > 0 || pages > 0 {
                notes.push(format!(
                    "cpu {}: the kernel lost {} events ({} pages flagged) before they were recorded; fix: record with a bigger buffer (trace-cmd record -b) or fewer events",
                    cpu, n, pages
                ));
            }
        }
    }
    for c in md["cpus"].as_array().into_iter().flatten() {
        let cpu = &c["cpu"];
        for d in c["damaged_pages"].as_array().into_iter().flatten() {
            notes.push(format!("cpu {}: skipped damaged page at offset {}: {}", cpu, d["offset"], d["what"].as_str().unwrap_or("")));
        }
        if c["missing_bytes"].as_u64().unwrap_or(0) > 0 {
            notes.push(format!("cpu {}: {} bytes of event data missing (truncated file)", cpu, c["missing_bytes"]));
        }
    }
    if let Some(u) = md["unknown_event_ids"].as_object() {
        for (id, n) in u {
            notes.push(format!("{} records of event id {} have no format in the file and were not converted", n, id));
        }
    }
    for t in skipped_types(md, true) {
        notes.push(format!(
            "{} records of event id {} ({:?}:{:?}) were not converted: {}; fix: none needed for the other events; report the kernel and event if this is a real tracepoint",
            t["records"], t["id"], t["system"].as_str().unwrap_or(""), t["event"].as_str().unwrap_or(""), t["reason"].as_str().unwrap_or("")
        ));
    }
    for b in md["skipped_buffers"].as_array().into_iter().flatten().filter(|b| b["bytes"].as_u64() != Some(0)) {
        notes.push(format!(
            "instance {:?} ({} bytes of event data) was not converted: {}; fix: rename the instance when recording (trace-cmd record -B NAME)",
            b["name"].as_str().unwrap_or(""), b["bytes"], b["reason"].as_str().unwrap_or("")
        ));
    }
    if md["short_records"].as_u64().unwrap_or(0) > 0 {
        notes.push(format!("{} records were shorter than their event format and were skipped", md["short_records"]));
    }
    notes
}

/// What is worth a word but lost no record (a warning, never exit 1): an empty trace,
/// event types that cannot be converted and hold no records, message texts without their
/// printk format, options of a newer trace-cmd.
pub fn warning_notes(md: &Value) -> Vec<String> {
    let mut notes = Vec::new();
    if md["total_events"].as_u64() == Some(0) {
        notes.push("the trace holds no events; fix: check that the events were enabled (trace-cmd record -e ...) and that the workload ran while recording".to_string());
    }
    let empty: Vec<String> = skipped_types(md, false).map(|t| format!("{}:{} ({})", t["system"].as_str().unwrap_or(""), t["event"].as_str().unwrap_or(""), t["reason"].as_str().unwrap_or(""))).collect();
    if !empty.is_empty() {
        notes.push(format!("{} event types without records were not converted (no data lost; listed in metadata.json skipped_event_types): {}", empty.len(), empty.join("; ")));
    }
    for b in md["skipped_buffers"].as_array().into_iter().flatten().filter(|b| b["bytes"].as_u64() == Some(0)) {
        notes.push(format!("instance {:?} (no event data) was not converted: {}", b["name"].as_str().unwrap_or(""), b["reason"].as_str().unwrap_or("")));
    }
    let missing = md["printk_formats_missing"].as_u64().unwrap_or(0);
    if missing > 0 {
        notes.push(format!(
            "{} bprint/bputs records point at a printk format the file does not hold: their text is null (fmt/str and buf are kept); fix: record with a trace-cmd that saves printk_formats",
            missing
        ));
    }
    for u in md["unknown_options"].as_array().into_iter().flatten() {
        notes.push(format!("unknown option id {} ({} bytes at offset {}) was ignored", u["id"], u["size"], u["offset"]));
    }
    notes
}

/// `skipped_event_types` entries with records (`with_records`) or without.
fn skipped_types(md: &Value, with_records: bool) -> impl Iterator<Item = &Value> {
    md["skipped_event_types"].as_array().into_iter().flatten().filter(move |t| (t["records"].as_u64().unwrap_or(0) > 0) == with_records)
}
