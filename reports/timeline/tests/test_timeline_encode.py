"""`ntscope timeline-encode` (analyzer/src/timeline.rs, the timeline's packet encoder) against
protobuf itself: a slot table, io rows with their stage spans and counter values, written to
Parquet by DuckDB as timeline.write does, parse back with Perfetto's generated classes into the
slices they stand for (laid out as analyzer/src/timeline_slices.rs says: here one sibling is
moved after another), merged into the order (ts, track, pos) that a plain sort of every packet
gives (ends that interleave with later begins, equal times on one track depth-first, a
zero-length slice, counters between slices), each io part on the first free lane of its queue
(lanes numbered from --first-lane-uuid), slices of fixed tracks (CPU runs) among the counters;
each kind of packet (track descriptor, slice begin, slice end, counter), varint edges (0, 127, 128, 2^63 - 1), negative int64 (a counter, a
stage duration), doubles, fixed64 flow ids above 2^63, UTF-8 and empty strings, absent fields
(nulls); a bad input (a column missing or of the wrong type, rows out of order, a slot table
without a root, an io starting after its first slice, a missing file) fails with the file and
row named."""
import os
import subprocess

import duckdb
import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from ntscope.common import converter
from ntscope.reports.timeline import perfetto_trace as timeline
from ntscope.sql.quoting import sql_str

ROOT_END = 63 * 262144
P1, P2 = 262144, 2 * 262144         # depth-1 begin positions, their ends + 63 * 4096
SLOT_COLS = ["slot", "part_no", "parent_slot", "depth", "sib", "begin_pos", "end_pos", "flow", "name_iid"]
# roots 1 (initiator, name 1) and 2 (target, name 200); A (3, hands over to the target) and B (4,
# gets it back) on the initiator; T (5) on the target
SLOTS = [
    (1, 0, None, 0, 1, 0, ROOT_END, 0, 1),
    (2, 1, None, 0, 1, 0, ROOT_END, 0, 200),
    (3, 0, 1, 1, 1, P1, P1 + 63 * 4096, 1, 3),
    (4, 0, 1, 1, 2, P2, P2 + 63 * 4096, 2, 4),
    (5, 1, 2, 1, 1, P1, P1 + 63 * 4096, 0, 2),
]
IO_COLS = ["start_ts", "n", "s", "e", "queue_track", "target_queue_track",
           "out_flow", "back_flow", "category_iid", "io_id", "size_bytes", "cid", "match_state"]
FLOW = 2**63 + 5
FIRST_LANE = 40
# io 1: its initiator part on lane 40 ('io 1' under queue 7), a root [0, 16384), A [127, 16384)
# ending with it (depth-first: A's end first) with a duration of its own (-3), its target part
# [300, 400) on lane 41 ('io 1' under no queue); io 2's initiator part (under no queue too) opens
# lane 42 ('io 2': lane 41 is taken until 400) at 128 while 40 is open: A [128, 299) and a
# zero-length B at 200 that A's end moves to 299
IOS = [
    (0, 1, 0, 16384, 7, None, FLOW, 6, 2, "initiator/0/1/8306/12088813870", 4096, 127, "ünïcödé"),
    (128, 2, 128, 300, None, None, 3, 4, None, "", 2**40, 65535, None),
]
LANE_NAMES = {40: "io 1", 41: "io 1", 42: "io 2"}
SPAN_COLS = ["n", "slot", "s", "e", "dur"]
SPANS = [(1, 3, 127, 16384, -3), (1, 5, 300, 400, 100), (2, 3, 128, 299, 2**62), (2, 4, 200, 200, 0)]
COUNTER_COLS = ["uuid", "ts", "int_value", "double_value"]
COUNTERS = [(9, 127, 5, None), (10, 300, None, -3.25), (9, 16384, 0, None), (9, 2**63 - 1, -(2**63), None)]
SLICE_COLS = ["ts", "end_ts", "track_uuid", "begin_pos", "end_pos", "opens_track", "parent_uuid", "name_iid",
              "category_iid", "flow_out", "flow_in", "io_id", "size_bytes", "cid", "match_state", "stage_dur_ns"]
