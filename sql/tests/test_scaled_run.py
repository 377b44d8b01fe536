"""Same answers at scale: a run made of N time-shifted copies of a real capture
(sql/bench/make_scaled_run.py, the input of `just bench-analyze`) must report what the
capture itself reports: every count N times, the same means, percentiles that are the
original's own order statistics (nearest rank over N copies lands on the same value or its
neighbour), the same histograms x N, clock offset and interference. Small N keeps it a few
seconds; the benchmark (sql/bench/bench_analyze.py) runs the same SQL at millions of events.
Needs the converter (NTSCOPE_BIN)."""
import bisect
import json
import os
import re
import subprocess
import sys

import pytest

from ntscope.sql import views

HERE = os.path.dirname(os.path.abspath(__file__))
SQL = os.path.dirname(HERE)

CASES = [("lab-6.1-stock-interference-c2", 4), ("stock-randrw-mixed", 2)]
PCTS = ["p10_ns", "p50_ns", "p70_ns", "p80_ns", "p90_ns", "p95_ns", "p99_ns", "p999_ns"]


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def pair(request, fixture_run, tmp_path_factory):
    fixture, n = request.param
    orig = fixture_run(fixture)
    big = scaled_run(orig, str(tmp_path_factory.mktemp(fixture) / f"x{n}"), n)
    cons = [views.connect(d, interference=True) for d in (orig, big)]
    yield n, cons[0], cons[1]
    for c in cons:
        c.close()


def scaled_run(src, dst, n, stretch=None):
    """make_scaled_run.py's n copies of the converted run src in dst (stretched when given)."""
    args = ["--stretch", str(stretch)] if stretch is not None else []
    subprocess.run([sys.executable, os.path.join(SQL, "bench", "make_scaled_run.py"), src, dst, str(n), *args],
                   check=True, capture_output=True)
    return dst


def io_count(run):
    """I/Os of a run (its view io)."""
    con = views.connect(run)
    try:
        return con.execute("SELECT count(*) FROM io").fetchone()[0]
    finally:
        con.close()


def table(con, sql):
    cur = con.execute(sql)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def keyed(rows, *key):
    return {tuple(r[k] for k in key): r for r in rows}


def assert_commands_scale(a, b, n):
    """The run b has n times run a's initiator, target and matched commands."""
    q = "SELECT name, value FROM pipeline_stats WHERE name IN ('initiator_commands', 'target_commands', 'matched_commands')"
    sa, sb = dict(a.execute(q).fetchall()), dict(b.execute(q).fetchall())
    assert len(sa) == 3 and int(sa["matched_commands"]) > 100
    assert {k: int(v) * n for k, v in sa.items()} == {k: int(v) for k, v in sb.items()}


def assert_one_offset(a, b):
    """Both runs' clock offsets agree within their uncertainties."""
    oa, ob = a.execute("SELECT offset_ns, uncertainty_ns FROM clock_offset").fetchone(), \
        b.execute("SELECT offset_ns, uncertainty_ns FROM clock_offset").fetchone()
    assert abs(oa[0] - ob[0]) <= oa[1] + ob[1]


def test_commands_and_matches_scale_by_n(pair):
    n, a, b = pair
    assert_commands_scale(a, b, n)
    q = "SELECT match_state, count(*) FROM io GROUP BY 1"
    assert {k: v * n for k, v in a.execute(q).fetchall()} == dict(b.execute(q).fetchall())
    # one offset for every copy: both hosts were shifted alike
    assert_one_offset(a, b)


