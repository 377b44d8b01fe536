//! The packet stream of the Perfetto timeline (`ntscope timeline-encode`): rows of a
//! Parquet file, one per TracePacket, in file order -> the bytes of a perfetto.protos.Trace
//! (each row one `Trace.packet`), appended to a file. Knows Perfetto's protobuf field
//! numbers and nothing of NVMe: what the packets say comes from the SQL view
//! `timeline_packets` (sql/66_timeline.sql), and the packets before them (interned names,
//! fixed tracks) are written by reports/report/timeline.py.
//!
//! Input columns (every one required; integers BIGINT, `double_value` DOUBLE, strings VARCHAR):
//! kind (0 track descriptor, 1 slice begin, 2 slice end, 3 counter), ts, track_uuid,
//! parent_uuid, name_iid, category_iid, flow_out, flow_in, int_value, double_value, and the
//! slice arguments io_id, size_bytes, cid, match_state, stage_dur_ns (debug annotations with
//! interned names 1..5 in that order, written where not null).
//!
//! Each message's fields are written in a fixed order, the one the Python encoder used, so
//! the bytes are the same as before this module existed.

use arrow_array::{Array, Float64Array, Int64Array, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::Path;

// Field numbers (perfetto/protos/perfetto/trace/...: trace.proto, trace_packet.proto,
// track_event/track_event.proto, track_event/track_descriptor.proto, debug_annotation.proto).
const TRACE_PACKET: u32 = 1;
const TP_TIMESTAMP: u32 = 8;
const TP_SEQUENCE_ID: u32 = 10;
const TP_TRACK_EVENT: u32 = 11;
const TP_SEQUENCE_FLAGS: u32 = 13;
const TP_TRACK_DESCRIPTOR: u32 = 60;
const TE_CATEGORY_IIDS: u32 = 3;
const TE_DEBUG_ANNOTATIONS: u32 = 4;
const TE_TYPE: u32 = 9;
const TE_NAME_IID: u32 = 10;
const TE_TRACK_UUID: u32 = 11;
const TE_COUNTER_VALUE: u32 = 30;
const TE_DOUBLE_COUNTER_VALUE: u32 = 44;
const TE_FLOW_IDS: u32 = 47;
const TE_TERMINATING_FLOW_IDS: u32 = 48;
const TD_UUID: u32 = 1;
const TD_NAME: u32 = 2;
const TD_PARENT_UUID: u32 = 5;
const DA_NAME_IID: u32 = 1;
const DA_UINT_VALUE: u32 = 3;
const DA_INT_VALUE: u32 = 4;
const DA_STRING_VALUE: u32 = 6;
// TrackEvent.Type and TracePacket.SequenceFlags values
const TYPE_SLICE_BEGIN: u64 = 1;
const TYPE_SLICE_END: u64 = 2;
const TYPE_COUNTER: u64 = 4;
const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;

const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LEN: u32 = 2;

/// Every per-io track is named "io": the UI draws the siblings under one queue as one track.
const IO_TRACK_NAME: &[u8] = b"io";
const BATCH_ROWS: usize = 65_536;

/// What went wrong, for the caller to print (the Python side turns it into its own error).
#[derive(Debug)]
pub struct TimelineError(pub String);

impl std::fmt::Display for TimelineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v > 0x7F {
        out.push((v as u8 & 0x7F) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u32) {
    varint(out, ((field << 3) | wire) as u64);
}

/// An integer field; int64 values as their two's complement (protobuf's int64 encoding).
fn int_field(out: &mut Vec<u8>, field: u32, v: i64) {
    tag(out, field, VARINT);
    varint(out, v as u64);
}

fn fixed64_field(out: &mut Vec<u8>, field: u32, bits: u64) {
    tag(out, field, FIXED64);
    out.extend_from_slice(&bits.to_le_bytes());
}

fn bytes_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    tag(out, field, LEN);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// The input's columns, by name.
struct Columns<'a> {
    kind: &'a Int64Array,
    ts: &'a Int64Array,
    track_uuid: &'a Int64Array,
    parent_uuid: &'a Int64Array,
    name_iid: &'a Int64Array,
    category_iid: &'a Int64Array,
    flow_out: &'a Int64Array,
    flow_in: &'a Int64Array,
    int_value: &'a Int64Array,
    double_value: &'a Float64Array,
    io_id: &'a StringArray,
    size_bytes: &'a Int64Array,
    cid: &'a Int64Array,
    match_state: &'a StringArray,
    stage_dur_ns: &'a Int64Array,
}

fn column<'a, T: 'static>(batch: &'a RecordBatch, name: &str, type_name: &str) -> Result<&'a T, TimelineError> {
    let col = batch.column_by_name(name).ok_or_else(|| TimelineError(format!("column {} is missing", name)))?;
    col.as_any().downcast_ref::<T>().ok_or_else(|| {
        TimelineError(format!("column {} is {}, not {}", name, col.data_type(), type_name))
    })
}

impl<'a> Columns<'a> {
    fn of(b: &'a RecordBatch) -> Result<Self, TimelineError> {
        let int = |name| column::<Int64Array>(b, name, "Int64");
        let string = |name| column::<StringArray>(b, name, "Utf8");
        Ok(Columns {
            kind: int("kind")?,
            ts: int("ts")?,
            track_uuid: int("track_uuid")?,
            parent_uuid: int("parent_uuid")?,
            name_iid: int("name_iid")?,
            category_iid: int("category_iid")?,
            flow_out: int("flow_out")?,
            flow_in: int("flow_in")?,
            int_value: int("int_value")?,
            double_value: column::<Float64Array>(b, "double_value", "Float64")?,
            io_id: string("io_id")?,
            size_bytes: int("size_bytes")?,
            cid: int("cid")?,
            match_state: string("match_state")?,
            stage_dur_ns: int("stage_dur_ns")?,
        })
    }
}

fn opt_i64(a: &Int64Array, i: usize) -> Option<i64> {
    a.is_valid(i).then(|| a.value(i))
}

fn opt_str<'a>(a: &'a StringArray, i: usize) -> Option<&'a str> {
    a.is_valid(i).then(|| a.value(i))
}