# the slices the rows above stand for, by hand
SLICES = [
    (0, 16384, 40, 0, ROOT_END, True, 7, 1, 2, None, None, "initiator/0/1/8306/12088813870", 4096, 127,
     "ünïcödé", None),
    (127, 16384, 40, P1, P1 + 63 * 4096, False, None, 3, 2, FLOW, None, None, None, None, None, -3),
    (300, 400, 41, 0, ROOT_END, True, None, 200, 2, None, FLOW, "initiator/0/1/8306/12088813870", None, None,
     None, None),
    (300, 400, 41, P1, P1 + 63 * 4096, False, None, 2, 2, None, None, None, None, None, None, None),
    (128, 300, 42, 0, ROOT_END, True, None, 1, None, None, None, "", 2**40, 65535, None, None),
    (128, 299, 42, P1, P1 + 63 * 4096, False, None, 3, None, None, None, None, None, None, None, 2**62),
    (299, 299, 42, P2, P2 + 63 * 4096, False, None, 4, None, None, None, None, None, None, None, None),
]
TYPES = {"double_value": "DOUBLE", "io_id": "VARCHAR", "match_state": "VARCHAR", "detail": "VARCHAR"}


def int64(v):
    return v - 2**64 if isinstance(v, int) and not isinstance(v, bool) and v >= 2**63 else v


def to_parquet(con, name, cols, rows, path, columns):
    """rows -> a Parquet file of the columns (timeline.py's casts), in the rows' order. HUGEINT
    holds the values before the cast, BIGINT (the flow ids >= 2^63 as their two's complement)."""
    types = ", ".join(f"{c} {TYPES.get(c, 'HUGEINT')}" for c in cols)
    con.execute(f"CREATE OR REPLACE TABLE {name} ({types}, row_no INT)")
    if rows:
        con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' * (len(cols) + 1))})",
                        [[int64(v) for v in r] + [i] for i, r in enumerate(rows)])
    con.execute(f"COPY (SELECT {columns} FROM {name} ORDER BY row_no) "
                f"TO {sql_str(path)} ({timeline.PACKETS_PARQUET})")
    return path


def encode(tmp_path, ios=None, spans=None, counters=None, parts=None, slots=SLOTS, io_columns=None,
           span_columns=None, counter_columns=None, cpu=None, path_events=None):
    """rows -> Parquet (DuckDB) -> the binary -> (packets, the run). parts: [(ios, spans, counters)]
    of several parts instead of one; cpu: rows of CPU_COLS, one more counters file; path_events:
    rows of PATH_COLS, one more."""
    con = duckdb.connect()
    args = ["--layout", to_parquet(con, "slots", SLOT_COLS, slots, str(tmp_path / "slots.parquet"), timeline.SLOT_COLUMNS),
            "--first-lane-uuid", str(FIRST_LANE)]
    if cpu is not None:
        args += ["--counters", to_parquet(con, "cpu", CPU_COLS, cpu, str(tmp_path / "cpu.parquet"), timeline.CPU_COLUMNS)]
    if path_events is not None:
        args += ["--counters", to_parquet(con, "path", PATH_COLS, path_events, str(tmp_path / "path.parquet"),
                                          timeline.PATH_COLUMNS)]
    parts = parts or [(IOS if ios is None else ios, SPANS if spans is None else spans,
                       COUNTERS if counters is None else counters)]
    for k, (i, s, c) in enumerate(parts):
        suffix = "" if len(parts) == 1 else f"-{k}"
        args += ["--ios", to_parquet(con, "ios", IO_COLS, i, str(tmp_path / f"ios{suffix}.parquet"),
                                     io_columns or timeline.IO_COLUMNS),
                 "--spans", to_parquet(con, "spans", SPAN_COLS, s, str(tmp_path / f"spans{suffix}.parquet"),
                                       span_columns or timeline.SPAN_COLUMNS),
                 "--counters", to_parquet(con, "counters", COUNTER_COLS, c, str(tmp_path / f"counters{suffix}.parquet"),
                                          counter_columns or timeline.COUNTER_COLUMNS)]
    out = str(tmp_path / "out.pftrace")
    with open(out, "wb") as f:
        f.write(b"")
    r = subprocess.run([converter.path(), "timeline-encode", *args, "--append-to", out], capture_output=True, text=True)
    with open(out, "rb") as f:
        return pb.Trace.FromString(f.read()).packet, r


