"""The timeline's slices of the hand-checkable text fixture `basic` (cases/basic/events.txt), as
the encoder lays them out from sql/timeline/timeline.sql's io rows and spans (analyzer/src/timeline_slices.rs)
and writes them (reports/timeline/perfetto_trace.py), read back from the protobuf: every slice's track,
parent, depth, time, drawn duration, own duration and flows equal the known answer
cases/basic/timeline_slices.csv (the io's stages as events.txt states them, nested on their
tracks: io 1 and 2 with a target part and flows both ways, io 3 without; the clock-free
fabric_total drawn over its whole span with its own duration beside it). io 2 begins after io 1
ended, on the same queue: it reuses io 1's lanes; io 3, on another queue, opens its own."""
import csv
import os

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from ntscope.reports.timeline import perfetto_trace as timeline
from ntscope.sql import views
from ntscope.sql.tests.test_diff import SQL_CASES, build_case   # the SQL diff tests' text cases

CASE = os.path.join(SQL_CASES, "basic")
STAGE_DUR_IID = 1 + [name for name, _ in timeline.ARGS].index("stage_dur_ns")


def slices_of(path):
    """One dict per slice of the trace, in begin order, with the known answer's columns."""
    trace = pb.Trace.FromString(open(path, "rb").read())
    names = {e.iid: e.name for e in trace.packet[0].interned_data.event_names}
    parent, host, names_of_tracks = {}, {}, {}
    stacks, out = {}, []
    for p in trace.packet:
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            parent[d.uuid] = d.parent_uuid if d.HasField("parent_uuid") else None
            host[d.uuid] = d.process.process_name if d.HasField("process") else host.get(parent[d.uuid])
            names_of_tracks[d.uuid] = d.name
            continue
        if not p.HasField("track_event"):
            continue
        e = p.track_event
        stack = stacks.setdefault(e.track_uuid, [])
        if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            args = {a.name_iid: a.int_value for a in e.debug_annotations}
            s = {"part": host[e.track_uuid], "stage": names[e.name_iid], "depth": len(stack),
                 "track_name": names_of_tracks[e.track_uuid],
                 "track_uuid": e.track_uuid, "parent_uuid": parent[e.track_uuid], "ts": p.timestamp,
                 "stage_dur_ns": args.get(STAGE_DUR_IID), "flow_out": (list(e.flow_ids) or [None])[0],
                 "flow_in": (list(e.terminating_flow_ids) or [None])[0]}
            stack.append(s)
            out.append(s)
        elif e.type == pb.TrackEvent.TYPE_SLICE_END:
            s = stack.pop()
            s["dur"] = p.timestamp - s["ts"]
    return out


def test_the_basic_case_is_drawn_as_its_stages_say(tmp_path):
    run = build_case(CASE, str(tmp_path))
    con = views.connect(run)
    path = str(tmp_path / "timeline.perfetto-trace")
    timeline.write(con, path)
    got = slices_of(path)
    with open(os.path.join(CASE, "timeline_slices.csv")) as f:
        want = list(csv.DictReader(f))
    cols = [c for c in want[0] if c != "n"]
    as_text = [{c: "" if s[c] is None else str(s[c]) for c in cols} for s in got]
    key = lambda r: (int(r["track_uuid"]), int(r["ts"]), int(r["depth"]))   # noqa: E731
    assert sorted(as_text, key=key) == sorted(({c: r[c] for c in cols} for r in want), key=key)
    # lanes: after the fixed tracks (16 here), in the order they open; one lane per queue, named
    # 'io 1' under it
    assert con.execute("SELECT max(uuid) FROM timeline_tracks").fetchall() == [(16,)]
    assert {(int(r["n"]), r["part"], int(r["track_uuid"])) for r in want if r["depth"] == "0"} == \
        {(1, "initiator", 17), (1, "target", 18), (2, "initiator", 17), (2, "target", 18), (3, "initiator", 19)}
    assert {s["track_name"] for s in got} == {"io 1"}
