"""The timeline: report/timeline.perfetto-trace, Perfetto's native protobuf trace (TrackEvent),
from the views of sql/timeline/timeline.sql. Open it at https://ui.perfetto.dev (reports/README.md
"timeline.perfetto-trace" says what the tracks are).

Layout of the file (a perfetto.protos.Trace, i.e. a stream of TracePackets):
  1. one packet with the interned strings (slice names, categories, argument names) that
     opens the packet sequence;
  2. the fixed tracks (timeline_tracks): a process per host, a track per transport queue and
     block device under it, counter tracks under those, per CPU a track of io_work runs and
     one of NET_RX softirq runs, and per initiator path that has them (timeline_paths) a group
     of its events (ANA notices, switches, outages) and its counters, per tenant of a host with
     several (timeline_tenants) a group of its counters;
  3. in time order: the io lanes' track descriptors (a few per queue), slice begins and ends,
     counter values.
Packets 1-2 are built here with Perfetto's generated classes (perfetto.protos). The stream of
step 3 (tens of millions of packets at real rates) comes from Parquet files that DuckDB sorts,
spilling under its memory limit: the io rows and their stage spans (timeline_io_rows_of,
timeline_spans_of over the part's order, timeline_io_order_part, stored once in ORDER_TABLE), in
parts of at most PART_IOS I/Os, and the counter values in the same parts' time ranges (one sort
per part: a statement holds one part, whatever the run's length), and the CPU runs starting in
those ranges (timeline_cpu_events_part) and the paths' events too (timeline_path_events_part);
the converter binary (analyzer/src/timeline.rs) lays each io's slices out by the slot table
(timeline_slots: nested on their track) and merges them with the counters into packets in time
order, one batch of rows at a time: memory stays bounded whatever the number of I/Os. Every time
and duration comes from the views; this module and the binary only draw and encode."""
import os
import shlex
import shutil
import signal
import subprocess

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from ntscope.common import converter
from ntscope.common.errors import NtscopeError
from ntscope.sql.quoting import sql_int, sql_str
from ntscope.sql.spill import private_dir
from ntscope.sql import views

# I/Os per sorted part (about 13 slices each). The 100 M-event run (7.7 M I/Os) ran out of its
# 2 GB memory limit sorting all its slices in one statement. 1 M I/Os is about the 10 M-event
# benchmark run, whose whole timeline passes even under 250 MB in parts of 100 k I/Os
PART_IOS = 1_000_000
INT64_MIN = -2**63
FILE_NAME = "timeline.perfetto-trace"   # in the report set (analyze writes it, size_hint reads it)
# a table of the run's database (its blocks can spill) holding one part's timeline_io_order_part
# rows while that part's io rows and spans are written; dropped after
ORDER_TABLE = "timeline_part_order"
SEQUENCE_ID = 1            # one writer, one packet sequence (also analyzer/src/timeline.rs)
# The sorted packets' files live seconds, in the spill folder: uncompressed, and written without
# dictionaries in Parquet 2's pages (delta-encoded integers), which DuckDB writes faster: the 10 M-event
# run's three COPYs 3.5 -> 3.1 s
PACKETS_PARQUET = "FORMAT parquet, COMPRESSION uncompressed, DICTIONARY_SIZE_LIMIT 1, PARQUET_VERSION V2"
# debug annotations (slice args) -> their interned ids (1.. in this order, as
# analyzer/src/timeline.rs writes them) and the timeline_io_rows column
ARGS = [("io_id", "string"), ("size_bytes", "uint"), ("cid", "uint"), ("match_state", "string"),
        ("stage_dur_ns", "int"), ("cpu_wait_ns", "int"), ("detail", "string")]
# The Perfetto UI holds a trace in the browser's memory: about 2 GB, 2-4x an uncompressed proto
# trace's size (perfetto.dev/docs/visualization/large-traces). A timeline larger than a quarter
# of that may not open there: analyze then says how to open it (size_hint). 10 M events of a
# run make about 750 MB.
UI_TRACE_BYTES = 500 * 10**6


def stage_set_of(con, doc):
    """The set the timeline draws: the report's primary set (primary_stage_set, or what its
    --stage-set kept); the timeline's views (sql/timeline/) are loaded with it as timeline_stage_set."""
    chosen = doc["primary_stage_set"]
    views.load_modules(con, ["timeline/timeline"], {"timeline_stage_set": f"SELECT {sql_str(chosen)} AS stage_set"})
    return chosen


