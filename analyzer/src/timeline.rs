//! The packet stream of the Perfetto timeline (`ntscope-analyzer timeline-encode`): Parquet files of io
//! rows with their stage spans, and of counters -> the bytes of a perfetto.protos.Trace (each
//! packet one `Trace.packet`), appended to a file. Knows Perfetto's protobuf field numbers and
//! nothing of NVMe: what the packets say comes from the SQL views of sql/timeline/timeline.sql
//! (`timeline_slots`, `timeline_io_rows_of`, `timeline_spans_of`, `timeline_counters_part`),
//! each io's slices laid out from them by `timeline_slices`, and the packets before them
//! (interned names, fixed tracks) are written by reports/timeline/perfetto_trace.py.
//!
//! Inputs, Parquet files, every column required; integers BIGINT, `double_value` DOUBLE, strings
//! VARCHAR:
//! - layout, one file, one row per slot: slot, part_no, parent_slot, depth, sib, begin_pos,
//!   end_pos, flow (0, 1 out, 2 back), name_iid;
//! - ios and spans, a pair of files per part (the writer sorts a long run in parts; the parts are
//!   merged as they are read): one row per io in (start_ts, n) order with start_ts, n, s and e
//!   (its initiator root's span), queue_track, target_queue_track, out_flow, back_flow,
//!   category_iid and the slice arguments io_id, size_bytes, cid, match_state; and the ios' stage
//!   spans in the same order of ios: n, slot, s, e, dur (a stage's from, to and own duration);
//! - counters, in (ts, uuid, pos) order: uuid, ts, int_value, double_value: one row per counter
//!   value; a file may also have the columns pos, type, name_iid and cpu_wait_ns (and, optional,
//!   detail), whose rows with a type of 1 (begin), 2 (end) or 3 (instant) are slices and instants
//!   on a fixed track (CPU runs, a path's events), pos their order at one (ts, uuid) (0 when
//!   absent).
//!
//! Io lanes: each part of an io (its initiator root and stages, its target root and stages) goes
//! on a lane, a track under the part's queue track: the first lane of that queue whose last io
//! ended before the part begins, else a new lane (uuids from `first_lane_uuid` on, named
//! "io 1", "io 2", ... under each queue). A queue has as many lanes as it had io in flight at
//! once (about its depth), so a run of a million io has tens of tracks, not millions, and each
//! lane shows its io one after the other.
//!
//! Output order: every packet by (ts, track uuid, pos), pos being -1 for a track descriptor
//! (written just before the slice that opens the track), begin_pos for a slice begin, end_pos
//! for its end, 0 for a counter: at one time on one track, depth-first, as Perfetto's importer
//! needs. A begin waits in a heap until no unread io can start before it, an end until it is
//! due, so memory is the slices open or pending at one time, not the trace's length.
//!
//! Each message's fields are written in a fixed order, so the same rows always give the same
//! bytes.

