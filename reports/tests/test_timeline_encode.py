"""`ntscope timeline-encode` (analyzer/src/timeline.rs, the timeline's packet encoder) against
protobuf itself: rows of the slices and counters inputs, written to Parquet by DuckDB as
timeline.write does, parse back with Perfetto's generated classes into the values they came
from, merged into the order (ts, track, pos) that a plain sort of every packet gives (ends
that interleave with later begins, equal times on one track depth-first, a zero-length slice,
counters between slices); each kind of packet (track descriptor, slice begin, slice end,
counter), varint edges (0, 127, 128, 2^63 - 1), negative int64 (a counter, a stage
duration), doubles, fixed64 flow ids above 2^63, UTF-8 and empty strings, absent fields
(nulls); a bad input (a column missing or of the wrong type, rows out of order, a slice
ending before it begins, a missing file) fails with the file and row named."""
import os
import subprocess

import duckdb
import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from ntscope import converter
from ntscope.report import timeline
from ntscope.sql.views import sql_str

SLICE_COLS = ["ts", "end_ts", "track_uuid", "begin_pos", "end_pos", "opens_track", "parent_uuid", "name_iid",
              "category_iid", "flow_out", "flow_in", "io_id", "size_bytes", "cid", "match_state", "stage_dur_ns"]
# two io tracks (40, 41): 40's root opens at 0 and ends at 16384, a child [127, 16384) ends
# with it (depth-first: the child's end first), a zero-length child at 200; 41 opens at 128
# (under parent NULL) while 40 is open, with a child that begins with its root
SLICES = [
    (0, 16384, 40, 0, 63 * 262144, True, 7, 1, 2, 1, None, "initiator/0/1/8306/12088813870", 4096, 127, "matched", None),
    (127, 16384, 40, 262144, 262144 + 63 * 4096, False, None, 3, 1, None, 2**63 + 5, "", 0, 0, "ünïcödé", -3),
    (128, 300, 41, 0, 63 * 262144, True, None, 200, 1, None, None, None, None, None, None, 2**62),
    (128, 299, 41, 262144, 262144 + 63 * 4096, False, None, 2, 1, None, None, "x" * 300, 2**40, 65535, None, None),
    (200, 200, 40, 2 * 262144, 2 * 262144 + 63 * 4096, False, None, 4, 1, None, None, None, None, None, None, 0),
]
COUNTER_COLS = ["uuid", "ts", "int_value", "double_value"]
COUNTERS = [(9, 127, 5, None), (10, 300, None, -3.25), (9, 16384, 0, None), (9, 2**63 - 1, -(2**63), None)]


def types_of(cols):
    return ["DOUBLE" if c == "double_value" else "BOOLEAN" if c == "opens_track"
            else "VARCHAR" if c in ("io_id", "match_state") else "HUGEINT" for c in cols]


def to_parquet(con, name, cols, rows, path, columns):
    con.execute(f"CREATE TABLE {name} ({', '.join(f'{c} {t}' for c, t in zip(cols, types_of(cols)))}, row_no INT)")
    if rows:
        con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' * (len(cols) + 1))})",
                        [list(r) + [i] for i, r in enumerate(rows)])
    con.execute(f"COPY (SELECT {columns} FROM {name} ORDER BY row_no) "
                f"TO {sql_str(path)} (FORMAT parquet, COMPRESSION {timeline.PACKETS_COMPRESSION})")


def parquet_files(con, tmp_path, kind, parts, cols, columns):
    """Row lists -> Parquet files named kind.parquet (one part) or kind-0.parquet, kind-1.parquet..."""
    names = [f"{kind}.parquet"] if len(parts) == 1 else [f"{kind}-{k}.parquet" for k in range(len(parts))]
    files = [str(tmp_path / n) for n in names]
    for k, (rows, file) in enumerate(zip(parts, files)):
        to_parquet(con, f"{kind}{k}", cols, [[int64(v) for v in row] for row in rows], file, columns)
    return files


