"""The timeline: report/timeline.perfetto-trace, Perfetto's native protobuf trace (TrackEvent),
from the views of sql/66_timeline.sql. Open it at https://ui.perfetto.dev (reports/README.md
"timeline.perfetto-trace" says what the tracks are).

Layout of the file (a perfetto.protos.Trace, i.e. a stream of TracePackets):
  1. one packet with the interned strings (slice names, categories, argument names) that
     opens the packet sequence;
  2. the fixed tracks (timeline_tracks): a process per host, a track per transport queue and
     block device under it, counter tracks under those;
  3. timeline_packets in file order: per-io track descriptors, slice begins and ends,
     counter values. Written in batches as DuckDB streams them: memory stays bounded
     whatever the number of I/Os.
Packets 1-2 are built with Perfetto's generated classes (perfetto.protos); the stream of
step 3 is encoded column-wise (pbcol) with the field numbers of the same classes, since a
Python object per packet would take minutes for a million I/Os. Every number comes from the
views; this module only encodes."""
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from ntscope.sql.views import sql_str

from . import pbcol

SEQUENCE_ID = 1            # one writer, one packet sequence
BATCH_ROWS = 65536
ENCODERS = max(1, min(4, os.cpu_count() or 1))
# debug annotations (slice args) -> their interned ids and the timeline_packets column
ARGS = [("io_id", "string"), ("size_bytes", "uint"), ("cid", "uint"), ("match_state", "string"),
        ("stage_dur_ns", "int")]


def _num(message, field):
    return message.DESCRIPTOR.fields_by_name[field].number


TP = {f: _num(pb.TracePacket, f) for f in ("timestamp", "track_event", "track_descriptor",
                                           "trusted_packet_sequence_id", "sequence_flags")}
TE = {f: _num(pb.TrackEvent, f) for f in ("type", "track_uuid", "name_iid", "category_iids", "flow_ids",
                                          "terminating_flow_ids", "counter_value", "double_counter_value",
                                          "debug_annotations")}
DA = {f: _num(pb.DebugAnnotation, f) for f in ("name_iid", "string_value", "uint_value", "int_value")}
TD = {f: _num(pb.TrackDescriptor, f) for f in ("uuid", "parent_uuid", "name")}
PACKET = _num(pb.Trace, "packet")
IO_TRACK_NAME = b"io"      # every per-io track: the UI draws the siblings of one queue as one track


def stage_set_of(con, doc):
    """The set the timeline draws: the report's primary set (primary_stage_set, or what its
    --stage-set kept); sets timeline_stage_set accordingly."""
    chosen = doc["primary_stage_set"]
    con.execute(f"CREATE OR REPLACE VIEW timeline_stage_set AS SELECT {sql_str(chosen)} AS stage_set")
    return chosen


def header(con):
    """Packets 1 and 2 (see the module doc), serialized; and the number of fixed tracks."""
    first = pb.TracePacket(trusted_packet_sequence_id=SEQUENCE_ID, first_packet_on_sequence=True,
                           sequence_flags=pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
                           | pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE)
    for kind, name, iid in con.execute("SELECT kind, name, iid FROM timeline_names ORDER BY kind, iid").fetchall():
        entries = first.interned_data.event_names if kind == "event" else first.interned_data.event_categories
        entries.add(iid=iid, name=name)
    for iid, (name, _) in enumerate(ARGS, 1):
        first.interned_data.debug_annotation_names.add(iid=iid, name=name)
    trace = pb.Trace(packet=[first])
    tracks = con.execute("SELECT uuid, parent_uuid, kind, name, pid, unit, sibling_rank FROM timeline_tracks "
                         "ORDER BY uuid").fetchall()
    for uuid, parent, kind, name, pid, unit, rank in tracks:
        d = trace.packet.add().track_descriptor
        d.uuid = uuid
        if kind == "host":
            d.process.pid, d.process.process_name = pid, name
        else:
            d.parent_uuid, d.name, d.sibling_order_rank = parent, name, rank
        if kind == "counter":
            d.counter.unit_name = unit
        if kind != "counter":
            d.child_ordering = pb.TrackDescriptor.EXPLICIT
    return trace.SerializeToString(), len(tracks)


def _packet(n, ts, event, seq_present=True):
    """A TracePacket on our sequence: timestamp, track_event, sequence id and flags."""
    return (pbcol.varint_field(TP["timestamp"], ts, n)
            + pbcol.message_field(TP["track_event"], event)
            + pbcol.const(n, pbcol.tag(TP["trusted_packet_sequence_id"], pbcol.VARINT) + bytes([SEQUENCE_ID])
                          + pbcol.tag(TP["sequence_flags"], pbcol.VARINT)
                          + bytes([pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE])))