use crate::timeline_slices::{lay_out, Io, Key, Layout, Scratch, Slice, Slot, Span};
use arrow_array::{Array, Float64Array, Int64Array, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

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
const TYPE_INSTANT: u64 = 3;
const TYPE_COUNTER: u64 = 4;
const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;

const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LEN: u32 = 2;

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

/// Bytes of a varint.
fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Bytes of a field: its tag (field numbers here are below 2^11, tags at most 2 bytes) and a
/// value of `value_len` bytes (length prefix included for LEN fields).
fn field_len(field: u32, value_len: usize) -> usize {
    varint_len(((field << 3) | VARINT) as u64) + value_len
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

fn column<T: Clone + 'static>(batch: &RecordBatch, name: &str, type_name: &str) -> Result<T, TimelineError> {
    let col = batch.column_by_name(name).ok_or_else(|| TimelineError(format!("column {} is missing", name)))?;
    col.as_any().downcast_ref::<T>().cloned().ok_or_else(|| {
        TimelineError(format!("column {} is {}, not {}", name, col.data_type(), type_name))
    })
}

fn int(b: &RecordBatch, name: &str) -> Result<Int64Array, TimelineError> {
    column::<Int64Array>(b, name, "Int64")
}

fn string(b: &RecordBatch, name: &str) -> Result<StringArray, TimelineError> {
    column::<StringArray>(b, name, "Utf8")
}

/// One batch of an ios input, by column: one row per io.
struct IoColumns {
    start_ts: Int64Array,
    n: Int64Array,
    s: Int64Array,
    e: Int64Array,
    queue_track: Int64Array,
    target_queue_track: Int64Array,
    out_flow: Int64Array,
    back_flow: Int64Array,
    category_iid: Int64Array,
    io_id: StringArray,
    size_bytes: Int64Array,
    cid: Int64Array,
    match_state: StringArray,
}

impl IoColumns {
    fn of(b: &RecordBatch) -> Result<Self, TimelineError> {
        Ok(IoColumns {
            start_ts: int(b, "start_ts")?,
            n: int(b, "n")?,
            s: int(b, "s")?,
            e: int(b, "e")?,
            queue_track: int(b, "queue_track")?,
            target_queue_track: int(b, "target_queue_track")?,
            out_flow: int(b, "out_flow")?,
            back_flow: int(b, "back_flow")?,
            category_iid: int(b, "category_iid")?,
            io_id: string(b, "io_id")?,
            size_bytes: int(b, "size_bytes")?,
            cid: int(b, "cid")?,
            match_state: string(b, "match_state")?,
        })
    }
}

/// One batch of a spans input, by column: one row per stage span, an io's spans together.
struct SpanColumns {
    n: Int64Array,
    slot: Int64Array,
    s: Int64Array,
    e: Int64Array,
    dur: Int64Array,
}

impl SpanColumns {
    fn of(b: &RecordBatch) -> Result<Self, TimelineError> {
        Ok(SpanColumns { n: int(b, "n")?, slot: int(b, "slot")?, s: int(b, "s")?, e: int(b, "e")?, dur: int(b, "dur")? })
    }
}

/// One batch of a counters input, by column: counter values, and in a file that has the
/// columns pos, type, name_iid and cpu_wait_ns, the begins and ends of slices and the instants on
/// fixed tracks.
struct CounterColumns {
    uuid: Int64Array,
    ts: Int64Array,
    int_value: Int64Array,
    double_value: Float64Array,
    slices: Option<FixedSliceColumns>,
}

struct FixedSliceColumns {
    pos: Int64Array,
    type_: Int64Array,
    name_iid: Int64Array,
    cpu_wait_ns: Int64Array,
    detail: Option<StringArray>,
}

/// TrackEvent.Type of a fixed-track slice row
const ROW_BEGIN: i64 = 1;
const ROW_END: i64 = 2;
const ROW_INSTANT: i64 = 3;

impl CounterColumns {
    fn of(b: &RecordBatch) -> Result<Self, TimelineError> {
        let slices = if b.column_by_name("type").is_some() {
            Some(FixedSliceColumns {
                pos: int(b, "pos")?,
                type_: int(b, "type")?,
                name_iid: int(b, "name_iid")?,
                cpu_wait_ns: int(b, "cpu_wait_ns")?,
                detail: if b.column_by_name("detail").is_some() { Some(string(b, "detail")?) } else { None },
            })
        } else {
            None
        };
        Ok(CounterColumns {
            uuid: int(b, "uuid")?,
            ts: int(b, "ts")?,
            int_value: int(b, "int_value")?,
            double_value: column::<Float64Array>(b, "double_value", "Float64")?,
            slices,
        })
    }

    /// The row's slice type (ROW_BEGIN, ROW_END, ROW_INSTANT), or None for a counter value.
    fn slice_type(&self, i: usize) -> Option<i64> {
        self.slices.as_ref().and_then(|s| opt_i64(&s.type_, i)).filter(|t| [ROW_BEGIN, ROW_END, ROW_INSTANT].contains(t))
    }
}

fn opt_i64(a: &Int64Array, i: usize) -> Option<i64> {
    a.is_valid(i).then(|| a.value(i))
}

fn opt_str(a: &StringArray, i: usize) -> Option<&str> {
    a.is_valid(i).then(|| a.value(i))
}

/// A value that must be there; the error names the input, its row and the column.
fn required(a: &Int64Array, i: usize, at: &Position, name: &str) -> Result<i64, TimelineError> {
    opt_i64(a, i).ok_or_else(|| TimelineError(format!("{}: {} is null", at, name)))
}

/// Where a row is, for errors: the input file and the row's number in it.
struct Position<'a> {
    path: &'a Path,
    row: u64,
}

