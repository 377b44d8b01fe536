"""CPU wait (sql/core/cpu_wait.sql) on real lab captures recorded with the capture key cpu_wait
(fixtures/lab-6.1-patched-target-cpu{,-base}): the NET_RX softirq and io_work runs and their
waits equal what an independent reading of `trace-cmd report` gives, each io_work is mapped
to its NVMe queue, and the report carries the section. Needs the converter and trace-cmd."""
import collections
import json
import os
import re
import subprocess

import pytest

from ntscope.sql import views

RUN = "lab-6.1-patched-target-cpu"
BASE = "lab-6.1-patched-target-cpu-base"
LINE = re.compile(r"\[(\d+)\]\s+(\d+)\.(\d{9}): (softirq_raise|softirq_entry|softirq_exit|"
                  r"workqueue_queue_work|workqueue_execute_start|workqueue_execute_end):\s+(.*)$")
WORK = re.compile(r"work struct[= ]?(?:0x)?([0-9a-f]+)")


def trace_cmd_events(trace):
    out = subprocess.run(["trace-cmd", "report", "-t", "-i", trace], capture_output=True, text=True, check=True)
    ev = []
    for line in out.stdout.splitlines():
        m = LINE.search(line)
        if m:
            ts = int(m.group(2)) * 1_000_000_000 + int(m.group(3))
            ev.append((int(m.group(1)), ts, m.group(4), m.group(5)))
    return ev


def net_rx_waits(ev):
    """Per softirq_entry of vec 3: entry - the first raise on its CPU since the previous entry
    there (the rule of net_rx_runs, written again over trace-cmd's text)."""
    first_raise, waits = {}, []
    for cpu, ts, name, rest in sorted(ev, key=lambda e: e[1]):
        if "vec=3" not in rest:
            continue
        if name == "softirq_raise":
            first_raise.setdefault(cpu, ts)
        elif name == "softirq_entry":
            r = first_raise.pop(cpu, None)
            waits.append(None if r is None else ts - r)
    return waits


@pytest.fixture(scope="module", params=[BASE, RUN])
def run(request, fixture_run):
    dst = fixture_run(request.param)
    return request.param, dst, views.connect(dst)


def test_net_rx_runs_and_waits_equal_trace_cmd(run):
    _, dst, con = run
    for host in ("initiator", "target"):
        ev = trace_cmd_events(os.path.join(dst, host, "trace.dat"))
        want = net_rx_waits(ev)
        n, known, total = con.execute("SELECT count(*), count(wait_ns), sum(wait_ns) FROM net_rx_runs WHERE host = ?",
                                      [host]).fetchone()
        assert n == len(want) > 100
        assert known == sum(w is not None for w in want)
        assert total == sum(w for w in want if w is not None)


def test_io_work_runs_equal_trace_cmd_and_map_to_queues(run):
    _, dst, con = run
    for host in ("initiator", "target"):
        ev = trace_cmd_events(os.path.join(dst, host, "trace.dat"))
        starts = collections.Counter(WORK.search(r).group(1) for _, _, name, r in ev if name == "workqueue_execute_start")
        got = dict(con.execute("SELECT printf('%x', work), count(*) FROM io_work_runs WHERE host = ? GROUP BY 1",
                               [host]).fetchall())
        assert got == dict(starts)
        assert sum(starts.values()) > 50
    # every I/O queue the commands used has its io_work, found from the events inside its runs
    rows = con.execute("SELECT host, queue_key, cpu_share FROM io_work_queues WHERE queue_key NOT LIKE '%/q0' "
                       "AND queue_key NOT LIKE '%/work%' ORDER BY 1, 2").fetchall()
    used = con.execute("SELECT DISTINCT queue_key FROM io ORDER BY 1").fetchall()
    assert [r[1] for r in rows if r[0] == "initiator"] == [u[0] for u in used]
    assert [r[1] for r in rows if r[0] == "target"] == ["target/cntlid1/q1", "target/cntlid1/q2"]
    assert all(r[2] == 1.0 for r in rows)     # one CPU runs each queue's io_work (its io_cpu)
    share = con.execute("SELECT min(share) FROM io_work_queue_map").fetchone()[0]
    assert share > 0.9                       # a few events of another queue fall inside a run


def test_busy_target_cpu_shows_in_its_net_rx_wait(fixture_run):
    # the loop on the target's one CPU: its receive softirq waits >= 10x longer, the
    # initiator's does not
    w = {}
    for name in (BASE, RUN):
        con = views.connect(fixture_run(name))
        w[name] = dict(con.execute("SELECT host, net_rx_wait_mean_ns FROM cpu_wait_hosts").fetchall())
    assert w[RUN]["target"] > 10 * w[BASE]["target"]
    assert w[RUN]["initiator"] < 2 * w[BASE]["initiator"]


