"""`ntscope timeline-encode` (analyzer/src/timeline.rs, the timeline's packet encoder) against
protobuf itself: rows of timeline_packets' columns, written to Parquet by DuckDB as
timeline.write does, parse back with Perfetto's generated classes into the values they came
from, in row order: each kind of packet (track descriptor, slice begin, slice end, counter),
varint edges (0, 127, 128, 2^63 - 1), negative int64 (a counter, a stage duration), doubles,
fixed64 flow ids above 2^63, UTF-8 and empty strings, absent fields (nulls); a bad input
fails with the column named."""
import os
import subprocess

import duckdb
import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from ntscope import converter
from ntscope.report import timeline
from ntscope.sql.views import sql_str

# kind, ts, track_uuid, parent_uuid, name_iid, category_iid, flow_out, flow_in, int_value,
# double_value, io_id, size_bytes, cid, match_state, stage_dur_ns
ROWS = [
    (0, 5, 40, 7, None, None, None, None, None, None, None, None, None, None, None),
    (1, 0, 40, None, 1, 2, 1, None, None, None, "initiator/0/1/8306/12088813870", 4096, 127, "matched", None),
    (1, 127, 40, None, 3, 1, None, 2**63 + 5, None, None, "", 0, 0, "ünïcödé", -3),
    (1, 128, 41, None, 200, 1, None, None, None, None, None, None, None, None, 2**62),
    (2, 16384, 40, None, None, None, None, None, None, None, None, None, None, None, None),
    (3, 2**63 - 1, 9, None, None, None, None, None, -(2**63), None, None, None, None, None, None),
    (3, 300, 10, None, None, None, None, None, None, -3.25, None, None, None, None, None),
    (1, 16383, 41, None, 2, 1, None, None, None, None, "x" * 300, 2**40, 65535, None, None),
]
COLS = ["kind", "ts", "track_uuid", "parent_uuid", "name_iid", "category_iid", "flow_out", "flow_in",
        "int_value", "double_value", "io_id", "size_bytes", "cid", "match_state", "stage_dur_ns"]


def encode(tmp_path, rows, columns=None):
    """rows -> Parquet (DuckDB, timeline.COLUMNS' types) -> the binary -> (packets, the run)."""
    con = duckdb.connect()
    types = ["DOUBLE" if c == "double_value" else "VARCHAR" if c in ("io_id", "match_state") else "HUGEINT"
             for c in COLS]
    con.execute(f"CREATE TABLE timeline_packets ({', '.join(f'{c} {t}' for c, t in zip(COLS, types))}, pos INT)")
    con.executemany(f"INSERT INTO timeline_packets VALUES ({', '.join('?' * (len(COLS) + 1))})",
                    [list(r) + [i] for i, r in enumerate(rows)])
    packets, out = str(tmp_path / "packets.parquet"), str(tmp_path / "out.pftrace")
    con.execute(f"COPY (SELECT {columns or timeline.COLUMNS} FROM timeline_packets ORDER BY pos) "
                f"TO {sql_str(packets)} (FORMAT parquet, COMPRESSION {timeline.PACKETS_COMPRESSION})")
    with open(out, "wb") as f:
        f.write(b"")
    r = subprocess.run([converter.path(), "timeline-encode", packets, "--append-to", out],
                       capture_output=True, text=True)
    with open(out, "rb") as f:
        return pb.Trace.FromString(f.read()).packet, r