impl std::fmt::Display for Position<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} row {}", self.path.display(), self.row)
    }
}

/// A Parquet input read a batch at a time, with the row under the cursor.
struct Cursor<'p, C> {
    path: &'p Path,
    reader: ParquetRecordBatchReader,
    of: fn(&RecordBatch) -> Result<C, TimelineError>,
    batch: Option<C>,
    len: usize,
    row: usize,
    rows_before: u64,
    /// The reader has returned its last batch (asking it again costs microseconds per call).
    done: bool,
}

impl<'p, C> Cursor<'p, C> {
    fn open(path: &'p Path, of: fn(&RecordBatch) -> Result<C, TimelineError>) -> Result<Self, TimelineError> {
        let input = File::open(path).map_err(|e| TimelineError(format!("cannot open {}: {}", path.display(), e)))?;
        let reader = ParquetRecordBatchReaderBuilder::try_new(input)
            .and_then(|b| b.with_batch_size(BATCH_ROWS).build())
            .map_err(|e| TimelineError(format!("{}: not a readable Parquet file: {}", path.display(), e)))?;
        Ok(Cursor { path, reader, of, batch: None, len: 0, row: 0, rows_before: 0, done: false })
    }

    /// The current row (its batch and index in it), or None at the end of the input.
    fn peek(&mut self) -> Result<Option<(&C, usize)>, TimelineError> {
        while self.batch.is_none() || self.row >= self.len {
            let next = if self.done { None } else { self.reader.next() };
            let Some(b) = next else {
                self.batch = None;
                self.done = true;
                return Ok(None);
            };
            let b = b.map_err(|e| TimelineError(format!("{}: {}", self.path.display(), e)))?;
            self.rows_before += self.len as u64;
            self.batch = Some((self.of)(&b).map_err(|e| TimelineError(format!("{}: {}", self.path.display(), e)))?);
            self.len = b.num_rows();
            self.row = 0;
        }
        Ok(self.batch.as_ref().map(|c| (c, self.row)))
    }

    fn position(&self) -> Position<'p> {
        Position { path: self.path, row: self.rows_before + self.row as u64 }
    }

    fn advance(&mut self) {
        self.row += 1;
    }
}

/// A slice argument's value (DebugAnnotation's string_value, uint_value, int_value).
enum Arg<'a> {
    String(&'a str),
    Uint(i64),
    Int(i64),
}

/// Scratch buffers reused packet after packet (nested messages are built inside out).
#[derive(Default)]
struct Encoder {
    event: Vec<u8>,
    annotation: Vec<u8>,
    packet: Vec<u8>,
}

impl Encoder {
    /// The descriptor of an io lane ("io <lane>"), as one `Trace.packet` field appended to out.
    fn descriptor(&mut self, track: i64, parent: Option<i64>, lane: i64, out: &mut Vec<u8>) {
        self.event.clear();
        int_field(&mut self.event, TD_UUID, track);
        if let Some(p) = parent {
            int_field(&mut self.event, TD_PARENT_UUID, p);
        }
        bytes_field(&mut self.event, TD_NAME, format!("io {}", lane).as_bytes());
        self.packet.clear();
        bytes_field(&mut self.packet, TP_TRACK_DESCRIPTOR, &self.event);
        bytes_field(out, TRACE_PACKET, &self.packet);
    }

    /// Starts a TrackEvent of this type on this track in self.event.
    fn event_start(&mut self, type_: u64, track: i64) {
        self.event.clear();
        int_field(&mut self.event, TE_TYPE, type_ as i64);
        int_field(&mut self.event, TE_TRACK_UUID, track);
    }