def test_report_has_the_cpu_wait_section(fresh_run, ntscope_cli):
    dst = fresh_run(RUN)
    r = ntscope_cli("analyze", dst, "--quiet", "--no-interference")
    assert r.returncode == 0, r.stderr
    doc = json.load(open(os.path.join(dst, "report", "report.json")))
    hosts = {h["host"]: h for h in doc["cpu_wait"]["hosts"]}
    con = views.connect(dst)
    assert hosts["target"]["net_rx_runs"] == con.execute(
        "SELECT count(*) FROM net_rx_runs WHERE host = 'target'").fetchone()[0]
    assert {q["queue_key"] for q in doc["cpu_wait"]["io_work_queues"]} >= {"target/cntlid1/q1", "target/cntlid1/q2"}
    text = open(os.path.join(dst, "report", "report.txt")).read()
    unit = re.search(r"CPU wait \(NVMe/TCP work queued or raised until a CPU ran it; times in (us|ms)\)", text)
    assert unit
    # one unit per table, named in its header: no cell carries its own ('101ms' beside '82312' once)
    section = text[unit.start():].split("\n\n")[0].splitlines()
    host_row = next(l for l in section if l.split()[0] == "target")
    assert all(re.fullmatch(r"-?\d+(\.\d+)?|-", c) for c in host_row.split()[1:]), host_row
    assert unit.group(1) == "us"   # the longest wait, 360 ms, fits a column of us (printed '360ms' once)
    assert host_row.split()[5] == f"{hosts['target']['net_rx_wait_mean_ns'] / 1e3:.0f}" == "12196"
    assert host_row.split()[7] == f"{hosts['target']['net_rx_wait_max_ns'] / 1e3:.0f}" == "359803"
    # a capture without the events: empty lists, no section
    dst = fresh_run("lab-6.1-patched-base-randread")
    assert ntscope_cli("analyze", dst, "--quiet", "--no-interference").returncode == 0
    doc = json.load(open(os.path.join(dst, "report", "report.json")))
    assert doc["cpu_wait"] == {"hosts": [], "io_work_queues": []}
    assert "CPU wait" not in open(os.path.join(dst, "report", "report.txt")).read()


def union_overlap(intervals, a, b):
    """Length of [a, b] covered by the union of intervals (a list of (from, to))."""
    total, cur_from, cur_to = 0, None, None
    for f, t in sorted(intervals):
        f, t = max(f, a), min(t, b)
        if t <= f:
            continue
        if cur_to is None or f > cur_to:
            if cur_to is not None:
                total += cur_to - cur_from
            cur_from, cur_to = f, t
        else:
            cur_to = max(cur_to, t)
    if cur_to is not None:
        total += cur_to - cur_from
    return total


# (the severe run: 27 of its 209 I/Os have no target command, the round-trip window)
@pytest.mark.parametrize("name", [BASE, RUN, "lab-6.1-patched-target-cpu-severe"])
def test_io_cpu_wait_is_the_pending_time_in_each_window(fixture_run, name):
    # io_cpu_wait written again in Python from the runs it reads (net_rx_runs and io_work_runs,
    # checked against trace-cmd above) and each io's two windows: the union of the queue's
    # pending stretches (its io_work queued, any NET_RX raised) inside each window; an io the
    # target did not trace has one window, its round trip
    con = views.connect(fixture_run(name))
    rx = collections.defaultdict(list)
    for host, f, t in con.execute("SELECT host, raised_ts, start_ts FROM net_rx_runs WHERE start_ts > raised_ts").fetchall():
        rx[host].append((f, t))
    work = collections.defaultdict(list)
    for host, ctrl, qid, f, t in con.execute(
            "SELECT w.host, m.ctrl_id, m.qid, w.start_ts - w.wait_ns, w.start_ts FROM io_work_runs w "
            "JOIN io_work_queue_map m USING (host, work) WHERE w.wait_ns > 0").fetchall():
        work[(host, ctrl, qid)].append((f, t))
    ios = con.execute("""
        SELECT i.io_n, i.target_host, i.cntlid, i.initiator_host, i.ctrl_id, i.qid, i.offset_ns, i.i_setup_ts,
               i.t_init_ts, i.t_complete_ts, i.i_complete_rq_ts, i.match_state, w.target_wait_ns, w.initiator_wait_ns
        FROM io i LEFT JOIN io_cpu_wait w USING (io_n) ORDER BY io_n""").fetchall()
    assert len(ios) > 200 and sum(r[11] == "matched" for r in ios) > 180
    for (io_n, th, cntlid, ih, ctrl, qid, off, setup, init, done, compl, state, t_wait, i_wait) in ios:
        if None in (th, cntlid, off, setup, compl):
            assert (t_wait, i_wait) == (None, None), io_n   # no row: nothing known of the target
            continue
        if state != "matched":   # the target did not trace it: its round trip
            init = done = compl + off
        t_pend = rx[th] + work[(th, cntlid, qid)]
        i_pend = rx[ih] + work[(ih, ctrl, qid)]
        want_t = union_overlap(t_pend, setup + off, init) + union_overlap(t_pend, done, compl + off)
        want_i = union_overlap(i_pend, setup, init - off) + union_overlap(i_pend, done - off, compl)
        assert (t_wait, i_wait) == (want_t, want_i), io_n


def test_busy_target_cpu_waits_per_io_for_most_of_the_added_time(fixture_run):
    # per I/O the target's wait grew by about what the network stage added (117 ms of 117 ms),
    # the initiator's by a few percent: the evidence scales with the I/Os the late softirq holds
    w = {}
    for name in (BASE, RUN):
        con = views.connect(fixture_run(name))
        w[name] = con.execute("SELECT avg(target_wait_ns), avg(initiator_wait_ns) FROM io_cpu_wait").fetchone()
    t_growth, i_growth = w[RUN][0] - w[BASE][0], w[RUN][1] - w[BASE][1]
    assert t_growth > 100e6 and i_growth < 0.1 * t_growth