def encode(tmp_path, slices, counters, slice_columns=None, counter_columns=None, slice_parts=None,
           counter_parts=None):
    """rows -> Parquet (DuckDB, timeline.py's column types) -> the binary -> (packets, the run).
    BIGINT holds values >= 2^63 (flow ids) as their two's complement. slice_parts, counter_parts:
    the rows as several files (lists of rows), instead of slices, counters in one."""
    con = duckdb.connect()
    slice_files = parquet_files(con, tmp_path, "slices", slice_parts or [slices], SLICE_COLS,
                                slice_columns or timeline.SLICE_COLUMNS)
    counter_files = parquet_files(con, tmp_path, "counters", counter_parts or [counters], COUNTER_COLS,
                                  counter_columns or timeline.COUNTER_COLUMNS)
    out = str(tmp_path / "out.pftrace")
    with open(out, "wb") as f:
        f.write(b"")
    r = subprocess.run([converter.path(), "timeline-encode", *slice_files,
                        *[a for f in counter_files for a in ("--counters", f)], "--append-to", out],
                       capture_output=True, text=True)
    with open(out, "rb") as f:
        return pb.Trace.FromString(f.read()).packet, r


def int64(v):
    return v - 2**64 if isinstance(v, int) and not isinstance(v, bool) and v >= 2**63 else v


def expected_packets():
    """Every packet the rows stand for, sorted by (ts, track, pos): what the merge must give."""
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
    packets, r = encode(tmp_path, SLICES, COUNTERS)
    assert r.returncode == 0, r.stderr
    want = expected_packets()
    assert len(packets) == len(want) == 3 * len(SLICES) - 3 + len(COUNTERS)
    for p, ((ts, track, _), what, v) in zip(packets, want):
        if what == "descriptor":
            d = p.track_descriptor
            assert (d.uuid, d.HasField("parent_uuid"), d.name) == (track, v["parent_uuid"] is not None, "io")
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
        assert (e.name_iid if e.HasField("name_iid") else None) == v["name_iid"]
        assert list(e.category_iids) == ([] if v["category_iid"] is None else [v["category_iid"]])
        assert list(e.flow_ids) == ([] if v["flow_out"] is None else [v["flow_out"]])
        assert list(e.terminating_flow_ids) == ([] if v["flow_in"] is None else [v["flow_in"]])
        args = {a.name_iid: a for a in e.debug_annotations}
        for iid, (name, kind) in enumerate(timeline.ARGS, 1):
            if v[name] is None:
                assert iid not in args, name
                continue
            a = args.pop(iid)
            got = {"string": a.string_value, "uint": a.uint_value, "int": a.int_value}[kind]
            assert a.WhichOneof("value") == f"{kind}_value" and got == v[name], name
        assert not args
    # the order itself, spelled out: track 41 opens while 40 is open; at 16384 the counter
    # on track 9 comes before track 40's two ends, the child's end before its root's
    kinds = [(p.timestamp, p.track_event.track_uuid, p.track_event.type) if p.HasField("track_event")
             else ("descriptor", p.track_descriptor.uuid) for p in packets]
    assert kinds[:4] == [("descriptor", 40), (0, 40, 1), (127, 9, 4), (127, 40, 1)]
    assert kinds[-4:] == [(16384, 9, 4), (16384, 40, 2), (16384, 40, 2), (2**63 - 1, 9, 4)]
    assert [(k[0], k[2]) for k in kinds if k[1] == 40 and k[0] == 16384] == [(16384, 2), (16384, 2)]
    ends_40 = [p for p in packets if p.HasField("track_event") and p.track_event.track_uuid == 40
               and p.track_event.type == 2]
    assert [p.timestamp for p in ends_40] == [200, 16384, 16384]
    # annotations in ARGS order, as the header interns their names
    assert [a.name_iid for a in packets[1].track_event.debug_annotations] == [1, 2, 3, 4]


