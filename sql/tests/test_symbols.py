"""Addresses -> names (sql/core/symbols.sql) on a real lab capture (fixtures/lab-6.1-patched-target-cpu,
recorded with the workqueue events): every io_work function each host ran resolves to the name
`trace-cmd report` prints for that event, printk_format gives every string of the trace's printk
formats as `trace-cmd dump --printk` shows it, and symbols resolve by libtraceevent's rule (from a
symbol's address up to the next one's; absolute and ARM mapping symbols never). Needs the converter
and trace-cmd."""
import bisect
import os
import re
import subprocess

import pytest

from ntscope.sql import views

RUN = "lab-6.1-patched-target-cpu"
HOSTS = ("initiator", "target")
EXECUTE = re.compile(r"\[\d+\]\s+(\d+)\.(\d{9}): workqueue_execute_start:.*function (\S+)")


def trace_cmd(*args):
    return subprocess.run(["trace-cmd", *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def run(fixture_run):
    dst = fixture_run(RUN)
    return dst, views.connect(dst)


def test_io_work_functions_resolve_as_trace_cmd_prints_them(run):
    dst, con = run
    for host in HOSTS:
        want = [(int(s) * 10**9 + int(ns), fn) for s, ns, fn in
                EXECUTE.findall(trace_cmd("report", "-t", "-i", os.path.join(dst, host, "trace.dat")))]
        got = con.execute("SELECT ts, ksym(host, function) FROM raw_workqueue "
                          "WHERE host = ? AND event = 'workqueue_execute_start' ORDER BY ts", [host]).fetchall()
        assert len(want) > 90, f"{host}: the fixture has its io_work runs"
        assert sorted(got) == sorted(want), host
        assert {fn for _, fn in got} == {"nvme_tcp_io_work" if host == "initiator" else "nvmet_tcp_io_work"}


def test_printk_format_gives_each_string_of_the_trace(run):
    dst, con = run
    for host in HOSTS:
        lines = trace_cmd("dump", "--printk", "-i", os.path.join(dst, host, "trace.dat")).splitlines()
        want = {}
        for line in lines:
            m = re.match(r'^0x([0-9a-f]+) : "(.*)"$', line)
            if m:
                want.setdefault(int(m.group(1), 16), m.group(2))
        assert len(want) > 50
        got = dict(con.execute("SELECT address, printk_format(host, address) FROM "
                               "(SELECT DISTINCT host, address FROM printk_formats WHERE host = ?)", [host]).fetchall())
        assert got == want, host
        assert con.execute("SELECT printk_format(?, 12345)", [host]).fetchone() == (None,)


def test_symbols_resolve_by_libtraceevents_rule(run):
    dst, con = run
    host = "target"
    named = {}
    for line in trace_cmd("dump", "--kallsyms", "-i", os.path.join(dst, host, "trace.dat")).splitlines():
        parts = line.split()
        if len(parts) >= 3 and re.fullmatch(r"[0-9a-f]{8,16}", parts[0]):
            if parts[1] not in ("A", "a") and not parts[2].startswith("$"):
                named.setdefault(int(parts[0], 16), parts[2])
    starts = sorted(named)
    probes = [starts[0] - 1, starts[0], starts[len(starts) // 2] + 3, starts[-2] + 1, starts[-1], starts[-1] + 1]
    for a in probes:
        i = bisect.bisect_right(starts, a)
        want = None if i == 0 or (i == len(starts) and a != starts[-1]) else named[starts[i - 1]]
        got = con.execute("SELECT ksym(?, ?::UBIGINT), ksym_offset(?, ?::UBIGINT)", [host, a, host, a]).fetchone()
        assert got[0] == want, hex(a)
        assert got[1] == (None if want is None else a - starts[i - 1]), hex(a)
    absolute = con.execute("SELECT address FROM kallsyms WHERE host = ? AND type = 'A' "
                           "AND address NOT IN (SELECT address FROM kallsyms WHERE host = ? AND type <> 'A') "
                           "AND address < (SELECT min(address) FROM kallsyms_ranges WHERE host = ?) LIMIT 1",
                           [host, host, host]).fetchone()
    if absolute:
        assert con.execute("SELECT ksym(?, ?)", [host, absolute[0]]).fetchone() == (None,)


def test_a_run_converted_without_symbol_tables_still_loads(fresh_run):
    dst = fresh_run(RUN)
    for host in HOSTS:
        os.remove(os.path.join(dst, host, "parquet", "kallsyms.parquet"))
        os.remove(os.path.join(dst, host, "parquet", "printk_formats.parquet"))
    con = views.connect(dst)
    assert con.execute("SELECT count(*), count(ksym(host, function)) FROM raw_workqueue").fetchone()[1] == 0
    assert con.execute("SELECT count(*) FROM printk_formats").fetchone() == (0,)
