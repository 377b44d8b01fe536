"""report/timeline.perfetto-trace, loaded the way Perfetto's trace processor does
(perfetto_check: trace_processor_shell itself is downloaded at first use, which this machine
cannot): tracks per host and queue, every I/O, stages nested in their I/O, flows from the
initiator part to the target part and back, counters; on a stock and a patched capture."""
import itertools
import json
import os
import re
import shutil
from collections import Counter, defaultdict

import polars as pl
import pytest

import perfetto_check

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def analyzed(tmp_path_factory, ntscope_cli, fixture):
    run = str(tmp_path_factory.mktemp("timeline") / "run")
    for host in ("initiator", "target"):
        shutil.copytree(os.path.join(REPO, "fixtures", fixture, host), os.path.join(run, host),
                        ignore=shutil.ignore_patterns("parquet"))
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
    assert r.returncode == 0, r.stderr
    rep = os.path.join(run, "report")
    return {"run": run, "stderr": r.stderr, "doc": json.load(open(os.path.join(rep, "report.json"))),
            "io": pl.read_parquet(os.path.join(rep, "io.parquet")),
            "stages": pl.read_parquet(os.path.join(rep, "io_stages.parquet")),
            "path": os.path.join(rep, "timeline.perfetto-trace"),
            "trace": perfetto_check.load(os.path.join(rep, "timeline.perfetto-trace"))}


@pytest.fixture(scope="module")
def stock(tmp_path_factory, ntscope_cli):
    return analyzed(tmp_path_factory, ntscope_cli, "stock-randread-4k-qd8")


@pytest.fixture(scope="module")
def patched(tmp_path_factory, ntscope_cli):
    return analyzed(tmp_path_factory, ntscope_cli, "lab-6.1-patched-write-128k")


CPU_TRACK = re.compile(r"cpu (\d+) (io_work|NET_RX)")


def io_slices(t):
    """The slices of the I/Os (on io lanes, not on the CPU or path events tracks)."""
    return [s for s in t.slices if re.fullmatch(r"io \d+", t.name_of(s.track) or "")]


def roots_by_io(t):
    """io_id -> {'initiator': end_to_end slice, 'target': target_side slice}."""
    out = defaultdict(dict)
    for s in io_slices(t):
        if s.depth == 0:
            out[s.args["io_id"]]["initiator" if s.name == "end_to_end" else "target"] = s
    return out


def path_tracks(t):
    """path name -> {child track name: uuid} of each path group (the tracks with an 'events' child)."""
    out = defaultdict(dict)
    for u, d in t.tracks.items():
        if d.HasField("parent_uuid") and d.parent_uuid in t.tracks:
            out[t.tracks[d.parent_uuid].name][d.name] = u
    return {p: c for p, c in out.items() if "events" in c}


def lanes_of(t):
    """queue track uuid -> [its io lane tracks' uuids]."""
    out = defaultdict(list)
    for u, d in t.tracks.items():
        if re.fullmatch(r"io \d+", d.name):
            out[d.parent_uuid].append(u)
    return out