def header(con):
    """Packets 1 and 2 (see the module doc), serialized."""
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
    return trace.SerializeToString()


# the inputs' columns as the encoder reads them (analyzer/src/timeline.rs: integers BIGINT,
# double_value DOUBLE, strings VARCHAR), each in the order it needs
SLOT_COLUMNS = ", ".join(f"{c}::BIGINT AS {c}" for c in (
    "slot", "part_no", "parent_slot", "depth", "sib", "begin_pos", "end_pos", "flow", "name_iid"))
IO_COLUMNS = ", ".join(
    [f"{c}::BIGINT AS {c}" for c in ("start_ts", "n", "s", "e", "queue_track", "target_queue_track", "out_flow",
                                      "back_flow", "category_iid")]
    + [f"{name}::{'VARCHAR' if kind == 'string' else 'BIGINT'} AS {name}" for name, kind in ARGS
       if name not in ("stage_dur_ns", "cpu_wait_ns", "detail")])
IO_ORDER = "start_ts, n"
SPAN_COLUMNS = ", ".join(f"{c}::BIGINT AS {c}" for c in ("n", "slot", "s", "e", "dur"))
SPAN_ORDER = "start_ts, n, slot"
COUNTER_COLUMNS = "uuid::BIGINT AS uuid, ts::BIGINT AS ts, int_value::BIGINT AS int_value, " \
                  "double_value::DOUBLE AS double_value"
COUNTER_ORDER = "ts, uuid"
# CPU runs' begins and ends: counter rows with a slice type (timeline_cpu_events_part)
CPU_COLUMNS = COUNTER_COLUMNS + ", " + ", ".join(f"{c}::BIGINT AS {c}" for c in ("pos", "type", "name_iid", "cpu_wait_ns"))
CPU_ORDER = "ts, uuid, pos"
# a path's events: the same, with their detail argument (timeline_path_events_part)
PATH_COLUMNS = CPU_COLUMNS + ", detail::VARCHAR AS detail"