def test_groups_and_stage_stats_equal(pair):
    n, a, b = pair
    ga = keyed(table(a, "SELECT * FROM report_groups"), "group_key")
    gb = keyed(table(b, "SELECT * FROM report_groups"), "group_key")
    assert ga.keys() == gb.keys() and len(ga) >= 1
    for k in ga:
        assert (gb[k]["count"], gb[k]["matched"], gb[k]["bytes"]) == \
            (n * ga[k]["count"], n * ga[k]["matched"], n * ga[k]["bytes"])
    sa = keyed(table(a, "SELECT * FROM report_stage_stats"), "group_key", "stage_set", "stage")
    sb = keyed(table(b, "SELECT * FROM report_stage_stats"), "group_key", "stage_set", "stage")
    assert sa.keys() == sb.keys()
    for k, x in sa.items():
        y = sb[k]
        assert y["count"] == n * x["count"], k
        assert abs(y["mean_ns"] - x["mean_ns"]) <= 1, (k, x["mean_ns"], y["mean_ns"])
        assert (y["min_ns"], y["max_ns"]) == (x["min_ns"], x["max_ns"]), k
    # percentiles: an order statistic of the original, the same or the next one up
    durs = {}
    for r in table(a, "SELECT sel.group_key, s.stage_set, s.stage, list(s.dur ORDER BY s.dur) AS d "
                      "FROM io_stages s JOIN io_selected sel USING (io_id) WHERE s.dur IS NOT NULL GROUP BY ALL"):
        durs[(r["group_key"], r["stage_set"], r["stage"])] = r["d"]
    checked = 0
    for k, x in sa.items():
        d = durs[k]
        for p in PCTS:
            i = bisect.bisect_right(d, x[p]) - 1  # the last copy of that value
            assert sb[k][p] in d[i:i + 2], (k, p, x[p], sb[k][p])
            checked += 1
    assert checked >= 8 * len(sa)


def test_histograms_scale_by_n(pair):
    n, a, b = pair
    q = "SELECT group_key, stage_set, stage, bucket, count FROM report_stage_histogram"
    ha = {r[:4]: r[4] for r in a.execute(q).fetchall()}
    hb = {r[:4]: r[4] for r in b.execute(q).fetchall()}
    assert {k: n * v for k, v in ha.items()} == hb


def test_interference_equal(pair):
    n, a, b = pair
    sa = keyed(table(a, "SELECT * FROM intf_streams"), "stream_id")
    sb = keyed(table(b, "SELECT * FROM intf_streams"), "stream_id")
    assert sa.keys() == sb.keys()
    for k, x in sa.items():
        assert (sb[k]["ios"], sb[k]["bytes"]) == (n * x["ios"], n * x["bytes"])
        assert sb[k]["mean_wait_ns"] == pytest.approx(x["mean_wait_ns"], rel=1e-9)
    va = dict(a.execute("SELECT stream_id, verdict FROM intf_stream_verdict").fetchall())
    assert va == dict(b.execute("SELECT stream_id, verdict FROM intf_stream_verdict").fetchall())
    wa = keyed(table(a, "SELECT * FROM intf_stream_sharing"), "stream_id", "resource", "other_stream_id")
    wb = keyed(table(b, "SELECT * FROM intf_stream_sharing"), "stream_id", "resource", "other_stream_id")
    assert wa.keys() == wb.keys()
    if len(sa) == 2:  # interference-c2: two fio streams on one queue, each ahead of the other
        assert len(wa) == 4
    for k, x in wa.items():
        assert wb[k]["ios_waited"] == n * x["ios_waited"], k
        for c in ("ios_waited_frac", "ahead_bytes_mean", "wait_ns_with", "wait_ns_without"):
            if x[c] is None:
                assert wb[k][c] is None, (k, c)
            else:
                assert wb[k][c] == pytest.approx(x[c], rel=1e-9), (k, c)
    q = ("SELECT sum(queue_ahead_cmds), sum(queue_other_bytes), sum(queue_other_cpu_cmds), sum(device_ahead_cmds), "
         "sum(device_other_bytes) FROM intf_io_ahead")
    assert [n * v for v in a.execute(q).fetchone()] == list(b.execute(q).fetchone())


def test_stretched_copies_keep_the_run_and_vary_durations(fixture_run, tmp_path):
    """make_scaled_run.py --stretch (the benchmark's input): copy k runs (1 + S k / N) times
    slower on every host around one moment, so the commands still pair and match as in the
    original, each one-host stage's durations sum to the original's times the copies' factors,
    and the durations no longer repeat from copy to copy."""
    n, s = 3, 0.03
    orig = fixture_run("lab-6.1-stock-interference-c2")
    big = scaled_run(orig, str(tmp_path / "stretched"), n, stretch=s)
    a, b = views.connect(orig), views.connect(big)
    try:
        assert_commands_scale(a, b, n)
        assert_one_offset(a, b)
        # one-host stages: every event moved by the copy's factor, to within 1 ns per endpoint
        q = ("SELECT s.stage, sum(s.dur)::HUGEINT, count(s.dur), count(DISTINCT s.dur) FROM io_stages s "
             "JOIN stage_definitions d USING (stage_set, stage) WHERE d.side IN ('initiator', 'target') "
             "AND s.stage_set = 'stock' GROUP BY ALL")
        ra = {r[0]: r[1:] for r in a.execute(q).fetchall()}
        rb = {r[0]: r[1:] for r in b.execute(q).fetchall()}
        assert ra.keys() == rb.keys() and {"end_to_end", "target_exec", "host_queue"} <= ra.keys()
        factor = sum(1 + s * k / n for k in range(n))
        for stage, (total, count, distinct) in ra.items():
            assert rb[stage][1] == n * count, stage
            assert abs(rb[stage][0] - total * factor) <= 2 * rb[stage][1], (stage, total, rb[stage][0])
        # end_to_end (milliseconds) varies from copy to copy: nearly n times the distinct values
        assert rb["end_to_end"][2] >= 0.9 * n * ra["end_to_end"][2]
    finally:
        a.close()
        b.close()