def check_common(r, stage_set):
    """What every timeline must satisfy; returns the loaded trace."""
    t, io, doc = r["trace"], r["io"], r["doc"]
    assert t.errors == []
    # tracks: a process per host; under it its queues (on the initiator named by queue_key, on
    # the target by the target's own controller and queue ids), its devices and its CPUs
    hosts = {d.process.process_name: u for u, d in t.tracks.items() if d.HasField("process")}
    assert set(hosts) == {"initiator", "target"}
    children = defaultdict(set)
    for u, d in t.tracks.items():
        if d.HasField("parent_uuid") and t.tracks[d.parent_uuid].HasField("process"):
            children[t.host_of(u)].add(d.name)
    not_cpu = lambda names: {n for n in names if not CPU_TRACK.fullmatch(n)}  # noqa: E731
    queues = set(io["queue_key"])
    # paths (timeline_paths) only where a namespace has several or a path has events; named as io.path
    paths = set(path_tracks(t))
    assert paths <= set(io["path"])
    # tenants (timeline_tenants) only where the host's I/O has several
    tenants = set(io["tenant"].drop_nulls())
    tenant_groups = {f"tenant {n}" for n in tenants} if len(tenants) > 1 else set()
    assert not_cpu(children["initiator"]) == queues | set(io["device_key"]) | paths | tenant_groups
    matched = io.filter(pl.col("match_state") == "matched")
    target_queue = {q: f"target/cntlid{c}/q{qid}" for q, c, qid in matched.select("queue_key", "cntlid", "qid").unique().iter_rows()}
    assert len(target_queue) == len(set(matched["queue_key"]))     # one target queue per initiator queue
    assert not_cpu(children["target"]) == set(target_queue.values()) | set(matched["target_device_key"])
    # every I/O: one end_to_end slice on an io lane under its queue on the initiator
    roots = roots_by_io(t)
    count = sum(g["count"] for g in doc["groups"])
    assert len(roots) == io.height == count
    assert Counter(s.name for s in io_slices(t) if s.depth == 0)["end_to_end"] == count
    queue_of = dict(zip(io["io_id"], io["queue_key"]))
    for io_id, parts in roots.items():
        track = t.tracks[parts["initiator"].track]
        assert re.fullmatch(r"io \d+", track.name) and t.name_of(track.parent_uuid) == queue_of[io_id]
        assert t.host_of(parts["initiator"].track) == "initiator"
        if "target" in parts:
            assert t.host_of(parts["target"].track) == "target"
            assert t.name_of(t.tracks[parts["target"].track].parent_uuid) == target_queue[queue_of[io_id]]
    assert sum("target" in p for p in roots.values()) == matched.height
    # lanes: a few per queue, numbered 1.. under it, reused (each lane's I/Os one after the other:
    # a root that overlapped another on its lane would be nested in it, depth 1); on the initiator
    # as many lanes as the queue had I/Os at once (their roots overlapping, ends included); on the
    # target, whose parts are placed in the order of the I/Os' initiator starts, at most a few more
    lanes = lanes_of(t)
    for queue, tracks in lanes.items():
        assert sorted((t.tracks[u].name for u in tracks), key=lambda n: int(n.split()[1])) == \
            [f"io {k}" for k in range(1, len(tracks) + 1)]
        on = set(tracks)
        edges = sorted(x for s in t.slices if s.depth == 0 and s.track in on for x in ((s.ts, 0), (s.ts + s.dur, 1)))
        at_once = max(itertools.accumulate(1 if kind == 0 else -1 for _, kind in edges))
        if t.host_of(queue) == "initiator":
            assert len(tracks) == at_once, t.name_of(queue)
        else:
            assert at_once <= len(tracks) <= at_once + 2, t.name_of(queue)
    assert sum(map(len, lanes.values())) < count / 4        # not a track per I/O
    roots_on = Counter(s.track for s in io_slices(t) if s.depth == 0)
    assert max(roots_on.values()) > 10       # lanes are reused
    # nesting: each stage inside its parent slice, which is the stage table's parent (or the root)
    parent_of = {d["stage"]: d["parent"] for d in doc["stage_definitions"] if d["stage_set"] == stage_set}
    side_of = {d["stage"]: d["side"] for d in doc["stage_definitions"] if d["stage_set"] == stage_set}
    for s in io_slices(t):
        if s.depth == 0:
            assert s.name in ("end_to_end", "target_side")
            continue
        p = s.parent
        assert p.ts <= s.ts and s.ts + s.dur <= p.ts + p.dur, (s, p)
        want = parent_of[s.name]
        if want is None or (side_of[want] == "target") != (side_of[s.name] == "target"):
            want = "target_side" if side_of[s.name] == "target" else "end_to_end"
        assert p.name == want, (s.name, p.name)
    # flows: the initiator part hands over to the target part, which hands back
    assert len(t.flows) == 2 * matched.height
    for a, b in t.flows:
        hosts_ab = (t.host_of(a.track), t.host_of(b.track))
        assert hosts_ab in (("initiator", "target"), ("target", "initiator"))
    return t


def io_of_slice(t):
    """slice -> io_id, through the root it is nested in."""
    def io_id(s):
        while s.parent is not None:
            s = s.parent
        return s.args["io_id"]
    return io_id