def expected_packets():
    """Every packet SLICES and COUNTERS stand for, sorted by (ts, track, pos): what the merge must give."""
    out = []
    for row in SLICES:
        v = dict(zip(SLICE_COLS, row))
        if v["opens_track"]:
            out.append(((v["ts"], v["track_uuid"], -1), "descriptor", v))
        out.append(((v["ts"], v["track_uuid"], v["begin_pos"]), "begin", v))
        out.append(((v["end_ts"], v["track_uuid"], v["end_pos"]), "end", v))
    for row in COUNTERS:
        v = dict(zip(COUNTER_COLS, row))
        out.append(((v["ts"], v["uuid"], 0), "counter", v))
    return sorted(out, key=lambda x: x[0])


def test_rows_parse_back_with_protobuf_in_time_order(tmp_path):
    packets, r = encode(tmp_path)
    assert r.returncode == 0, r.stderr
    want = expected_packets()
    assert len(packets) == len(want) == 2 * len(SLICES) + 3 + len(COUNTERS)
    for p, ((ts, track, _), what, v) in zip(packets, want):
        if what == "descriptor":
            d = p.track_descriptor
            assert (d.uuid, d.HasField("parent_uuid"), d.name) == (track, v["parent_uuid"] is not None, LANE_NAMES[track])
            assert d.parent_uuid == (v["parent_uuid"] or 0)
            assert not p.HasField("timestamp") and not p.HasField("track_event")
            continue
        assert (p.timestamp, p.trusted_packet_sequence_id) == (ts, timeline.SEQUENCE_ID), what
        assert p.sequence_flags == pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
        e = p.track_event
        assert e.track_uuid == track
        assert e.type == {"begin": pb.TrackEvent.TYPE_SLICE_BEGIN, "end": pb.TrackEvent.TYPE_SLICE_END,
                          "counter": pb.TrackEvent.TYPE_COUNTER}[what]
        if what == "counter":
            assert (e.counter_value if e.HasField("counter_value") else None) == v["int_value"]
            assert (e.double_counter_value if e.HasField("double_counter_value") else None) == v["double_value"]
            assert not e.HasField("name_iid") and not e.debug_annotations
            continue
        if what == "end":
            assert not e.HasField("name_iid") and not e.debug_annotations and not e.flow_ids
            continue
        assert e.name_iid == v["name_iid"], v
        assert list(e.category_iids) == ([] if v["category_iid"] is None else [v["category_iid"]])
        assert list(e.flow_ids) == ([] if v["flow_out"] is None else [v["flow_out"]])
        assert list(e.terminating_flow_ids) == ([] if v["flow_in"] is None else [v["flow_in"]])
        args = {a.name_iid: a for a in e.debug_annotations}
        for iid, (name, kind) in enumerate(timeline.ARGS, 1):
            if v.get(name) is None:
                assert iid not in args, (name, v)
                continue
            a = args.pop(iid)
            got = {"string": a.string_value, "uint": a.uint_value, "int": a.int_value}[kind]
            assert a.WhichOneof("value") == f"{kind}_value" and got == v[name], name
        assert not args
    # the order itself, spelled out: lane 42 opens while 40 is open; at 16384 the counter on
    # track 9 comes before lane 40's two ends, the child's end before its root's
    kinds = [(p.timestamp, p.track_event.track_uuid, p.track_event.type) if p.HasField("track_event")
             else ("descriptor", p.track_descriptor.uuid) for p in packets]
    assert kinds[:6] == [("descriptor", 40), (0, 40, 1), (127, 9, 4), (127, 40, 1), ("descriptor", 42), (128, 42, 1)]
    assert kinds[-4:] == [(16384, 9, 4), (16384, 40, 2), (16384, 40, 2), (2**63 - 1, 9, 4)]
    ends_42 = [p.timestamp for p in packets if p.HasField("track_event") and p.track_event.track_uuid == 42
               and p.track_event.type == 2]
    assert ends_42 == [299, 299, 300]
    # annotations in ARGS order, as the header interns their names
    assert [a.name_iid for a in packets[1].track_event.debug_annotations] == [1, 2, 3, 4]