/// A slice argument's value (DebugAnnotation's string_value, uint_value, int_value).
enum Arg<'a> {
    String(&'a str),
    Uint(i64),
    Int(i64),
}

/// Scratch buffers reused row after row (nested messages are built inside out).
#[derive(Default)]
struct Encoder {
    event: Vec<u8>,
    annotation: Vec<u8>,
    packet: Vec<u8>,
}

impl Encoder {
    /// Row i as one `Trace.packet` field, appended to out.
    fn row(&mut self, c: &Columns, i: usize, out: &mut Vec<u8>) -> Result<(), TimelineError> {
        let value = |a: &Int64Array, name: &str| {
            opt_i64(a, i).ok_or_else(|| TimelineError(format!("row {}: {} is null", i, name)))
        };
        let kind = value(c.kind, "kind")?;
        self.packet.clear();
        if kind == 0 {
            self.event.clear();
            int_field(&mut self.event, TD_UUID, value(c.track_uuid, "track_uuid")?);
            if let Some(p) = opt_i64(c.parent_uuid, i) {
                int_field(&mut self.event, TD_PARENT_UUID, p);
            }
            bytes_field(&mut self.event, TD_NAME, IO_TRACK_NAME);
            bytes_field(&mut self.packet, TP_TRACK_DESCRIPTOR, &self.event);
        } else {
            self.event.clear();
            let type_ = match kind {
                1 => TYPE_SLICE_BEGIN,
                2 => TYPE_SLICE_END,
                3 => TYPE_COUNTER,
                k => return Err(TimelineError(format!("row {}: kind {} is not 0..3", i, k))),
            };
            int_field(&mut self.event, TE_TYPE, type_ as i64);
            int_field(&mut self.event, TE_TRACK_UUID, value(c.track_uuid, "track_uuid")?);
            if kind == 1 {
                self.slice_begin(c, i);
            } else if kind == 3 {
                if let Some(v) = opt_i64(c.int_value, i) {
                    int_field(&mut self.event, TE_COUNTER_VALUE, v);
                }
                if c.double_value.is_valid(i) {
                    fixed64_field(&mut self.event, TE_DOUBLE_COUNTER_VALUE, c.double_value.value(i).to_bits());
                }
            }
            int_field(&mut self.packet, TP_TIMESTAMP, value(c.ts, "ts")?);
            bytes_field(&mut self.packet, TP_TRACK_EVENT, &self.event);
            int_field(&mut self.packet, TP_SEQUENCE_ID, SEQUENCE_ID);
            int_field(&mut self.packet, TP_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE as i64);
        }
        bytes_field(out, TRACE_PACKET, &self.packet);
        Ok(())
    }