def test_stock_timeline(stock):
    t = check_common(stock, "stock")
    io_id = io_of_slice(t)
    names = Counter(s.name for s in t.slices)
    assert names == {n: 6389 for n in ("end_to_end", "target_side", "host_queue", "host_getrq", "host_dispatch",
                                       "fabric_total", "fabric_submission", "fabric_completion", "target_exec",
                                       "target_to_device", "target_device", "target_from_device", "host_completion")}
    for a, b in t.flows:
        assert (a.name, b.name) in (("fabric_submission", "target_side"), ("target_side", "fabric_completion"))
        assert io_id(a) == io_id(b)
    # drawn durations are the stages' (fabric_total, clock-free, is drawn over the whole wait and
    # carries its own duration as stage_dur_ns)
    durs = {(r[0], r[1]): r[2] for r in stock["stages"].select("io_id", "stage", "dur").iter_rows()}
    for s in t.slices:
        if s.depth == 0:
            continue
        want = durs[(io_id(s), s.name)]
        assert (s.args.get("stage_dur_ns", s.dur)) == want, s
        if s.name == "fabric_total":
            assert s.dur > want and s.args["stage_dur_ns"] == want
    e2e = {io_id(s): s.dur for s in t.slices if s.name == "end_to_end"}
    assert e2e == {k: durs[(k, "end_to_end")] for k in e2e}
    # counters: in-flight per queue and device on both hosts, MB/s that add up to the bytes read
    counters = {(t.host_of(u), t.name_of(t.tracks[u].parent_uuid), t.tracks[u].name): v for u, v in t.counters.items()}
    assert {k[2] for k in counters} == {"in_flight", "mb_s"}
    assert ("initiator", "initiator/c0/q1", "in_flight") in counters and ("target", "target/nullb0", "mb_s") in counters
    for (host, resource, counter), values in counters.items():
        assert [ts for ts, _ in values] == sorted(ts for ts, _ in values)
        if counter == "in_flight":
            assert values[-1][1] == 0 and 1 <= max(v for _, v in values) <= 8    # fio iodepth 8
        else:   # 10 ms bins: MB/s x 10^6 x 0.01 s = bytes
            assert sum(v for _, v in values) * 1e4 == pytest.approx(
                6389 * 4096 if not resource.endswith("/q1") and not resource.endswith("/q2") else
                4096 * stock["io"].filter(pl.col("queue_key") == resource).height)
    # small: interned names, varints (the Chrome JSON of the same run was 23 MB)
    assert os.path.getsize(stock["path"]) < 1000 * 6389


def test_slices_sorted_in_parts_give_the_same_trace(stock, tmp_path):
    """A long run's io rows and spans are sorted a part of at most timeline.PART_IOS I/Os at a
    time (a statement holds one part, whatever the run's length): written in 13 parts of about
    500 I/Os, and in one, the trace is the one analyze wrote, byte for byte."""
    from ntscope.reports.report import selection, spec
    from ntscope.reports.timeline import perfetto_trace as timeline
    from ntscope.sql import views
    con = views.connect(stock["run"])
    selection.apply(con, spec.Spec())
    timeline.stage_set_of(con, stock["doc"])
    parts = timeline.parts(con, 500)
    assert 10 <= len(parts) <= 14 and parts[0][:1] == (timeline.INT64_MIN,) and parts[-1][1] is None
    assert all(a[1] == b[0] and a[2] < b[2] for a, b in zip(parts, parts[1:]))
    assert timeline.parts(con, 10**9) == [(timeline.INT64_MIN, None, 0)]
    # every io in exactly one part, numbered after those before it
    sizes = [con.execute(f"SELECT count(DISTINCT io_n), min(n), max(n) FROM timeline_io_order_part("
                         f"{timeline.sql_int(lo)}, {timeline.sql_int(hi)}, {before})").fetchall()[0]
             for lo, hi, before in parts]
    assert [(lo_n, hi_n) for _, lo_n, hi_n in sizes] == \
        [(before + 1, before + count) for (count, _, _), (_, _, before) in zip(sizes, parts)]
    assert sum(c for c, _, _ in sizes) == 6389
    want = open(stock["path"], "rb").read()
    for part_ios in (500, 10**9):
        path = str(tmp_path / f"parts-{part_ios}.perfetto-trace")
        timeline.write(con, path, part_ios=part_ios)
        assert open(path, "rb").read() == want, part_ios
        # each part's order was stored once (timeline.ORDER_TABLE) and is gone with the writer
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?",
                           [timeline.ORDER_TABLE]).fetchall() == [(0,)]
    # the io rows and spans over a stored order are those of the views over timeline_io_order
    con.execute(f"CREATE TABLE {timeline.ORDER_TABLE} AS FROM timeline_io_order_part("
                f"{timeline.sql_int(parts[1][0])}, {timeline.sql_int(parts[1][1])}, {parts[1][2]})")
    for of, view in (("timeline_io_rows_of", "timeline_io_rows"), ("timeline_spans_of", "timeline_spans")):
        part = con.execute(f"SELECT * FROM {of}('{timeline.ORDER_TABLE}') ORDER BY ALL").fetchall()
        whole = con.execute(f"SELECT v.* FROM {view} v JOIN {timeline.ORDER_TABLE} o USING (n) "
                            "ORDER BY ALL").fetchall()
        assert part == whole and len(part) >= sizes[1][0], of


