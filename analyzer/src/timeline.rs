//! The packet stream of the Perfetto timeline (`ntscope timeline-encode`): Parquet files of
//! slices and of counters -> the bytes of a perfetto.protos.Trace (each packet one
//! `Trace.packet`), appended to a file. Knows Perfetto's protobuf field numbers and nothing of
//! NVMe: what the packets say comes from the SQL views `timeline_slice_packets` and
//! `timeline_counters` (sql/66_timeline.sql), and the packets before them (interned names,
//! fixed tracks) are written by reports/report/timeline.py.
//!
//! Inputs, each one or more Parquet files, each file sorted, merged as they are read (the
//! writer sorts a long run in parts); every column required; integers BIGINT, `double_value`
//! DOUBLE, `opens_track` BOOLEAN, strings VARCHAR:
//! - slices, one row per slice, in (ts, track_uuid, begin_pos) order: ts, end_ts, track_uuid,
//!   begin_pos, end_pos, opens_track, parent_uuid, name_iid, category_iid, flow_out, flow_in,
//!   and the slice arguments io_id, size_bytes, cid, match_state, stage_dur_ns (debug
//!   annotations with interned names 1..5 in that order, written where not null);
//! - counters, one row per value, in (ts, uuid) order: uuid, ts, int_value, double_value.
//!
//! Output order: every packet by (ts, track uuid, pos), pos being -1 for a track descriptor
//! (written just before the slice that opens the track), begin_pos for a slice begin, end_pos
//! for its end, 0 for a counter: at one time on one track, depth-first, as Perfetto's importer
//! needs. Begins and counters arrive sorted; each end waits in a heap from its begin until it
//! is due, so memory is the slices open at one time, not the trace's length (sorting one row
//! per slice instead of one per packet halves what DuckDB sorts).
//!
//! Each message's fields are written in a fixed order, the one the Python encoder used, so
//! the bytes are the same as before this module existed.