    fn slice_begin(&mut self, c: &Columns, i: usize) {
        if let Some(v) = opt_i64(c.name_iid, i) {
            int_field(&mut self.event, TE_NAME_IID, v);
        }
        if let Some(v) = opt_i64(c.category_iid, i) {
            int_field(&mut self.event, TE_CATEGORY_IIDS, v);
        }
        if let Some(v) = opt_i64(c.flow_out, i) {
            fixed64_field(&mut self.event, TE_FLOW_IDS, v as u64);
        }
        if let Some(v) = opt_i64(c.flow_in, i) {
            fixed64_field(&mut self.event, TE_TERMINATING_FLOW_IDS, v as u64);
        }
        // debug annotations, interned names 1..5 in timeline.py's ARGS order
        let args = [
            opt_str(c.io_id, i).map(Arg::String),
            opt_i64(c.size_bytes, i).map(Arg::Uint),
            opt_i64(c.cid, i).map(Arg::Uint),
            opt_str(c.match_state, i).map(Arg::String),
            opt_i64(c.stage_dur_ns, i).map(Arg::Int),
        ];
        for (iid, arg) in (1..).zip(args) {
            let Some(arg) = arg else { continue };
            self.annotation.clear();
            int_field(&mut self.annotation, DA_NAME_IID, iid);
            match arg {
                Arg::String(s) => bytes_field(&mut self.annotation, DA_STRING_VALUE, s.as_bytes()),
                Arg::Uint(v) => int_field(&mut self.annotation, DA_UINT_VALUE, v),
                Arg::Int(v) => int_field(&mut self.annotation, DA_INT_VALUE, v),
            }
            bytes_field(&mut self.event, TE_DEBUG_ANNOTATIONS, &self.annotation);
        }
    }
}

/// The packet sequence the header (timeline.py) opens; every packet here is on it.
pub const SEQUENCE_ID: i64 = 1;

/// Encodes every row of `packets` (a Parquet file) in order and appends the packets to
/// `out`. Returns the number of packets. Memory: one batch of rows and its bytes.
pub fn encode_file(packets: &Path, out: &Path) -> Result<u64, TimelineError> {
    let input = File::open(packets).map_err(|e| TimelineError(format!("cannot open {}: {}", packets.display(), e)))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(input)
        .and_then(|b| b.with_batch_size(BATCH_ROWS).build())
        .map_err(|e| TimelineError(format!("{}: not a readable Parquet file: {}", packets.display(), e)))?;
    let file = OpenOptions::new()
        .append(true)
        .open(out)
        .map_err(|e| TimelineError(format!("cannot append to {}: {}", out.display(), e)))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let mut enc = Encoder::default();
    let mut bytes = Vec::with_capacity(1 << 22);
    let mut rows = 0u64;
    for batch in reader {
        let batch = batch.map_err(|e| TimelineError(format!("{}: {}", packets.display(), e)))?;
        let c = Columns::of(&batch).map_err(|e| TimelineError(format!("{}: {}", packets.display(), e)))?;
        bytes.clear();
        for i in 0..batch.num_rows() {
            enc.row(&c, i, &mut bytes).map_err(|e| TimelineError(format!("{}: {}", packets.display(), e)))?;
        }
        w.write_all(&bytes).map_err(|e| TimelineError(format!("writing {}: {}", out.display(), e)))?;
        rows += batch.num_rows() as u64;
    }
    w.flush().map_err(|e| TimelineError(format!("writing {}: {}", out.display(), e)))?;
    Ok(rows)
}