def parts(con, part_ios):
    """The parts the slices and counters are sorted in: (lo_ts, hi_ts, n_before) per part,
    ranges of timeline_ios.order_ts of about part_ios I/Os each (cut at approximate quantiles:
    any increasing cuts are right, timeline_io_order_part numbers each part's I/Os from n_before)."""
    total = con.execute("SELECT count(*) FROM timeline_ios").fetchall()[0][0]
    k = -(-total // part_ios)
    if k <= 1:
        return [(INT64_MIN, None, 0)]
    fractions = ", ".join(repr(i / k) for i in range(1, k))   # a constant: the aggregate's argument
    cuts = con.execute(f"SELECT approx_quantile(order_ts, [{fractions}]) FROM timeline_ios").fetchall()[0][0]
    cuts = sorted({int(c) for c in cuts})
    # each io's part: the number of cuts at or below its order_ts
    counts = dict(con.execute("SELECT len(list_filter(?::BIGINT[], lambda c: c <= order_ts)) AS part, count(*) "
                              "FROM timeline_ios GROUP BY part", [cuts]).fetchall())
    bounds = [INT64_MIN] + cuts + [None]
    out, before = [], 0
    for j in range(len(cuts) + 1):
        out.append((bounds[j], bounds[j + 1], before))
        before += counts.get(j, 0)
    return out


class Encoding:
    """The converter binary encoding a timeline in the background (start): finish() waits for it
    and raises if it failed, abort() stops it; either removes the working folder."""

    def __init__(self, proc, work):
        self.proc, self.work = proc, work

    def finish(self):
        try:
            _, err = self.proc.communicate()
            if self.proc.returncode == -signal.SIGINT:   # Ctrl-C reached the encoder too: exit 130
                raise KeyboardInterrupt
            if self.proc.returncode != 0:
                raise NtscopeError(f"encoding the timeline failed: {err.strip() or f'exit {self.proc.returncode}'}")
        finally:
            shutil.rmtree(self.work, ignore_errors=True)

    def abort(self):
        self.proc.kill()
        self.proc.communicate()
        shutil.rmtree(self.work, ignore_errors=True)


def encode(con, parts_queries, path, work):
    """The slot table and the rows of the queries (each already in the encoder's order), written to
    Parquet files in the folder work, then the converter binary started on them, appending to
    path: an Encoding (the binary reads only those files, so DuckDB may go on with other work
    meanwhile). parts_queries: per part, the statement that stores its order (ORDER_TABLE), then
    the queries of its io rows, spans, counters, CPU runs and paths' events."""
    slots = os.path.join(work, "slots.parquet")
    con.execute(f"COPY (SELECT {SLOT_COLUMNS} FROM timeline_slots ORDER BY slot) TO {sql_str(slots)} ({PACKETS_PARQUET})")
    first_lane = con.execute("SELECT coalesce(max(uuid), 0) + 1 FROM timeline_tracks").fetchall()[0][0]
    args = ["--layout", slots, "--first-lane-uuid", str(first_lane)]
    for k, (store_order, *queries) in enumerate(parts_queries):
        con.execute(store_order)
        for j, (flag, query) in enumerate(zip(("--ios", "--spans", "--counters", "--counters", "--counters"), queries)):
            file = os.path.join(work, f"{flag[2:]}-{k}-{j}.parquet")
            con.execute(f"COPY ({query}) TO {sql_str(file)} ({PACKETS_PARQUET})")
            args += [flag, file]
    proc = subprocess.Popen([converter.path(), "timeline-encode", *args, "--append-to", path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return Encoding(proc, work)


def start(con, path, part_ios=PART_IOS):
    """Starts writing the timeline of the selected I/Os (io_selected) at path: returns an
    Encoding, whose finish() completes the file. The header comes from here; DuckDB sorts the
    io rows and their stage spans (timeline_io_rows_of, timeline_spans_of over the part's order
    in ORDER_TABLE, a part of at most about part_ios I/Os at a time) and the counters
    (timeline_counters_part, the same parts' time ranges) into Parquet files in a private folder
    (spilling under its memory limit), and the converter binary lays the slices out, merges them
    into packets in time order and appends them (`ntscope timeline-encode`: a Python object or
    numpy pass per packet took a quarter of analyze's time at 200 k I/Os) while the caller goes
    on (analyze writes the per-I/O Parquet meanwhile)."""
    with open(path, "wb") as f:
        f.write(header(con))
    work = private_dir(con, "ntscope-timeline-")
    order = sql_str(ORDER_TABLE)
    drop_order = f"DROP TABLE IF EXISTS {ORDER_TABLE}"
    try:
        bounds = [(sql_int(lo), sql_int(hi), sql_int(before)) for lo, hi, before in parts(con, part_ios)]
        encoding = encode(con, [
            (f"CREATE OR REPLACE TABLE {ORDER_TABLE} AS FROM timeline_io_order_part({lo}, {hi}, {before})",
             f"SELECT {IO_COLUMNS} FROM timeline_io_rows_of({order}) ORDER BY {IO_ORDER}",
             f"SELECT {SPAN_COLUMNS} FROM timeline_spans_of({order}) ORDER BY {SPAN_ORDER}",
             f"SELECT {COUNTER_COLUMNS} FROM timeline_counters_part({lo}, {hi}) ORDER BY {COUNTER_ORDER}",
             f"SELECT {CPU_COLUMNS} FROM timeline_cpu_events_part({lo}, {hi}) ORDER BY {CPU_ORDER}",
             f"SELECT {PATH_COLUMNS} FROM timeline_path_events_part({lo}, {hi}) ORDER BY {CPU_ORDER}")
            for lo, hi, before in bounds], path, work)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        try:
            con.execute(drop_order)
        except Exception:   # a connection that failed: the error being raised says why
            pass
        raise
    con.execute(drop_order)
    return encoding


def size_hint(path):
    """A line for people when the timeline at path is larger than the Perfetto UI opens on its own
    (UI_TRACE_BYTES), else None."""
    size = os.path.getsize(path)
    if size <= UI_TRACE_BYTES:
        return None
    return (f"{os.path.basename(path)} is {size / 1e6:,.0f} MB: more than the Perfetto UI can load in a "
            f"browser (about 2 GB of memory, 2-4x a trace's size); start `trace_processor_shell --httpd "
            f"{shlex.quote(path)}` (perfetto.dev) and open https://ui.perfetto.dev, which offers to use it; "
            f"or draw a few seconds of the run: analyze --window START:END --out DIR")


def write(con, path, part_ios=PART_IOS):
    """Writes the timeline of the selected I/Os at path: start, then finish."""
    start(con, path, part_ios).finish()
