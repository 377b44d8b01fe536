"""CPU wait (sql/57_cpu_wait.sql) on real lab captures recorded with the capture key cpu_wait
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
    assert "CPU wait (NVMe/TCP work queued or raised until a CPU ran it; us)" in text
    # a capture without the events: empty lists, no section
    dst = fresh_run("lab-6.1-patched-base-randread")
    assert ntscope_cli("analyze", dst, "--quiet", "--no-interference").returncode == 0
    doc = json.load(open(os.path.join(dst, "report", "report.json")))
    assert doc["cpu_wait"] == {"hosts": [], "io_work_queues": []}
    assert "CPU wait" not in open(os.path.join(dst, "report", "report.txt")).read()