def test_patched_timeline_uses_ntprof_stages(patched):
    t = check_common(patched, "ntprof")
    names = set(Counter(s.name for s in t.slices))
    assert {"network_transmission", "nstack_submission", "nstack_completion", "nvmet_tcp_submission",
            "nvmet_tcp_r2t_wait", "target_subsystem", "blk_submission"} <= names
    assert "fabric_total" not in names          # one stage set: ntprof, the primary one
    for a, b in t.flows:
        assert (a.name, b.name) in (("nstack_submission", "target_side"), ("target_side", "nstack_completion"))
    r2t = [s for s in t.slices if s.name == "nvmet_tcp_r2t_wait"]
    assert r2t and all(s.parent.name == "nvmet_tcp_submission" and t.host_of(s.track) == "target" for s in r2t)


def test_stage_set_flag_chooses_the_drawn_set(patched, ntscope_cli):
    """--stage-set stock on a patched capture: the timeline draws the stock stages."""
    out = os.path.join(patched["run"], "stock-only")
    r = ntscope_cli("analyze", patched["run"], "--quiet", "--no-interference", "--stage-set", "stock", "--out", out)
    assert r.returncode == 0, r.stderr
    t = perfetto_check.load(os.path.join(out, "timeline.perfetto-trace"))
    names = {s.name for s in t.slices}
    assert t.errors == [] and {"fabric_total", "target_exec", "host_queue"} <= names
    assert not names & {"network_transmission", "nvmet_tcp_submission"}
    assert len(t.flows) == 2 * patched["io"].filter(pl.col("match_state") == "matched").height


def test_a_timeline_too_large_for_the_ui_gets_a_note(stock, tmp_path, monkeypatch, capsys, ntscope_bin):
    """Above UI_TRACE_BYTES analyze says how to open the timeline (the browser UI alone may not);
    the fixture's timeline is far below it and gets no note."""
    from ntscope import cli
    from ntscope.reports.timeline import perfetto_trace as timeline
    assert "ntscope: note:" not in stock["stderr"] and timeline.size_hint(stock["path"]) is None
    big = tmp_path / "my run" / "timeline.perfetto-trace"
    big.parent.mkdir()
    with open(big, "wb") as f:
        f.truncate(timeline.UI_TRACE_BYTES + 1)   # sparse: takes no disk
    hint = timeline.size_hint(str(big))
    assert hint.startswith("timeline.perfetto-trace is 500 MB:")
    assert f"trace_processor_shell --httpd '{big}'" in hint   # quoted: the path has a space
    assert hint.endswith("analyze --window START:END --out DIR")
    # analyze prints it (in this process, the bound set just under the fixture's timeline)
    size = os.path.getsize(stock["path"])
    monkeypatch.setattr(timeline, "UI_TRACE_BYTES", size - 1)
    monkeypatch.setenv("NTSCOPE_BIN", ntscope_bin)
    out = str(tmp_path / "again")
    assert cli.main(["analyze", stock["run"], "--quiet", "--no-interference", "--out", out]) in (0, None)
    err = capsys.readouterr().err
    assert f"ntscope: note: timeline.perfetto-trace is {size / 1e6:,.0f} MB:" in err, err[-2000:]
    monkeypatch.setattr(timeline, "UI_TRACE_BYTES", size)
    assert timeline.size_hint(os.path.join(out, "timeline.perfetto-trace")) is None


@pytest.fixture(scope="module")
def cpu_wait(tmp_path_factory, ntscope_cli):
    return analyzed(tmp_path_factory, ntscope_cli, "lab-6.1-patched-target-cpu")   # capture cpu_wait=1