    /// self.event as a TracePacket at ts on the sequence, appended to out. The packet's
    /// length is computed first, so that the event is copied once, into out.
    fn event_packet(&mut self, ts: i64, out: &mut Vec<u8>) {
        let event_len = self.event.len();
        let len = field_len(TP_TIMESTAMP, varint_len(ts as u64))
            + field_len(TP_TRACK_EVENT, varint_len(event_len as u64) + event_len)
            + field_len(TP_SEQUENCE_ID, varint_len(SEQUENCE_ID as u64))
            + field_len(TP_SEQUENCE_FLAGS, varint_len(SEQ_NEEDS_INCREMENTAL_STATE));
        tag(out, TRACE_PACKET, LEN);
        varint(out, len as u64);
        int_field(out, TP_TIMESTAMP, ts);
        bytes_field(out, TP_TRACK_EVENT, &self.event);
        int_field(out, TP_SEQUENCE_ID, SEQUENCE_ID);
        int_field(out, TP_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE as i64);
    }

    fn slice_begin(&mut self, sl: &Slice, out: &mut Vec<u8>) {
        let (ts, track, _) = sl.key;
        self.event_start(TYPE_SLICE_BEGIN, track);
        int_field(&mut self.event, TE_NAME_IID, sl.name_iid);
        if let Some(v) = sl.category_iid {
            int_field(&mut self.event, TE_CATEGORY_IIDS, v);
        }
        if let Some(v) = sl.flow_out {
            fixed64_field(&mut self.event, TE_FLOW_IDS, v as u64);
        }
        if let Some(v) = sl.flow_in {
            fixed64_field(&mut self.event, TE_TERMINATING_FLOW_IDS, v as u64);
        }
        // debug annotations, interned names 1..5 in timeline.py's ARGS order (6: ARG_CPU_WAIT_NS)
        let args = [
            sl.io_id.as_deref().map(Arg::String),
            sl.size_bytes.map(Arg::Uint),
            sl.cid.map(Arg::Uint),
            sl.match_state.as_deref().map(Arg::String),
            sl.stage_dur_ns.map(Arg::Int),
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
        self.event_packet(ts, out);
    }

    /// The begin of a slice or an instant on a fixed track (a counters input's ROW_BEGIN or
    /// ROW_INSTANT row), of that TrackEvent.Type.
    fn fixed_slice_begin(&mut self, type_: u64, s: &FixedSliceColumns, i: usize, ts: i64, track: i64,
                         out: &mut Vec<u8>) {
        self.event_start(type_, track);
        if let Some(v) = opt_i64(&s.name_iid, i) {
            int_field(&mut self.event, TE_NAME_IID, v);
        }
        if let Some(v) = opt_i64(&s.cpu_wait_ns, i) {
            self.annotation.clear();
            int_field(&mut self.annotation, DA_NAME_IID, ARG_CPU_WAIT_NS);
            int_field(&mut self.annotation, DA_INT_VALUE, v);
            bytes_field(&mut self.event, TE_DEBUG_ANNOTATIONS, &self.annotation);
        }
        if let Some(v) = s.detail.as_ref().and_then(|d| opt_str(d, i)) {
            self.annotation.clear();
            int_field(&mut self.annotation, DA_NAME_IID, ARG_DETAIL);
            bytes_field(&mut self.annotation, DA_STRING_VALUE, v.as_bytes());
            bytes_field(&mut self.event, TE_DEBUG_ANNOTATIONS, &self.annotation);
        }
        self.event_packet(ts, out);
    }

    fn slice_end(&mut self, ts: i64, track: i64, out: &mut Vec<u8>) {
        self.event_start(TYPE_SLICE_END, track);
        self.event_packet(ts, out);
    }

    fn counter(&mut self, c: &CounterColumns, i: usize, ts: i64, track: i64, out: &mut Vec<u8>) {
        self.event_start(TYPE_COUNTER, track);
        if let Some(v) = opt_i64(&c.int_value, i) {
            int_field(&mut self.event, TE_COUNTER_VALUE, v);
        }
        if c.double_value.is_valid(i) {
            fixed64_field(&mut self.event, TE_DOUBLE_COUNTER_VALUE, c.double_value.value(i).to_bits());
        }
        self.event_packet(ts, out);
    }
}

/// The packet sequence the header (timeline.py) opens; every packet here is on it.
pub const SEQUENCE_ID: i64 = 1;

const COUNTER_POS: i64 = 0;
/// The interned names of the cpu_wait_ns and detail arguments (the 6th and 7th of timeline.py's ARGS).
const ARG_CPU_WAIT_NS: i64 = 6;
const ARG_DETAIL: i64 = 7;

/// The io lanes of each queue track (see the module doc): per queue, each lane's uuid and the
/// end of the last io part on it.
struct Lanes {
    next_uuid: i64,
    by_queue: HashMap<Option<i64>, Vec<(i64, i64)>>,
}

impl Lanes {
    /// The lane for a part of an io spanning s..e under the queue: (its uuid, its number 1.. under
    /// the queue, true when it is new). A lane is free when its last part ended before s (at one
    /// timestamp a begin is written before an end, which would nest one io in the other).
    fn take(&mut self, queue: Option<i64>, s: i64, e: i64) -> (i64, i64, bool) {
        let lanes = self.by_queue.entry(queue).or_default();
        if let Some((k, lane)) = lanes.iter_mut().enumerate().find(|(_, l)| l.1 < s) {
            lane.1 = e;
            return (lane.0, k as i64 + 1, false);
        }
        let uuid = self.next_uuid;
        self.next_uuid += 1;
        lanes.push((uuid, e));
        (uuid, lanes.len() as i64, true)
    }