def test_export_benchmark_measures_a_stretched_run(fixture_run, tmp_path):
    """sql/bench/bench_export.py (run by hand, so nothing else would notice it break: it did, on
    timeline.stage_set_of's primary_stage_set) measures its three phases on a 2-copy stretched
    run: every selected I/O counted, each output written and its size reported, the timeline
    encoder's peak memory its own."""
    orig = fixture_run("lab-6.1-stock-interference-c2")
    big = scaled_run(orig, str(tmp_path / "x2"), 2, stretch=0.02)
    r = subprocess.run([sys.executable, os.path.join(SQL, "bench", "bench_export.py"), "--child", big, "1GB"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["ios"] == 2 * io_count(orig)
    out = os.path.join(big, "bench-out")
    for phase, files in (("io.parquet + io_stages.parquet", ("io.parquet", "io_stages.parquet")),
                         ("timeline.perfetto-trace", ("timeline.perfetto-trace",))):
        assert got[phase]["s"] > 0 and got[phase]["peak_rss_mib"] > 0
        assert got[phase]["mb"] == pytest.approx(sum(os.path.getsize(os.path.join(out, f)) for f in files) / 1e6)
    # the encoder's own peak (a few MB to tens at this size), not this process's (hundreds)
    assert 1 < got["timeline.perfetto-trace"]["encoder_peak_rss_mib"] < got["load views"]["peak_rss_mib"]


def run_analyze_benchmark(ntscope_bin, tmp_path, **extra):
    env = dict(os.environ, SIZES="1 2", REPS="1", LIMITS="default", TRACECMD="1", NTSCOPE_BIN=ntscope_bin,
               BENCH_DIR=str(tmp_path / "bench"), **extra)
    return subprocess.run([sys.executable, os.path.join(SQL, "bench", "bench_analyze.py")], env=env,
                          capture_output=True, text=True)


@pytest.mark.parametrize("sample", [None, "lab-6.1-patched-base-randread"])
def test_analyze_benchmark_prints_both_sizes(fixture_run, ntscope_bin, tmp_path, sample):
    """sql/bench/bench_analyze.py (`just bench-analyze`, the benchmark of record) at two tiny
    sizes: a row per size with the sample's events and I/Os times the copies, trace-cmd and
    analyze both timed, and the growth line between the sizes. By default the stock fixture;
    SAMPLE a recorded run folder (here a patched fixture's, named by its path)."""
    orig = fixture_run(sample or "stock-randread-4k-qd8")
    ios = io_count(orig)
    ev = 0
    for host in ("initiator", "target"):
        with open(os.path.join(orig, host, "parquet", "metadata.json")) as f:
            ev += json.load(f)["total_events"]
    extra = {"SAMPLE": os.path.join(os.path.dirname(SQL), "fixtures", sample)} if sample else {}
    r = run_analyze_benchmark(ntscope_bin, tmp_path, **extra)
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"same events; {sample or 'stock-randread-4k-qd8'} x N" in r.stdout
    rows = {}
    for line in r.stdout.splitlines():
        w = line.split()
        if len(w) > 12 and w[0] in ("1", "2") and w[3] == "|":
            # N, events, I/Os | tc s, tc ev/s ... | 2000MB (default) an s ...: trace-cmd's events/s,
            # as its seconds print as 0.0 on the small patched fixture
            rows[int(w[0])] = (int(w[1].replace(",", "")), int(w[2].replace(",", "")),
                               float(w[5].replace(",", "")), float(w[11]))
    assert sorted(rows) == [1, 2], r.stdout
    for n, (events, n_ios, tc_events_per_s, an_s) in rows.items():
        assert (events, n_ios) == (n * ev, n * ios)
        assert tc_events_per_s > 0 and an_s > 0
    assert "x2.0 events: analyze x" in r.stdout
    # the goal lines say met exactly when the printed figure is within the bound
    per_doubling = float(r.stdout.split(" per doubling, linear")[0].rsplit(": x", 1)[1])
    growth = [line for line in r.stdout.splitlines() if line.startswith("goal: twice the events")]
    assert len(growth) == 1 and growth[0].endswith(f"(x{per_doubling:.2f} per doubling)"), r.stdout
    assert (": met (" in growth[0]) == (per_doubling <= 2.2), growth[0]
    memory = [line for line in r.stdout.splitlines() if line.startswith("goal: peak RSS <= 3 GB")]
    assert len(memory) == 2, r.stdout
    for line in memory:
        mib = float(line.rsplit("(", 1)[1].split(" MiB")[0].replace(",", ""))
        assert (": met (" in line) == (mib <= 3e9 / 2**20), line


def test_analyze_benchmark_refuses_a_sample_it_cannot_scale(ntscope_bin, tmp_path):
    """A SAMPLE that is no fixture and no run folder is refused by name; one that is the bench's
    own converted copy (its folder under BENCH_DIR, unfinished) is refused, not cleared."""
    r = run_analyze_benchmark(ntscope_bin, tmp_path, SAMPLE="no-such-fixture")
    assert r.returncode == 2 and "SAMPLE='no-such-fixture'" in r.stderr and "fix:" in r.stderr
    own = tmp_path / "bench" / "recorded"
    for host in ("initiator", "target"):
        (own / host).mkdir(parents=True)
        (own / host / "trace.dat").write_bytes(b"kept")
    r = run_analyze_benchmark(ntscope_bin, tmp_path, SAMPLE=str(own))
    assert r.returncode == 2 and "the bench's own converted copy" in r.stderr
    assert all((own / h / "trace.dat").read_bytes() == b"kept" for h in ("initiator", "target"))


def test_convert_benchmark_counts_what_trace_cmd_prints(ntscope_bin, tmp_path):
    """analyzer/bench/bench_convert.sh (`just bench-convert`) at 200 k events, without the lab
    capture (BENCH_LAB=0): the four commands timed on each input, the compressed and the
    uncompressed copy hold the same events, and the events it reports for a replicated trace are
    the event lines `trace-cmd report` prints of that very file."""
    repo = os.path.dirname(SQL)
    cache = tmp_path / "cache"
    env = dict(os.environ, BENCH_LAB="0", BENCH_EVENTS="200000", BENCH_REPS="1", NTSCOPE_BIN=ntscope_bin,
               NTSCOPE_CACHE=str(cache))
    r = subprocess.run(["bash", os.path.join(repo, "analyzer", "bench", "bench_convert.sh")], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    commands = ("ntscope convert (all cores)", "ntscope convert --threads 1", "ntscope --decode-only (no Parquet)",
                "trace-cmd report > /dev/null")
    events = {}
    for line in r.stdout.splitlines():
        for c in commands:
            if c in line:
                name, n = line.split()[:2]
                events.setdefault(name, {})[c] = int(n)
    assert set(events) == {"scaled-small", "scaled-big", "scaled-big-raw"}, r.stdout
    assert all(set(e) == set(commands) and len(set(e.values())) == 1 for e in events.values()), events
    big = events["scaled-big"][commands[0]]
    assert big >= 200000 and events["scaled-big-raw"][commands[0]] == big
    [trace] = [p for p in (cache / "bench").glob("replicated-200000-*.dat") if not p.name.endswith("-none.dat")]
    printed = subprocess.run(["trace-cmd", "report", "-i", str(trace)], capture_output=True, text=True, check=True)
    lines = [x for x in printed.stdout.splitlines() if re.match(r"^ *\S.*\[[0-9]+\] +[0-9]+\.[0-9]+:", x)]
    assert len(lines) == big
    assert "goal: time linear in trace length (scaled):" in r.stdout
    # The per-CPU goal's ceiling is the decode-only row's events per CPU-second, per input.
    for name in ("scaled-big", "scaled-big-raw"):
        [row] = [x for x in r.stdout.splitlines() if x.startswith(name + " ") and commands[2] in x]
        [ceiling] = re.findall(rf"ceiling on this machine \({name}\): decoding alone, nothing written, ([0-9.]+) M", r.stdout)
        assert ceiling == row.split()[-2], (row, ceiling)