def test_several_files_are_merged_into_the_same_stream(tmp_path):
    """timeline.write sorts the slices in parts of a bounded number of I/Os (a track's slices
    all in one part, parts overlapping in time) and the counters in parts of time: merged, the
    packets are those of one file each."""
    (tmp_path / "one").mkdir()
    whole, r = encode(tmp_path / "one", SLICES, COUNTERS)
    assert r.returncode == 0, r.stderr
    by_track = [[s for s in SLICES if s[2] == 41], [s for s in SLICES if s[2] == 40], []]
    parts, r = encode(tmp_path, None, None, slice_parts=by_track, counter_parts=[COUNTERS[:2], [], COUNTERS[2:]])
    assert r.returncode == 0, r.stderr
    assert len(parts) == len(whole) == 3 * len(SLICES) - 3 + len(COUNTERS)
    assert [p.SerializeToString() for p in parts] == [p.SerializeToString() for p in whole]
    # a part out of order is still refused, naming its file
    _, r = encode(tmp_path, None, [], slice_parts=[[SLICES[0]], [SLICES[3], SLICES[2]]])
    assert r.returncode == 2 and "slices-1.parquet row 1" in r.stderr and "not sorted" in r.stderr, r.stderr
    _, r = encode(tmp_path, [], None, counter_parts=[[COUNTERS[0]], [COUNTERS[2], COUNTERS[1]]])
    assert r.returncode == 2 and "counters-1.parquet row 1" in r.stderr and "not sorted" in r.stderr, r.stderr


def test_appends_after_what_the_file_holds(tmp_path):
    head = pb.Trace(packet=[pb.TracePacket(trusted_packet_sequence_id=1, first_packet_on_sequence=True)])
    con = duckdb.connect()
    files = [str(tmp_path / "s.parquet"), str(tmp_path / "c.parquet")]
    to_parquet(con, "s", SLICE_COLS, [], files[0], timeline.SLICE_COLUMNS)
    to_parquet(con, "c", COUNTER_COLS, [(3, 7, 1, None)], files[1], timeline.COUNTER_COLUMNS)
    out = str(tmp_path / "t.pftrace")
    with open(out, "wb") as f:
        f.write(head.SerializeToString())
    subprocess.run([converter.path(), "timeline-encode", files[0], "--counters", files[1], "--append-to", out],
                   check=True)
    with open(out, "rb") as f:
        got = pb.Trace.FromString(f.read()).packet
    assert [p.first_packet_on_sequence for p in got] == [True, False]
    assert (got[1].timestamp, got[1].track_event.track_uuid, got[1].track_event.counter_value) == (7, 3, 1)


@pytest.mark.parametrize("slice_columns, counter_columns, said", [
    (timeline.SLICE_COLUMNS.replace("end_ts::BIGINT AS end_ts, ", ""), None, "slices.parquet: column end_ts is missing"),
    (timeline.SLICE_COLUMNS.replace("io_id::VARCHAR", "size_bytes::BIGINT"), None,
     "slices.parquet: column io_id is Int64, not Utf8"),
    (None, timeline.COUNTER_COLUMNS.replace("double_value::DOUBLE", "int_value::BIGINT"),
     "counters.parquet: column double_value is Int64, not Float64"),
])
def test_a_wrong_input_is_named(tmp_path, slice_columns, counter_columns, said):
    _, r = encode(tmp_path, SLICES[:2], COUNTERS[:1], slice_columns, counter_columns)
    assert r.returncode == 2 and said in r.stderr, r.stderr


def test_rows_out_of_order_are_refused_with_the_row_named(tmp_path):
    _, r = encode(tmp_path, [SLICES[2], SLICES[0]], [])
    assert r.returncode == 2 and "slices.parquet row 1" in r.stderr and "not sorted" in r.stderr, r.stderr
    _, r = encode(tmp_path, [], [COUNTERS[1], COUNTERS[0]])
    assert r.returncode == 2 and "counters.parquet row 1" in r.stderr and "not sorted" in r.stderr, r.stderr


def test_a_slice_that_ends_before_it_begins_is_refused(tmp_path):
    bad = list(SLICES[0])
    bad[1] = -1          # end_ts before ts
    _, r = encode(tmp_path, [bad], [])
    assert r.returncode == 2 and "slices.parquet row 0" in r.stderr and "ends" in r.stderr, r.stderr


def test_a_missing_input_is_named(tmp_path):
    r = subprocess.run([converter.path(), "timeline-encode", str(tmp_path / "none.parquet"),
                        "--counters", str(tmp_path / "none2.parquet"), "--append-to", os.devnull],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "none.parquet" in r.stderr