def _event_head(n, type_, track_uuid):
    return (pbcol.const(n, pbcol.tag(TE["type"], pbcol.VARINT) + bytes([type_]))
            + pbcol.varint_field(TE["track_uuid"], track_uuid, n))


def _args(b, n):
    """The debug annotations (slice args) present in this part of the batch."""
    out = pbcol.Rows(n)
    for iid, (name, kind) in enumerate(ARGS, 1):
        values = b.column(name)
        if values.null_count == n:
            continue
        value = (pbcol.string_field(DA["string_value"], values, n) if kind == "string" else
                 pbcol.varint_field(DA["uint_value" if kind == "uint" else "int_value"], values, n))
        ann = pbcol.const(n, pbcol.tag(DA["name_iid"], pbcol.VARINT) + bytes([iid])) + value
        out += pbcol.message_field(TE["debug_annotations"], ann, values.is_valid().to_numpy(zero_copy_only=False))
    return out


def _part(kind, b):
    """The TracePackets of the rows of one kind (see timeline_packets.kind)."""
    n, col = b.num_rows, b.column
    if kind == 0:
        desc = (pbcol.varint_field(TD["uuid"], col("track_uuid"), n)
                + pbcol.varint_field(TD["parent_uuid"], col("parent_uuid"), n)
                + pbcol.const(n, pbcol.tag(TD["name"], pbcol.LEN) + bytes([len(IO_TRACK_NAME)]) + IO_TRACK_NAME))
        return pbcol.message_field(TP["track_descriptor"], desc)
    if kind == 1:
        event = (_event_head(n, pb.TrackEvent.TYPE_SLICE_BEGIN, col("track_uuid"))
                 + pbcol.varint_field(TE["name_iid"], col("name_iid"), n)
                 + pbcol.varint_field(TE["category_iids"], col("category_iid"), n)
                 + pbcol.fixed64_field(TE["flow_ids"], col("flow_out"), n)
                 + pbcol.fixed64_field(TE["terminating_flow_ids"], col("flow_in"), n)
                 + _args(b, n))
    elif kind == 2:
        event = _event_head(n, pb.TrackEvent.TYPE_SLICE_END, col("track_uuid"))
    else:
        event = (_event_head(n, pb.TrackEvent.TYPE_COUNTER, col("track_uuid"))
                 + pbcol.varint_field(TE["counter_value"], col("int_value"), n)
                 + pbcol.double_field(TE["double_counter_value"], col("double_value"), n))
    return _packet(n, col("ts"), event)


def encode(batch):
    """One Arrow batch of timeline_packets -> the bytes of its TracePackets, in row order.
    Each kind of packet is encoded with its own fields only, then the rows are interleaved
    back (equal times on one track must keep their depth-first order)."""
    kind = batch.column("kind").to_numpy(zero_copy_only=False)
    parts = []
    for k in (0, 1, 2, 3):
        idx = np.flatnonzero(kind == k)
        if len(idx):
            packets = pbcol.message_field(PACKET, _part(k, batch.take(idx)))
            parts.append((idx, packets))
    return pbcol.interleave(parts, batch.num_rows)


COLUMNS = ("kind, ts, track_uuid, parent_uuid, name_iid, category_iid, flow_out, flow_in, int_value, "
           "double_value, " + ", ".join(name for name, _ in ARGS))


def write(con, path):
    """Writes the timeline of the selected I/Os (io_selected) at path. Returns (fixed tracks, I/Os).
    Batches are encoded on ENCODERS threads (numpy releases the GIL in its array work; DuckDB
    has finished the sort by the first batch and idles) and written in their order; at most
    2 x ENCODERS batches are in flight, so memory stays bounded."""
    head, n_tracks = header(con)
    with open(path, "wb") as f, ThreadPoolExecutor(ENCODERS) as pool:
        f.write(head)
        reader = con.sql(f"SELECT {COLUMNS} FROM timeline_packets ORDER BY ts, track_uuid, pos").to_arrow_reader(
            BATCH_ROWS)
        pending = deque()
        for batch in reader:
            if batch.num_rows:
                pending.append(pool.submit(encode, batch))
            while len(pending) > 2 * ENCODERS:
                f.write(pending.popleft().result())
        while pending:
            f.write(pending.popleft().result())
    return n_tracks, con.execute("SELECT count(*) FROM io_selected").fetchall()[0][0]