def test_cpu_tracks_hold_the_io_work_and_net_rx_runs(cpu_wait):
    """Per host and CPU, a track of io_work runs (named after the queue the work serves, on the
    target as the target's queue track is named) and one of NET_RX softirq runs, each run
    where sql/core/cpu_wait.sql found it, moved onto the initiator clock, with its wait for the CPU;
    runs on one track never overlap."""
    from ntscope import data
    t = check_common(cpu_wait, "ntprof")
    io, doc = cpu_wait["io"], cpu_wait["doc"]
    cpu_track = {}
    for u, d in t.tracks.items():
        m = CPU_TRACK.fullmatch(d.name)
        if m:
            cpu_track[u] = (t.host_of(u), int(m.group(1)), "io_work" if m.group(2) == "io_work" else "net_rx")
    assert {h for h, _, _ in cpu_track.values()} == {"initiator", "target"}
    drawn = defaultdict(list)
    for s in t.slices:
        if s.track in cpu_track:
            assert s.depth == 0, s              # no run inside another on its track
            drawn[cpu_track[s.track]].append((s.ts, s.dur, s.name, s.args.get("cpu_wait_ns")))
    # the runs as sql/core/cpu_wait.sql has them, on each host's own clock
    con = data.connect(cpu_wait["run"])
    runs = con.execute("SELECT r.host, r.cpu, 'io_work', n.queue_key, r.start_ts, r.end_ts, r.wait_ns "
                       "FROM io_work_runs r JOIN io_work_names n USING (host, work) WHERE r.end_ts IS NOT NULL "
                       "UNION ALL SELECT host, cpu, 'net_rx', 'NET_RX softirq', start_ts, end_ts, wait_ns "
                       "FROM net_rx_runs WHERE end_ts IS NOT NULL").fetchall()
    con.close()
    matched = io.filter(pl.col("match_state") == "matched")
    shift = {"initiator": 0, "target": -int(sorted(matched["offset_ns"])[(matched.height - 1) // 2])}
    lo, hi = doc["window"]["start_ts"], doc["window"]["end_ts"]
    want = defaultdict(list)
    for host, cpu, kind, name, s, e, wait in runs:
        if e + shift[host] >= lo and s + shift[host] <= hi:
            want[(host, cpu, kind)].append((s + shift[host], e - s, name, wait))
    assert set(drawn) == set(want)
    assert sum(map(len, want.values())) > 300
    for track, got in drawn.items():
        exp = sorted(want[track])
        got = sorted(got)
        assert [(s, n, w) for s, _, n, w in got] == [(s, n, w) for s, _, n, w in exp], track
        # a run lasts as long as it ran, unless the next run on its track began first
        for (s, d, _, _), (s_want, d_want, _, _), nxt in zip(got, exp, exp[1:] + [None]):
            assert d == (d_want if nxt is None else min(d_want, nxt[0] - s_want)), (track, s)
    # the io_work of the target names the target's queue as its queue track does
    target_queues = {t.name_of(u) for u, d in t.tracks.items() if t.host_of(u) == "target" and "/cntlid" in d.name}
    names = {n for (h, _, k), rows in drawn.items() if h == "target" and k == "io_work" for _, _, n, _ in rows}
    assert target_queues and names & target_queues, (names, target_queues)


@pytest.fixture(scope="module")
def multipath_ana(tmp_path_factory, ntscope_cli):
    return analyzed(tmp_path_factory, ntscope_cli, "lab-6.1-patched-multipath-ana")


@pytest.fixture(scope="module")
def link_flap(tmp_path_factory, ntscope_cli):
    return analyzed(tmp_path_factory, ntscope_cli, "lab-6.1-patched-link-flap")


def marks_on(t, track):
    return [(s.ts, s.dur, s.depth, s.name, s.args.get("detail")) for s in t.slices if s.track == track]


def test_each_path_has_a_track_of_its_events_and_counters(multipath_ana):
    """Native multipath with an ANA change (path A inaccessible at 3 s): a group per path, named
    as io.path, holding its events (the ANA change notice and the switch, as instants where
    recovery.json's path_events has them), its commands in flight (as many as the path's I/Os
    had at once, from nvme_setup_cmd to nvme_complete_rq) and its MB/s (adding up to its bytes)."""
    from ntscope import data
    t = check_common(multipath_ana, "ntprof")
    groups = path_tracks(t)
    path_a, path_b = "initiator/nvme0@169.254.10.2:4420", "initiator/nvme1@169.254.11.2:4420"
    assert set(groups) == {path_a, path_b} == set(multipath_ana["io"]["path"])
    for children in groups.values():
        assert set(children) == {"events", "in_flight", "mb_s"}
    rec = json.load(open(os.path.join(multipath_ana["run"], "report", "recovery.json")))
    by_path = defaultdict(list)
    for e in rec["path_events"]:
        by_path[e["path"]].append(e)
    assert {p: [e["event"] for e in es] for p, es in by_path.items()} == {
        path_a: ["path_left", "ana_change"], path_b: ["path_joined"]}
    names = {"path_left": "path left", "path_joined": "path joined", "ana_change": "ANA change: inaccessible"}
    for path, events in by_path.items():
        assert marks_on(t, groups[path]["events"]) == [(e["ts"], 0, 0, names[e["event"]], e["detail"]) for e in events]
    con = data.connect(multipath_ana["run"])
    for path, children in groups.items():
        rows = con.execute("SELECT i_setup_ts, i_complete_rq_ts, size_bytes FROM io WHERE path = ?", [path]).fetchall()
        edges = sorted([(s, 1) for s, _, _ in rows] + [(e, -1) for _, e, _ in rows])
        at_once = max(itertools.accumulate(d for _, d in edges))
        values = t.counters[children["in_flight"]]
        assert max(v for _, v in values) == at_once and values[-1][1] == 0, path
        assert sum(v for _, v in t.counters[children["mb_s"]]) * 1e4 == pytest.approx(sum(b for _, _, b in rows))
    con.close()


@pytest.fixture(scope="module")
def tenants(tmp_path_factory, ntscope_cli):
    return analyzed(tmp_path_factory, ntscope_cli, "lab-6.1-patched-tenants")


def test_each_tenant_has_its_counters(tenants):
    """Three tenants in three cgroups on one initiator (capture/scenarios/tenants.sh, no tenants
    file: a tenant is the top-level cgroup): a group per tenant, 'tenant <name>', with its commands
    in flight (as many as the tenant's I/Os had at once) and its MB/s (adding up to its bytes);
    the batch tenant's bursts of 32 writes in flight show, the latency tenant's qd 1 does."""
    from ntscope import data
    t = check_common(tenants, "ntprof")
    groups = defaultdict(dict)
    for u, d in t.tracks.items():
        if d.HasField("parent_uuid") and d.parent_uuid in t.tracks and t.tracks[d.parent_uuid].name.startswith("tenant "):
            groups[t.tracks[d.parent_uuid].name[len("tenant "):]][d.name] = u
    names = set(tenants["io"]["tenant"].drop_nulls())
    assert len(names) == 3 and set(groups) == names
    con = data.connect(tenants["run"])
    at_once = {}
    for tenant, children in groups.items():
        assert set(children) == {"in_flight", "mb_s"}
        rows = con.execute("SELECT i_setup_ts, i_complete_rq_ts, size_bytes FROM io WHERE tenant = ?", [tenant]).fetchall()
        edges = sorted([(s, 1) for s, _, _ in rows] + [(e, -1) for _, e, _ in rows])
        at_once[tenant] = max(itertools.accumulate(d for _, d in edges))
        values = t.counters[children["in_flight"]]
        assert max(v for _, v in values) == at_once[tenant] and values[-1][1] == 0, tenant
        assert sum(v for _, v in t.counters[children["mb_s"]]) * 1e4 == pytest.approx(sum(b for _, _, b in rows))
    con.close()
    assert at_once["batch"] >= 16 and at_once["latency"] == 1, at_once


def test_an_outage_is_drawn_on_its_paths_events(link_flap):
    """A link flap on the only path: its events hold the outage, from the controller's last answer
    to its first after the reconnect, with its figures, and the moment the driver saw the failure
    inside it (controller_outages, recovery.json). One path and no outage: no path tracks."""
    t = check_common(link_flap, "ntprof")
    groups = path_tracks(t)
    (path,) = set(link_flap["io"]["path"])
    assert set(groups) == {path}
    rec = json.load(open(os.path.join(link_flap["run"], "report", "recovery.json")))
    (o,) = rec["outages"]
    marks = marks_on(t, groups[path]["events"])
    assert marks[:2] == [
        (o["last_answer_ts"], o["outage_ns"], 0, "outage (error recovery)",
         f"no answer for {o['outage_ns'] / 1e9:.3f} s; {o['cancelled']} commands cancelled, "
         f"{o['reconnect_attempts']} reconnect attempts, {o['ios_held']} I/Os held for {o['held_ns'] / 1e9:.3f} s in all"),
        (o["detected_ts"], 0, 1, "failure detected",
         f"error recovery began; its teardown ran {o['teardown_ns'] / 1e6:.3f} ms")]
    assert o["outage_ns"] > 8e9 and o["cancelled"] > 0
    # the reconnect work ended after the last I/O of the window: not drawn
    w = link_flap["doc"]["window"]
    assert (o["recovered_ts"] > w["end_ts"]) == (len(marks) == 2)