def test_rows_parse_back_with_protobuf(tmp_path):
    packets, r = encode(tmp_path, [[v if not (isinstance(v, int) and v >= 2**63) else v - 2**64 for v in row]
                                   for row in ROWS])   # BIGINT holds flow ids >= 2^63 as their two's complement
    assert r.returncode == 0, r.stderr
    assert len(packets) == len(ROWS)
    for p, row in zip(packets, ROWS):
        v = dict(zip(COLS, row))
        if v["kind"] == 0:
            d = p.track_descriptor
            assert (d.uuid, d.parent_uuid, d.name) == (v["track_uuid"], v["parent_uuid"], "io")
            assert not p.HasField("timestamp") and not p.HasField("track_event")
            continue
        assert (p.timestamp, p.trusted_packet_sequence_id) == (v["ts"], timeline.SEQUENCE_ID)
        assert p.sequence_flags == pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
        e = p.track_event
        assert e.track_uuid == v["track_uuid"]
        assert e.type == {1: pb.TrackEvent.TYPE_SLICE_BEGIN, 2: pb.TrackEvent.TYPE_SLICE_END,
                          3: pb.TrackEvent.TYPE_COUNTER}[v["kind"]]
        assert (e.name_iid if e.HasField("name_iid") else None) == v["name_iid"]
        assert list(e.category_iids) == ([] if v["category_iid"] is None else [v["category_iid"]])
        assert list(e.flow_ids) == ([] if v["flow_out"] is None else [v["flow_out"]])
        assert list(e.terminating_flow_ids) == ([] if v["flow_in"] is None else [v["flow_in"]])
        assert (e.counter_value if e.HasField("counter_value") else None) == v["int_value"]
        assert (e.double_counter_value if e.HasField("double_counter_value") else None) == v["double_value"]
        args = {a.name_iid: a for a in e.debug_annotations}
        for iid, (name, kind) in enumerate(timeline.ARGS, 1):
            if v[name] is None:
                assert iid not in args, name
                continue
            a = args.pop(iid)
            got = {"string": a.string_value, "uint": a.uint_value, "int": a.int_value}[kind]
            assert a.WhichOneof("value") == f"{kind}_value" and got == v[name], name
        assert not args
    # annotations in ARGS order, as the header interns their names
    assert [a.name_iid for a in packets[1].track_event.debug_annotations] == [1, 2, 3, 4]


def test_appends_after_what_the_file_holds(tmp_path):
    head = pb.Trace(packet=[pb.TracePacket(trusted_packet_sequence_id=1, first_packet_on_sequence=True)])
    packets, out = str(tmp_path / "p.parquet"), str(tmp_path / "t.pftrace")
    duckdb.sql(f"COPY (SELECT 2::BIGINT AS kind, 7::BIGINT AS ts, 3::BIGINT AS track_uuid, "
               + ", ".join(f"NULL::{'DOUBLE' if c == 'double_value' else 'VARCHAR' if c in ('io_id', 'match_state') else 'BIGINT'} AS {c}"
                           for c in COLS[3:]) + f") TO {sql_str(packets)} (FORMAT parquet, COMPRESSION {timeline.PACKETS_COMPRESSION})")
    with open(out, "wb") as f:
        f.write(head.SerializeToString())
    subprocess.run([converter.path(), "timeline-encode", packets, "--append-to", out], check=True)
    with open(out, "rb") as f:
        got = pb.Trace.FromString(f.read()).packet
    assert [p.first_packet_on_sequence for p in got] == [True, False]
    assert (got[1].timestamp, got[1].track_event.track_uuid) == (7, 3)


@pytest.mark.parametrize("columns, said", [
    (timeline.COLUMNS.replace("kind::BIGINT AS kind, ", ""), "column kind is missing"),
    (timeline.COLUMNS.replace("io_id::VARCHAR", "size_bytes::BIGINT"), "column io_id is Int64, not Utf8"),
])
def test_a_wrong_input_is_named(tmp_path, columns, said):
    _, r = encode(tmp_path, ROWS[:2], columns)
    assert r.returncode == 2 and said in r.stderr, r.stderr


def test_a_missing_input_is_named(tmp_path):
    r = subprocess.run([converter.path(), "timeline-encode", str(tmp_path / "none.parquet"), "--append-to",
                        os.devnull], capture_output=True, text=True)
    assert r.returncode == 2 and "none.parquet" in r.stderr