def lane_roots(packets):
    """(begin ts, lane uuid) of every root slice (name 1 or 200), and the lanes' descriptors."""
    roots = [(p.timestamp, p.track_event.track_uuid) for p in packets
             if p.HasField("track_event") and p.track_event.type == 1 and p.track_event.name_iid in (1, 200)]
    return roots, {p.track_descriptor.uuid: (p.track_descriptor.name, p.track_descriptor.parent_uuid)
                   for p in packets if p.HasField("track_descriptor")}


def test_io_parts_take_the_first_free_lane_of_their_queue(tmp_path):
    """Lanes are reused: an io part takes the first lane of its queue whose last part ended before
    it begins, else opens one (its descriptor once, just before its first slice); a part that
    begins at the very time the lane's last part ended takes another lane (at one time a begin
    is written before an end: it would nest in the other io)."""
    q = 7
    rows = [  # start_ts, n, s, e on queue 7, no spans: root slices only
        (0, 1, 0, 100), (10, 2, 10, 50), (60, 3, 60, 70), (100, 4, 100, 120), (101, 5, 101, 130), (200, 6, 200, 210)]
    ios = [(st, n, s, e, q, None, 2 * n - 1, 2 * n, None, f"io{n}", 4096, n, None) for st, n, s, e in rows]
    packets, r = encode(tmp_path, ios=ios, spans=[], counters=[])
    assert r.returncode == 0, r.stderr
    roots, lanes = lane_roots(packets)
    # io 1 lane 40; io 2 overlaps it: 41; io 3 after io 2's end: 41 again; io 4 begins when io 1
    # ends (100): not lane 40, which is busy until 100 inclusive; 41 is free (70); io 5: 40 (ended
    # at 100 < 101); io 6: the first lane, 40
    assert roots == [(0, 40), (10, 41), (60, 41), (100, 41), (101, 40), (200, 40)]
    assert lanes == {40: ("io 1", q), 41: ("io 2", q)}
    assert sum(p.HasField("track_descriptor") for p in packets) == 2


CPU_COLS = ["uuid", "ts", "int_value", "double_value", "pos", "type", "name_iid", "cpu_wait_ns"]


def test_slices_of_fixed_tracks_come_with_the_counters(tmp_path):
    """A counters file with a type column holds slices on fixed tracks (the CPU runs): a begin
    (type 1) with its name and cpu_wait_ns argument, an end (type 2); at one time on one track an
    end (pos 0) before a begin (1), the end of a zero-length run (2) after it."""
    cpu = [(11, 50, None, None, 1, 1, 5, 7), (11, 60, None, None, 0, 2, None, None),
           (11, 60, None, None, 1, 1, 6, None), (11, 60, None, None, 2, 2, None, None),
           (11, 2**62, None, None, 1, 1, 5, -(2**40)), (11, 2**62 + 1, None, None, 0, 2, None, None)]
    packets, r = encode(tmp_path, cpu=cpu)
    assert r.returncode == 0, r.stderr
    on11 = [p for p in packets if p.HasField("track_event") and p.track_event.track_uuid == 11]
    assert [(p.timestamp, p.track_event.type, p.track_event.name_iid) for p in on11] == [
        (50, 1, 5), (60, 2, 0), (60, 1, 6), (60, 2, 0), (2**62, 1, 5), (2**62 + 1, 2, 0)]
    waits = [[(a.name_iid, a.int_value) for a in p.track_event.debug_annotations] for p in on11]
    assert waits == [[(6, 7)], [], [], [], [(6, -(2**40))], []]
    assert timeline.ARGS[5] == ("cpu_wait_ns", "int")        # iid 6, as the header interns it
    # among the io slices and counters, in time order
    times = [p.timestamp for p in packets if p.HasField("track_event")]
    assert times == sorted(times) and len(packets) == 2 * len(SLICES) + 3 + len(COUNTERS) + len(cpu)
    _, r = encode(tmp_path, cpu=[cpu[1], cpu[0]])
    assert r.returncode == 2 and "cpu.parquet row 1" in r.stderr and "not sorted" in r.stderr, r.stderr


