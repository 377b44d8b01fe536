"""The timeline: report/timeline.perfetto-trace, Perfetto's native protobuf trace (TrackEvent),
from the views of sql/66_timeline.sql. Open it at https://ui.perfetto.dev (reports/README.md
"timeline.perfetto-trace" says what the tracks are).

Layout of the file (a perfetto.protos.Trace, i.e. a stream of TracePackets):
  1. one packet with the interned strings (slice names, categories, argument names) that
     opens the packet sequence;
  2. the fixed tracks (timeline_tracks): a process per host, a track per transport queue and
     block device under it, counter tracks under those;
  3. in time order: per-io track descriptors, slice begins and ends, counter values.
Packets 1-2 are built here with Perfetto's generated classes (perfetto.protos). The stream of
step 3 (tens of millions of packets at real rates) comes from two Parquet files that DuckDB
sorts, spilling under its memory limit: one row per slice, one per counter value; the
converter binary (analyzer/src/timeline.rs) merges them into packets in time order, one batch
of rows at a time: memory stays bounded whatever the number of I/Os. Every number comes from
the views; this module and the binary only encode."""
import os
import shutil
import subprocess

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from ntscope import converter
from ntscope.errors import NtscopeError
from ntscope.sql.views import private_dir, sql_str

SEQUENCE_ID = 1            # one writer, one packet sequence (also analyzer/src/timeline.rs)
PACKETS_COMPRESSION = "uncompressed"   # the sorted packets live seconds, in the spill folder
# debug annotations (slice args) -> their interned ids (1.. in this order, as
# analyzer/src/timeline.rs writes them) and the timeline_slice_packets column
ARGS = [("io_id", "string"), ("size_bytes", "uint"), ("cid", "uint"), ("match_state", "string"),
        ("stage_dur_ns", "int")]


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


# the two inputs' columns as the encoder reads them (analyzer/src/timeline.rs: integers BIGINT,
# double_value DOUBLE, opens_track BOOLEAN, strings VARCHAR), each in the order it needs
SLICE_COLUMNS = ", ".join(
    [f"{c}::BIGINT AS {c}" for c in ("ts", "end_ts", "track_uuid", "begin_pos", "end_pos")]
    + ["opens_track::BOOLEAN AS opens_track"]
    + [f"{c}::BIGINT AS {c}" for c in ("parent_uuid", "name_iid", "category_iid", "flow_out", "flow_in")]
    + [f"{name}::{'VARCHAR' if kind == 'string' else 'BIGINT'} AS {name}" for name, kind in ARGS])
SLICE_ORDER = "ts, track_uuid, begin_pos"
COUNTER_COLUMNS = "uuid::BIGINT AS uuid, ts::BIGINT AS ts, int_value::BIGINT AS int_value, " \
                  "double_value::DOUBLE AS double_value"
COUNTER_ORDER = "ts, uuid"


def encode(con, slices_query, counters_query, path, work):
    """The rows of the two queries (already in the encoder's order), written to Parquet files in
    the folder work and encoded by the converter binary, appended to path."""
    files = [os.path.join(work, "slices.parquet"), os.path.join(work, "counters.parquet")]
    for query, file in zip((slices_query, counters_query), files):
        con.execute(f"COPY ({query}) TO {sql_str(file)} (FORMAT parquet, COMPRESSION {PACKETS_COMPRESSION})")
    r = subprocess.run([converter.path(), "timeline-encode", *files, "--append-to", path],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise NtscopeError(f"encoding the timeline failed: {r.stderr.strip() or f'exit {r.returncode}'}")


def write(con, path):
    """Writes the timeline of the selected I/Os (io_selected) at path. Returns (fixed tracks, I/Os).
    The header comes from here; DuckDB sorts the slices (timeline_slice_packets, one row per
    slice) and the counters into Parquet files in a private folder (spilling under its memory
    limit) and the converter binary merges them into packets in time order and appends them
    (`ntscope timeline-encode`: a Python object or numpy pass per packet took a quarter of
    analyze's time at 200 k I/Os)."""
    head, n_tracks = header(con)
    with open(path, "wb") as f:
        f.write(head)
    work = private_dir(con, "ntscope-timeline-")
    try:
        encode(con, f"SELECT {SLICE_COLUMNS} FROM timeline_slice_packets ORDER BY {SLICE_ORDER}",
               f"SELECT {COUNTER_COLUMNS} FROM timeline_counters ORDER BY {COUNTER_ORDER}", path, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return n_tracks, con.execute("SELECT count(*) FROM io_selected").fetchall()[0][0]
