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


def libtraceevent_search(table, address):
    """The entry libtraceevent's __find_func gives for address: glibc's bsearch with func_bcmp over
    table [(address, name)] (its order: by address, of several at one address the last in the
    section first); the highest entry's next is 0."""
    lo, hi = 0, len(table)
    while lo < hi:
        mid = (lo + hi) // 2
        start, nxt = table[mid][0], table[mid + 1][0] if mid + 1 < len(table) else 0
        if address == start or start < address < nxt:
            return table[mid][1]
        lo, hi = (lo, mid) if address < start else (mid + 1, hi)
    return None


def test_an_address_several_symbols_name_gets_trace_cmds_name(run, ntscope_bin, tmp_path):
    """Aliases (startup_64 / _stext, __do_sys_fork / __x64_sys_fork): inside them ksym gives the
    first name of the section, at their address the one libtraceevent's binary search meets,
    which depends on where they sit in its table. On the synthetic trace of the converter
    (three names at one address) against what trace-cmd prints for them; on the real capture,
    every such address against the search done the same way."""
    import conftest
    host_dir = tmp_path / "synth" / "initiator"
    host_dir.mkdir(parents=True)
    trace = str(host_dir / "trace.dat")
    subprocess.run([ntscope_bin, "synth", "classes", "--out", trace], check=True, capture_output=True)
    conftest.convert_run(str(tmp_path / "synth"), ntscope_bin)
    printed = [line.split("pointers ", 1)[1].split() for line in
               subprocess.run(["trace-cmd", "report", trace], capture_output=True, check=True).stdout
               .decode("utf-8", "replace").splitlines() if "pointers dup_" in line]
    assert printed == [["dup_first+0x10", "dup_second", "0x1234", "(nil)", "dup_second+0x0", "dup_first"]]
    con = views.connect(str(tmp_path / "synth"))
    base = con.execute("SELECT address FROM kallsyms WHERE name = 'dup_first'").fetchone()[0]
    got = con.execute("SELECT ksym('initiator', ?::UBIGINT), ksym_offset('initiator', ?::UBIGINT), "
                      "ksym('initiator', ?::UBIGINT)", [base + 0x10, base + 0x10, base]).fetchone()
    assert (f"{got[0]}+{got[1]:#x}", got[2]) == (printed[0][0], printed[0][1])
    # the real capture: 33 addresses with more than one name on each host
    dst, con = run
    for host in HOSTS:
        rows = con.execute("SELECT address, name, seq FROM kallsyms WHERE host = ? AND type NOT IN ('A', 'a') "
                           "AND NOT starts_with(name, '$')", [host]).fetchall()
        table = [(a, n) for a, n, _ in sorted(rows, key=lambda r: (r[0], -r[2]))]
        counts = {}
        for a, _ in table:
            counts[a] = counts.get(a, 0) + 1
        shared = sorted(a for a, c in counts.items() if c > 1)
        assert len(shared) > 20, host
        got = dict(con.execute("SELECT address, ksym(?, address) FROM (SELECT unnest(?::UBIGINT[]) AS address)",
                               [host, shared]).fetchall())
        assert got == {a: libtraceevent_search(table, a) for a in shared}, host
        first = {a: n for a, n, _ in sorted(rows, key=lambda r: r[2], reverse=True)}   # the section's first
        inside = dict(con.execute("SELECT address, ksym(?, address + 1) FROM (SELECT unnest(?::UBIGINT[]) AS address)",
                                  [host, shared]).fetchall())
        assert inside == {a: first[a] for a in shared}, host
        assert any(got[a] != first[a] for a in shared), "some address is named otherwise than its inside"