PATH_COLS = CPU_COLS + ["detail"]


def test_instants_and_a_detail_argument_on_fixed_tracks(tmp_path):
    """A path's events (timeline_path_events_part): an instant (type 3) with its name and detail
    argument, inside a slice (begin with a detail, end); at one time an end (pos 0) before a
    begin (1) before an instant (3); a null detail gives no argument."""
    rows = [(12, 70, None, None, 1, 1, 8, None, "no answer for 8.012 s"),
            (12, 80, None, None, 3, 3, 9, None, "ünïcödé"),
            (12, 90, None, None, 0, 2, None, None, None),
            (12, 90, None, None, 3, 3, 10, None, None)]
    packets, r = encode(tmp_path, path_events=rows)
    assert r.returncode == 0, r.stderr
    on12 = [p.track_event for p in packets if p.HasField("track_event") and p.track_event.track_uuid == 12]
    assert [(e.type, e.name_iid) for e in on12] == [
        (pb.TrackEvent.TYPE_SLICE_BEGIN, 8), (pb.TrackEvent.TYPE_INSTANT, 9), (pb.TrackEvent.TYPE_SLICE_END, 0),
        (pb.TrackEvent.TYPE_INSTANT, 10)]
    assert [[(a.name_iid, a.string_value) for a in e.debug_annotations] for e in on12] == [
        [(7, "no answer for 8.012 s")], [(7, "ünïcödé")], [], []]
    assert timeline.ARGS[6] == ("detail", "string")          # iid 7, as the header interns it


def test_several_parts_are_merged_into_the_same_stream(tmp_path):
    """timeline.write sorts the ios in parts of a bounded number of I/Os (an io's spans in its
    part, parts overlapping in time) and the counters in the parts' times: merged, the packets
    are those of one part."""
    (tmp_path / "one").mkdir()
    whole, r = encode(tmp_path / "one")
    assert r.returncode == 0, r.stderr
    parts, r = encode(tmp_path, parts=[(IOS[1:], SPANS[2:], COUNTERS[:2]), (IOS[:1], SPANS[:2], []),
                                       ([], [], COUNTERS[2:])])
    assert r.returncode == 0, r.stderr
    assert len(parts) == len(whole) == 2 * len(SLICES) + 3 + len(COUNTERS)
    assert [p.SerializeToString() for p in parts] == [p.SerializeToString() for p in whole]
    # a part out of order is still refused, naming its file
    _, r = encode(tmp_path, parts=[(IOS[:1], SPANS[:2], []), (IOS[1:] + IOS[:1], SPANS[2:], [])])
    assert r.returncode == 2 and "ios-1.parquet row 1" in r.stderr and "not sorted" in r.stderr, r.stderr
    _, r = encode(tmp_path, parts=[([], [], COUNTERS[:1]), ([], [], [COUNTERS[2], COUNTERS[1]])])
    assert r.returncode == 2 and "counters-1.parquet row 1" in r.stderr and "not sorted" in r.stderr, r.stderr