use arrow_array::{Array, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
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

/// One batch of the slices input, by column (arrays share the batch's buffers).
struct SliceColumns {
    ts: Int64Array,
    end_ts: Int64Array,
    track_uuid: Int64Array,
    begin_pos: Int64Array,
    end_pos: Int64Array,
    opens_track: BooleanArray,
    parent_uuid: Int64Array,
    name_iid: Int64Array,
    category_iid: Int64Array,
    flow_out: Int64Array,
    flow_in: Int64Array,
    io_id: StringArray,
    size_bytes: Int64Array,
    cid: Int64Array,
    match_state: StringArray,
    stage_dur_ns: Int64Array,
}

impl SliceColumns {
    fn of(b: &RecordBatch) -> Result<Self, TimelineError> {
        Ok(SliceColumns {
            ts: int(b, "ts")?,
            end_ts: int(b, "end_ts")?,
            track_uuid: int(b, "track_uuid")?,
            begin_pos: int(b, "begin_pos")?,
            end_pos: int(b, "end_pos")?,
            opens_track: column::<BooleanArray>(b, "opens_track", "Boolean")?,
            parent_uuid: int(b, "parent_uuid")?,
            name_iid: int(b, "name_iid")?,
            category_iid: int(b, "category_iid")?,
            flow_out: int(b, "flow_out")?,
            flow_in: int(b, "flow_in")?,
            io_id: string(b, "io_id")?,
            size_bytes: int(b, "size_bytes")?,
            cid: int(b, "cid")?,
            match_state: string(b, "match_state")?,
            stage_dur_ns: int(b, "stage_dur_ns")?,
        })
    }
}

/// One batch of the counters input, by column.
struct CounterColumns {
    uuid: Int64Array,
    ts: Int64Array,
    int_value: Int64Array,
    double_value: Float64Array,
}

impl CounterColumns {
    fn of(b: &RecordBatch) -> Result<Self, TimelineError> {
        Ok(CounterColumns {
            uuid: int(b, "uuid")?,
            ts: int(b, "ts")?,
            int_value: int(b, "int_value")?,
            double_value: column::<Float64Array>(b, "double_value", "Float64")?,
        })
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
    /// The descriptor of a per-io track, as one `Trace.packet` field appended to out.
    fn descriptor(&mut self, track: i64, parent: Option<i64>, out: &mut Vec<u8>) {
        self.event.clear();
        int_field(&mut self.event, TD_UUID, track);
        if let Some(p) = parent {
            int_field(&mut self.event, TD_PARENT_UUID, p);
        }
        bytes_field(&mut self.event, TD_NAME, IO_TRACK_NAME);
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

    /// self.event as a TracePacket at ts on the sequence, appended to out.
    fn event_packet(&mut self, ts: i64, out: &mut Vec<u8>) {
        self.packet.clear();
        int_field(&mut self.packet, TP_TIMESTAMP, ts);
        bytes_field(&mut self.packet, TP_TRACK_EVENT, &self.event);
        int_field(&mut self.packet, TP_SEQUENCE_ID, SEQUENCE_ID);
        int_field(&mut self.packet, TP_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE as i64);
        bytes_field(out, TRACE_PACKET, &self.packet);
    }

    fn slice_begin(&mut self, c: &SliceColumns, i: usize, ts: i64, track: i64, out: &mut Vec<u8>) {
        self.event_start(TYPE_SLICE_BEGIN, track);
        if let Some(v) = opt_i64(&c.name_iid, i) {
            int_field(&mut self.event, TE_NAME_IID, v);
        }
        if let Some(v) = opt_i64(&c.category_iid, i) {
            int_field(&mut self.event, TE_CATEGORY_IIDS, v);
        }
        if let Some(v) = opt_i64(&c.flow_out, i) {
            fixed64_field(&mut self.event, TE_FLOW_IDS, v as u64);
        }
        if let Some(v) = opt_i64(&c.flow_in, i) {
            fixed64_field(&mut self.event, TE_TERMINATING_FLOW_IDS, v as u64);
        }
        // debug annotations, interned names 1..5 in timeline.py's ARGS order
        let args = [
            opt_str(&c.io_id, i).map(Arg::String),
            opt_i64(&c.size_bytes, i).map(Arg::Uint),
            opt_i64(&c.cid, i).map(Arg::Uint),
            opt_str(&c.match_state, i).map(Arg::String),
            opt_i64(&c.stage_dur_ns, i).map(Arg::Int),
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

/// A packet's place in the output: (ts, track uuid, pos).
type Key = (i64, i64, i64);
const COUNTER_POS: i64 = 0;

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

fn begin_key(c: &SliceColumns, i: usize, at: &Position) -> Result<Key, TimelineError> {
    Ok((required(&c.ts, i, at, "ts")?, required(&c.track_uuid, i, at, "track_uuid")?, required(&c.begin_pos, i, at, "begin_pos")?))
}

fn counter_key(c: &CounterColumns, i: usize, at: &Position) -> Result<Key, TimelineError> {
    Ok((required(&c.ts, i, at, "ts")?, required(&c.uuid, i, at, "uuid")?, COUNTER_POS))
}

/// Encodes the slices and counters (Parquet files, each sorted as the module doc says) into
/// one packet stream in (ts, track, pos) order and appends it to `out`. Several files of each
/// are merged as they are read (the writer sorts a long run's slices and counters in parts, so
/// that no one sort holds them all). Returns the number of packets. Memory: a batch of each
/// input, the ends of the slices still open, and the bytes not yet written.
pub fn encode_files(slices: &[PathBuf], counters: &[PathBuf], out: &Path) -> Result<u64, TimelineError> {
    let mut slice_inputs = slices.iter().map(|p| Cursor::open(p, SliceColumns::of)).collect::<Result<Vec<_>, _>>()?;
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
    let mut packets = 0u64;
    let mut last: Option<Key> = None;
    loop {
        let begin = first_of(&mut slice_inputs, begin_key)?;
        let counter = first_of(&mut counter_inputs, counter_key)?;
        let end = ends.peek().map(|Reverse(k)| *k);
        // the smallest key goes next (an end before a begin or counter at the same key)
        let next = [end, begin.map(|(b, _)| b), counter.map(|(c, _)| c)].into_iter().flatten().min();
        let Some(key) = next else { break };
        if last.is_some_and(|l| key < l) {
            let at = match (begin, counter) {
                (Some((b, k)), _) if b == key => slice_inputs[k].position(),
                (_, Some((_, k))) => counter_inputs[k].position(),
                _ => unreachable!("an end key is never below the last key: it is pushed above its begin"),
            };
            return Err(TimelineError(format!(
                "{}: (ts, track, pos) {:?} comes after {:?}: the input is not sorted as the encoder needs",
                at, key, last.unwrap())));
        }
        last = Some(key);
        if Some(key) == end {
            ends.pop();
            enc.slice_end(key.0, key.1, &mut bytes);
        } else if let Some((_, k)) = begin.filter(|(b, _)| *b == key) {
            let input = &mut slice_inputs[k];
            let at = input.position();
            let (c, i) = input.peek()?.expect("peeked above");
            let end_key = (required(&c.end_ts, i, &at, "end_ts")?, key.1, required(&c.end_pos, i, &at, "end_pos")?);
            if end_key <= key {
                return Err(TimelineError(format!("{}: the slice ends ({:?}) before it begins ({:?})", at, end_key, key)));
            }
            if !c.opens_track.is_valid(i) {
                return Err(TimelineError(format!("{}: opens_track is null", at)));
            }
            if c.opens_track.value(i) {
                enc.descriptor(key.1, opt_i64(&c.parent_uuid, i), &mut bytes);
                packets += 1;
            }
            enc.slice_begin(c, i, key.0, key.1, &mut bytes);
            ends.push(Reverse(end_key));
            input.advance();
        } else {
            let (_, k) = counter.expect("the key is a counter's");
            let input = &mut counter_inputs[k];
            let (c, i) = input.peek()?.expect("peeked above");
            enc.counter(c, i, key.0, key.1, &mut bytes);
            input.advance();
        }
        packets += 1;
        if bytes.len() >= 1 << 22 {
            w.write_all(&bytes).map_err(write_err)?;
            bytes.clear();
        }
    }
    w.write_all(&bytes).map_err(write_err)?;
    w.flush().map_err(write_err)?;
    Ok(packets)
}