    fn count(&self) -> usize {
        self.by_queue.values().map(Vec::len).sum()
    }
}

/// Moves the slices of one io, laid out on the io's placeholder tracks, onto lanes: each part's
/// root gives the part's span; the part's slices take that lane's uuid.
fn onto_lanes(io: &Io, laid: &mut [Slice], lanes: &mut Lanes) {
    for part in 0..2 {
        let track = io.tracks[part];
        let Some(root) = laid.iter().find(|sl| sl.opens_track && sl.key.1 == track) else { continue };
        let (uuid, lane, new) = lanes.take(io.queue_tracks[part], root.key.0, root.end_key.0);
        for sl in laid.iter_mut().filter(|sl| sl.key.1 == track) {
            sl.key.1 = uuid;
            sl.end_key.1 = uuid;
            if sl.opens_track {
                sl.opens_track = new;
                sl.lane = lane;
            }
        }
    }
}

/// The input among `inputs` whose current row has the smallest key (few inputs: a linear scan),
/// with that key; None when all are at their end.
fn first_of<C>(inputs: &mut [Cursor<'_, C>], key_of: fn(&C, usize, &Position) -> Result<Key, TimelineError>)
               -> Result<Option<(Key, usize)>, TimelineError> {
    let mut first: Option<(Key, usize)> = None;
    for (k, input) in inputs.iter_mut().enumerate() {
        let at = input.position();
        if let Some((c, i)) = input.peek()? {
            let key = key_of(c, i, &at)?;
            if first.is_none_or(|(f, _)| key < f) {
                first = Some((key, k));
            }
        }
    }
    Ok(first)
}

/// An io's place among the ios: (start_ts, n, 0).
fn io_key(c: &IoColumns, i: usize, at: &Position) -> Result<Key, TimelineError> {
    Ok((required(&c.start_ts, i, at, "start_ts")?, required(&c.n, i, at, "n")?, 0))
}

fn counter_key(c: &CounterColumns, i: usize, at: &Position) -> Result<Key, TimelineError> {
    let pos = match &c.slices {
        Some(s) => opt_i64(&s.pos, i).unwrap_or(COUNTER_POS),
        None => COUNTER_POS,
    };
    Ok((required(&c.ts, i, at, "ts")?, required(&c.uuid, i, at, "uuid")?, pos))
}

/// The slot table (sql/timeline/timeline.sql timeline_slots) from its Parquet file.
fn read_layout(path: &Path) -> Result<Layout, TimelineError> {
    let mut cur = Cursor::open(path, |b| {
        Ok([
            int(b, "slot")?, int(b, "part_no")?, int(b, "parent_slot")?, int(b, "depth")?, int(b, "sib")?,
            int(b, "begin_pos")?, int(b, "end_pos")?, int(b, "flow")?, int(b, "name_iid")?,
        ])
    })?;
    let mut rows = Vec::new();
    loop {
        let at = cur.position();
        let Some((c, i)) = cur.peek()? else { break };
        let get = |k: usize, name: &str| required(&c[k], i, &at, name);
        let slot = Slot {
            part: usize::try_from(get(1, "part_no")?).map_err(|_| TimelineError(format!("{}: part_no < 0", at)))?,
            parent: opt_i64(&c[2], i),
            depth: get(3, "depth")?,
            sib: get(4, "sib")?,
            begin_pos: get(5, "begin_pos")?,
            end_pos: get(6, "end_pos")?,
            flow: get(7, "flow")?,
            name_iid: get(8, "name_iid")?,
        };
        rows.push((get(0, "slot")?, slot));
        cur.advance();
    }
    Layout::new(rows).map_err(|e| TimelineError(format!("{}: {}", path.display(), e)))
}

/// One part of the ios: its io rows and their spans, read in step.
struct Part<'p> {
    ios: Cursor<'p, IoColumns>,
    spans: Cursor<'p, SpanColumns>,
}

/// Reads the io under the part's io cursor and its spans (the rows of its n at the span cursor).
fn read_io(part: &mut Part<'_>, spans: &mut Vec<Span>) -> Result<Io, TimelineError> {
    spans.clear();
    let at = part.ios.position();
    let (c, i) = part.ios.peek()?.expect("the caller peeked an io row");
    let io = Io {
        start_ts: required(&c.start_ts, i, &at, "start_ts")?,
        n: required(&c.n, i, &at, "n")?,
        root_s: required(&c.s, i, &at, "s")?,
        root_e: opt_i64(&c.e, i),
        // placeholders, distinct from every uuid: onto_lanes moves each part onto a lane
        tracks: [-1, -2],
        queue_tracks: [opt_i64(&c.queue_track, i), opt_i64(&c.target_queue_track, i)],
        flows: [required(&c.out_flow, i, &at, "out_flow")?, required(&c.back_flow, i, &at, "back_flow")?],
        category_iid: opt_i64(&c.category_iid, i),
        io_id: opt_str(&c.io_id, i).map(str::to_owned),
        size_bytes: opt_i64(&c.size_bytes, i),
        cid: opt_i64(&c.cid, i),
        match_state: opt_str(&c.match_state, i).map(str::to_owned),
    };
    part.ios.advance();
    loop {
        let at = part.spans.position();
        let Some((c, i)) = part.spans.peek()? else { break };
        if required(&c.n, i, &at, "n")? != io.n {
            break;
        }
        spans.push(Span {
            slot: required(&c.slot, i, &at, "slot")?,
            s: required(&c.s, i, &at, "s")?,
            e: required(&c.e, i, &at, "e")?,
            dur: opt_i64(&c.dur, i),
        });
        part.spans.advance();
    }
    Ok(io)
}

/// Slices waiting for their begin to be due: a heap of their begin keys (unique: one track, one
/// position) over a slab of the slices, so that the heap moves keys, not slices.
#[derive(Default)]
struct PendingBegins {
    heap: BinaryHeap<Reverse<(Key, usize)>>,
    slab: Vec<Option<Slice>>,
    free: Vec<usize>,
}

impl PendingBegins {
    fn push(&mut self, sl: Slice) {
        let key = sl.key;
        let at = match self.free.pop() {
            Some(at) => {
                self.slab[at] = Some(sl);
                at
            }
            None => {
                self.slab.push(Some(sl));
                self.slab.len() - 1
            }
        };
        self.heap.push(Reverse((key, at)));
    }

    fn first_key(&self) -> Option<Key> {
        self.heap.peek().map(|Reverse((k, _))| *k)
    }

    fn pop(&mut self) -> Option<Slice> {
        let Reverse((_, at)) = self.heap.pop()?;
        self.free.push(at);
        self.slab[at].take()
    }
}

/// Encodes the timeline's per-io slices and its counters into one packet stream in (ts, track,
/// pos) order and appends it to `out`.
/// - `layout`: the slot table (timeline_slots);
/// - `ios` and `spans`, pairs of Parquet files, one pair per part of the run (the parts are
///   merged as they are read): the io rows sorted by (start_ts, n) (timeline_io_rows_of) and
///   their stage spans in the same order of ios (timeline_spans_of);
/// - `counters`: Parquet files of counter values sorted by (ts, uuid) (timeline_counters_part),
///   and of slices and instants on fixed tracks sorted by (ts, uuid, pos) (timeline_cpu_events_part,
///   timeline_path_events_part);
/// - `first_lane_uuid`: the uuid of the first io lane (see the module doc).
///
/// Each io's slices are laid out (timeline_slices) when the ios are read up to it; a begin goes
/// out once no io still unread can start before it (ios arrive by start_ts, the earliest time
/// any of their packets has), an end waits in a heap until it is due. Returns the number of
/// packets. Memory: a batch of each input and the slices open or pending at one time, not the
/// trace's length.
pub fn encode_files(layout: &Path, ios: &[PathBuf], spans: &[PathBuf], counters: &[PathBuf], first_lane_uuid: i64,
                    out: &Path) -> Result<u64, TimelineError> {
    if ios.len() != spans.len() {
        return Err(TimelineError(format!("{} ios files but {} spans files: give one of each per part",
                                         ios.len(), spans.len())));
    }
    let layout = read_layout(layout)?;
    let mut parts = ios
        .iter()
        .zip(spans)
        .map(|(i, s)| Ok(Part { ios: Cursor::open(i, IoColumns::of)?, spans: Cursor::open(s, SpanColumns::of)? }))
        .collect::<Result<Vec<_>, TimelineError>>()?;
    let mut counter_inputs =
        counters.iter().map(|p| Cursor::open(p, CounterColumns::of)).collect::<Result<Vec<_>, _>>()?;
    let file = OpenOptions::new()
        .append(true)
        .open(out)
        .map_err(|e| TimelineError(format!("cannot append to {}: {}", out.display(), e)))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let write_err = |e: std::io::Error| TimelineError(format!("writing {}: {}", out.display(), e));
    let mut enc = Encoder::default();
    let mut bytes = Vec::with_capacity(1 << 22);
    let mut ends: BinaryHeap<Reverse<Key>> = BinaryHeap::new();
    let mut begins = PendingBegins::default();
    let mut io_spans = Vec::new();
    let mut laid = Vec::new();
    let mut scratch = Scratch::default();
    let mut packets = 0u64;
    let mut last: Option<Key> = None;
    let mut last_io: Option<Key> = None;
    let mut lanes = Lanes { next_uuid: first_lane_uuid, by_queue: HashMap::new() };
    // the next io still unread: every packet of the ios after it is at or after its start
    let mut next_io = first_io(&mut parts)?;
    loop {
        let counter = first_of(&mut counter_inputs, counter_key)?;
        let end = ends.peek().map(|Reverse(k)| *k);
        let begin = begins.first_key();
        // the smallest key goes next (an end before a begin or counter at the same key)
        let mut next = min_key(min_key(end, begin), counter.map(|(c, _)| c));
        // ... once no io still unread can begin before it: read ios until one starts after it
        while let Some((io_at, k)) = next_io {
            if next.is_some_and(|key| key.0 < io_at.0) {
                break;
            }
            let part = &mut parts[k];
            let at = part.ios.position();
            if last_io.is_some_and(|l| io_at < l) {
                return Err(TimelineError(format!(
                    "{}: io (start_ts, n) {:?} comes after {:?}: the ios are not sorted as the encoder needs",
                    at, (io_at.0, io_at.1), last_io.map(|l| (l.0, l.1)).unwrap())));
            }
            last_io = Some(io_at);
            let io = read_io(part, &mut io_spans)?;
            laid.clear();
            lay_out(&layout, &mut scratch, &io, &io_spans, &mut laid).map_err(|e| TimelineError(format!("{}: {}", at, e)))?;
            onto_lanes(&io, &mut laid, &mut lanes);
            for sl in laid.drain(..) {
                if sl.key.0 < io.start_ts {
                    return Err(TimelineError(format!(
                        "{}: io {} has a slice at {}, before its start_ts {}", at, io.n, sl.key.0, io.start_ts)));
                }
                begins.push(sl);
            }
            next = min_key(next, begins.first_key());
            next_io = first_io(&mut parts)?;
        }
        let Some(key) = next else { break };
        if last.is_some_and(|l| key < l) {
            let at = counter.map(|(_, k)| counter_inputs[k].position().to_string()).unwrap_or_default();
            return Err(TimelineError(format!(
                "{}: (ts, track, pos) {:?} comes after {:?}: the input is not sorted as the encoder needs",
                at, key, last.unwrap())));
        }
        last = Some(key);
        if Some(key) == end {
            ends.pop();
            enc.slice_end(key.0, key.1, &mut bytes);
        } else if begins.first_key() == Some(key) {
            let sl = begins.pop().expect("peeked above");
            if sl.end_key <= sl.key {
                return Err(TimelineError(format!("io slice {:?}: it ends ({:?}) before it begins", sl.key, sl.end_key)));
            }
            if sl.opens_track {
                enc.descriptor(key.1, sl.parent_uuid, sl.lane, &mut bytes);
                packets += 1;
            }
            enc.slice_begin(&sl, &mut bytes);
            ends.push(Reverse(sl.end_key));
        } else {
            let (_, k) = counter.expect("the key is a counter's");
            let input = &mut counter_inputs[k];
            let (c, i) = input.peek()?.expect("peeked above");
            match (c.slice_type(i), &c.slices) {
                (Some(ROW_BEGIN), Some(s)) => enc.fixed_slice_begin(TYPE_SLICE_BEGIN, s, i, key.0, key.1, &mut bytes),
                (Some(ROW_INSTANT), Some(s)) => enc.fixed_slice_begin(TYPE_INSTANT, s, i, key.0, key.1, &mut bytes),
                (Some(_), _) => enc.slice_end(key.0, key.1, &mut bytes),
                (None, _) => enc.counter(c, i, key.0, key.1, &mut bytes),
            }
            input.advance();
        }
        packets += 1;
        if bytes.len() >= 1 << 22 {
            w.write_all(&bytes).map_err(write_err)?;
            bytes.clear();
        }
    }
    for part in &mut parts {
        let at = part.spans.position();
        if let Some((c, i)) = part.spans.peek()? {
            return Err(TimelineError(format!("{}: a span of io {} that no io row before it has: the spans must \
                                              follow the order of the ios", at, c.n.value(i))));
        }
    }
    w.write_all(&bytes).map_err(write_err)?;
    w.flush().map_err(write_err)?;
    if lanes.next_uuid - first_lane_uuid != lanes.count() as i64 {
        return Err(TimelineError("io lanes were numbered twice".into()));
    }
    Ok(packets)
}

/// The smaller of two keys, either absent (a plain comparison: this runs once per packet).
#[inline]
fn min_key(a: Option<Key>, b: Option<Key>) -> Option<Key> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y < x { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    }
}

/// The part whose next io comes first, with that io's key; None when every part is read.
fn first_io(parts: &mut [Part<'_>]) -> Result<Option<(Key, usize)>, TimelineError> {
    let mut first: Option<(Key, usize)> = None;
    for (k, part) in parts.iter_mut().enumerate() {
        let at = part.ios.position();
        if let Some((c, i)) = part.ios.peek()? {
            let key = io_key(c, i, &at)?;
            if first.is_none_or(|(f, _)| key < f) {
                first = Some((key, k));
            }
        }
    }
    Ok(first)
}