def test_appends_after_what_the_file_holds(tmp_path):
    head = pb.Trace(packet=[pb.TracePacket(trusted_packet_sequence_id=1, first_packet_on_sequence=True)])
    con = duckdb.connect()
    layout = to_parquet(con, "l", SLOT_COLS, SLOTS, str(tmp_path / "l.parquet"), timeline.SLOT_COLUMNS)
    ios = to_parquet(con, "i", IO_COLS, [], str(tmp_path / "i.parquet"), timeline.IO_COLUMNS)
    spans = to_parquet(con, "s", SPAN_COLS, [], str(tmp_path / "s.parquet"), timeline.SPAN_COLUMNS)
    counters = to_parquet(con, "c", COUNTER_COLS, [(3, 7, 1, None)], str(tmp_path / "c.parquet"),
                          timeline.COUNTER_COLUMNS)
    out = str(tmp_path / "t.pftrace")
    with open(out, "wb") as f:
        f.write(head.SerializeToString())
    subprocess.run([converter.path(), "timeline-encode", "--layout", layout, "--ios", ios, "--spans", spans,
                    "--counters", counters, "--first-lane-uuid", "40", "--append-to", out], check=True)
    with open(out, "rb") as f:
        got = pb.Trace.FromString(f.read()).packet
    assert [p.first_packet_on_sequence for p in got] == [True, False]
    assert (got[1].timestamp, got[1].track_event.track_uuid, got[1].track_event.counter_value) == (7, 3, 1)


@pytest.mark.parametrize("columns, said", [
    ({"io_columns": timeline.IO_COLUMNS.replace("target_queue_track::BIGINT AS target_queue_track, ", "")},
     "ios.parquet: column target_queue_track is missing"),
    ({"io_columns": timeline.IO_COLUMNS.replace("io_id::VARCHAR", "size_bytes::BIGINT")},
     "ios.parquet: column io_id is Int64, not Utf8"),
    ({"span_columns": timeline.SPAN_COLUMNS.replace(", dur::BIGINT AS dur", "")}, "spans.parquet: column dur is missing"),
    ({"counter_columns": timeline.COUNTER_COLUMNS.replace("double_value::DOUBLE", "int_value::BIGINT")},
     "counters.parquet: column double_value is Int64, not Float64"),
])
def test_a_wrong_input_is_named(tmp_path, columns, said):
    _, r = encode(tmp_path, **columns)
    assert r.returncode == 2 and said in r.stderr, r.stderr


def test_rows_out_of_order_are_refused_with_the_row_named(tmp_path):
    _, r = encode(tmp_path, ios=[IOS[1], IOS[0]], spans=SPANS[2:] + SPANS[:2])
    assert r.returncode == 2 and "ios.parquet row 1" in r.stderr and "not sorted" in r.stderr, r.stderr
    _, r = encode(tmp_path, spans=SPANS[2:] + SPANS[:2])      # io 1's spans after io 2's
    assert r.returncode == 2 and "spans.parquet row 2" in r.stderr and "a span of io 1" in r.stderr, r.stderr
    _, r = encode(tmp_path, counters=[COUNTERS[1], COUNTERS[0]])
    assert r.returncode == 2 and "counters.parquet row 1" in r.stderr and "not sorted" in r.stderr, r.stderr


def test_an_io_that_starts_after_its_first_slice_or_a_bad_slot_table_is_refused(tmp_path):
    late = [(200,) + IOS[0][1:], IOS[1]]      # io 1's root begins at 0, before its start_ts
    _, r = encode(tmp_path, ios=late)
    assert r.returncode == 2 and "ios.parquet row 0" in r.stderr and "before its start_ts 200" in r.stderr, r.stderr
    _, r = encode(tmp_path, slots=SLOTS[:1] + SLOTS[2:4])     # no target root
    assert r.returncode == 2 and "slots.parquet" in r.stderr and "root" in r.stderr, r.stderr
    _, r = encode(tmp_path, spans=SPANS + [(2, 9, 1, 2, 1)])  # a slot the table does not have
    assert r.returncode == 2 and "slot 9" in r.stderr, r.stderr


def test_a_missing_input_is_named(tmp_path):
    r = subprocess.run([converter.path(), "timeline-encode", "--layout", str(tmp_path / "none.parquet"),
                        "--ios", str(tmp_path / "i.parquet"), "--spans", str(tmp_path / "s.parquet"),
                        "--counters", str(tmp_path / "none2.parquet"), "--first-lane-uuid", "1",
                        "--append-to", os.devnull],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "none.parquet" in r.stderr
