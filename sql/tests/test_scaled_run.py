"""Same answers at scale: a run made of N time-shifted copies of a real capture
(sql/bench/make_scaled_run.py, the input of `just bench-analyze`) must report what the
capture itself reports: every count N times, the same means, percentiles that are the
original's own order statistics (nearest rank over N copies lands on the same value or its
neighbour), the same histograms x N, clock offset and interference. Small N keeps it a few
seconds; the benchmark (sql/bench/bench_analyze.py) runs the same SQL at millions of events.
Needs the converter (NTSCOPE_BIN)."""
import bisect
import datetime
import json
import os
import platform
import re
import subprocess
import sys

import pytest

from ntscope.sql import views

HERE = os.path.dirname(os.path.abspath(__file__))
SQL = os.path.dirname(HERE)
REPO = os.path.dirname(SQL)

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
    """sql/bench/bench_export.py (run by hand, so only this test notices when a change to what it
    calls breaks it) measures its three phases on a 2-copy stretched
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


def test_export_benchmark_appends_a_record(ntscope_bin, tmp_path):
    """bench_export.py at one copy: the table it prints and one record of its three phases."""
    results = seed_results(tmp_path / "results.jsonl")
    env = dict(os.environ, NTSCOPE_BIN=ntscope_bin, BENCH_RESULTS=str(results), TMPDIR=str(tmp_path))
    r = subprocess.run([sys.executable, os.path.join(SQL, "bench", "bench_export.py"), "1"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    rec = appended_record(results, "bench-export", r.stdout)
    assert rec["params"] == {"sizes": [1], "memory_limit": "2GB", "stretch": 0.02} and rec["goals"] == []
    rows = {x["phase"]: x for x in rec["figures"]["rows"]}
    assert list(rows) == ["load views", "io.parquet + io_stages.parquet", "timeline.perfetto-trace"]
    for phase, x in rows.items():
        assert x["copies"] == 1 and x["ios"] == 6389 and x["s"] > 0 and x["peak_rss_mib"] > 0
        [line] = [line for line in r.stdout.splitlines() if phase in line and line.split()[0] == "6389"]
        # the record keeps 2 decimals, the table prints 1 from the unrounded time: 1.049 s is
        # recorded 1.05 and printed 1.0, so the two agree within the table's rounding
        assert abs(float(line[len("     6389  ") + 33:].split()[0]) - x["s"]) <= 0.05 + 1e-9, (line, x)
    assert rows["timeline.perfetto-trace"]["encoder_peak_rss_mib"] > 1 and rows["timeline.perfetto-trace"]["mb"] > 1


def run_analyze_benchmark(ntscope_bin, tmp_path, **extra):
    env = dict(os.environ, SIZES="1 2", REPS="1", LIMITS="default", TRACECMD="1", NTSCOPE_BIN=ntscope_bin,
               BENCH_DIR=str(tmp_path / "bench"), BENCH_RESULTS=str(tmp_path / "results.jsonl"))
    env.update(extra)
    return subprocess.run([sys.executable, os.path.join(SQL, "bench", "bench_analyze.py")], env=env,
                          capture_output=True, text=True)


EARLIER = {"bench": "an earlier run", "figures": {}}


def seed_results(path):
    """A results file holding one earlier record (a bench must append after it, never rewrite it)."""
    path.write_text(json.dumps(EARLIER) + "\n")
    return path


def appended_record(path, bench, stdout):
    """The one record a bench run appended to PATH (seeded by seed_results), checked well-formed:
    the keys in order, a UTC date of the last hour, this checkout's commit, this machine, and one
    goals entry per `goal:` line the run printed, met as printed. Returns it."""
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0]) == EARLIER, lines
    rec = json.loads(lines[1])
    assert list(rec) == ["bench", "date", "commit", "dirty", "machine", "params", "figures", "goals"], list(rec)
    assert rec["bench"] == bench
    when = datetime.datetime.strptime(rec["date"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    assert abs((datetime.datetime.now(datetime.timezone.utc) - when).total_seconds()) < 3600, rec["date"]
    head = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True)
    assert rec["commit"] == (head.stdout.strip() if head.returncode == 0 else None)
    assert rec["dirty"] in (True, False) if rec["commit"] else rec["dirty"] is None
    m = rec["machine"]
    assert m["cores"] == os.cpu_count() and m["memory_gib"] > 0 and m["kernel"] == platform.release() and m["cpu_model"]
    printed = [line for line in stdout.splitlines() if line.startswith("goal: ")]
    assert len(rec["goals"]) == len(printed), (rec["goals"], printed)
    for g, line in zip(rec["goals"], printed):
        assert set(g) == {"goal", "met", "figure"} and line.startswith("goal: " + g["goal"] + ": ")
        assert g["met"] == (": met (" in line) and g["figure"] in line
    return rec


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


def test_analyze_benchmark_appends_a_record(fixture_run, ntscope_bin, tmp_path):
    """`just bench-analyze` at its smallest (one copy, one repetition) appends one well-formed
    record after the earlier ones: its parameters, the printed row as numbers and its goal lines."""
    orig = fixture_run("stock-randread-4k-qd8")
    results = seed_results(tmp_path / "results.jsonl")
    r = run_analyze_benchmark(ntscope_bin, tmp_path, SIZES="1")
    assert r.returncode == 0, r.stderr[-2000:]
    rec = appended_record(results, "bench-analyze", r.stdout)
    assert rec["params"]["sizes"] == [1] and rec["params"]["reps"] == 1 and rec["params"]["tracecmd"] is True
    [row] = rec["figures"]["rows"]
    assert row["copies"] == 1 and row["ios"] == io_count(orig) and row["memory_limit"].endswith("(default)")
    [printed] = [line.split() for line in r.stdout.splitlines() if line.split()[:1] == ["1"] and "|" in line]
    # N, events, I/Os | trace-cmd ... | 2000MB (default), analyze s, CPU s, ev/s, peak RSS ...
    assert (row["events"], row["peak_rss_mib"]) == (int(printed[1].replace(",", "")), int(printed[14].replace(",", "")))
    assert row["analyze_s"] == pytest.approx(float(printed[11]), abs=0.051)
    assert row["analyze_vs_tracecmd"] == pytest.approx(row["analyze_s"] / row["tracecmd_s"], abs=0.01)
    assert [g["goal"] for g in rec["goals"]] == [f"peak RSS <= 3 GB at {row['events']:,} events, --memory-limit default"]


def test_analyze_benchmark_of_a_run_appends_a_record(fixture_run, ntscope_bin, tmp_path):
    """`just bench-analyze RUN` (sql/bench/bench_analyze.sh) on a real two-host run: trace-cmd report
    and convert of each host and analyze, each printed and kept in one record with their ratio."""
    run = tmp_path / "stock-randread-4k-qd8"
    for host in ("initiator", "target"):
        (run / host).mkdir(parents=True)
        (run / host / "trace.dat").write_bytes(
            open(os.path.join(REPO, "fixtures", "stock-randread-4k-qd8", host, "trace.dat"), "rb").read())
    results = seed_results(tmp_path / "results.jsonl")
    env = dict(os.environ, NTSCOPE_BIN=ntscope_bin, NTSCOPE_PYTHON=sys.executable, BENCH_RESULTS=str(results))
    r = subprocess.run(["bash", os.path.join(SQL, "bench", "bench_analyze.sh"), str(run)], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    rec = appended_record(results, "bench-analyze-run", r.stdout)
    assert rec["params"] == {"run": "stock-randread-4k-qd8", "memory_limit": "default"}
    f = rec["figures"]
    assert [h["host"] for h in f["hosts"]] == ["initiator", "target"]
    printed = {line[:44].strip(): float(line[44:].split()[0]) for line in r.stdout.splitlines() if " MiB" in line}
    for h in f["hosts"]:
        assert h["tracecmd_s"] == printed[f"trace-cmd report ({h['host']})"]
        assert h["convert_s"] == printed[f"ntscope convert ({h['host']})"] and h["convert_peak_rss_mib"] > 0
    assert f["analyze_s"] == printed["analyze (all hosts, converted)"] > 0
    assert f["tracecmd_total_s"] == pytest.approx(sum(h["tracecmd_s"] for h in f["hosts"]))
    assert f["analyze_vs_tracecmd"] == round(f["analyze_s"] / f["tracecmd_total_s"], 2)
    assert f"= {f['analyze_vs_tracecmd']:.2f}x" in r.stdout


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
    results = seed_results(tmp_path / "results.jsonl")
    env = dict(os.environ, BENCH_LAB="0", BENCH_EVENTS="200000", BENCH_REPS="1", NTSCOPE_BIN=ntscope_bin,
               NTSCOPE_CACHE=str(cache), BENCH_RESULTS=str(results))
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
    # the run's record: every printed row, the ratios and ceilings, each goal line
    rec = appended_record(results, "bench-convert", r.stdout)
    assert rec["params"]["bench_events"] == 200000 and rec["params"]["lab"] is False
    assert rec["params"]["inputs"] == ["scaled-small", "scaled-big", "scaled-big-raw"]
    kept = {(x["input"], x["command"]): x for x in rec["figures"]["rows"]}
    assert len(kept) == 12 and all(kept[(i, "convert")]["events"] == e[commands[0]] for i, e in events.items())
    for name in ("scaled-big", "scaled-big-raw"):
        [ratio] = [x for x in rec["figures"]["ratios"] if x["input"] == name]
        assert ratio["decode_only_m_events_per_cpu_s"] == kept[(name, "decode-only")]["m_events_per_cpu_s"]
        assert re.search(rf"^{name} +speed ratio vs trace-cmd report: {ratio['vs_tracecmd_wall']:.1f}x wall", r.stdout, re.M)


def test_committed_results_are_records():
    """analyzer/bench/results.jsonl and sql/bench/results.jsonl (ARCHITECTURE.md's Performance table is made
    from them): every line one record with the keys a bench writes, a date, a full commit id,
    numbers where figures are, goals with a verdict; appended in date order."""
    for rel, benches in (("analyzer/bench/results.jsonl", {"bench-convert"}),
                         ("sql/bench/results.jsonl", {"bench-analyze", "bench-analyze-run", "bench-export"})):
        with open(os.path.join(REPO, rel)) as f:
            recs = [json.loads(line) for line in f]
        assert recs, rel
        for rec in recs:
            assert list(rec)[:8] == ["bench", "date", "commit", "dirty", "machine", "params", "figures", "goals"]
            assert rec["bench"] in benches and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", rec["date"])
            assert re.fullmatch(r"[0-9a-f]{40}", rec["commit"])
            assert set(rec["machine"]) == {"cpu_model", "cores", "memory_gib", "kernel"} and rec["machine"]["cores"] >= 1
            assert all(set(g) == {"goal", "met", "figure"} and isinstance(g["met"], bool) for g in rec["goals"])
            rows = rec["figures"].get("rows", [])
            assert all(isinstance(v, (int, float)) for r in rows for k, v in r.items()
                       if k.endswith(("_s", "_mib", "_mb")) and v is not None), rec
        assert [r["date"] for r in recs] == sorted(r["date"] for r in recs), rel


def test_every_pipeline_stats_row_says_what_it_means(fixture_run, tmp_path):
    """A stretched copy has no host.json controller map and command fingerprints that score
    nothing: the ctrl_map row's meaning was built from a NULL score, so it was NULL (and
    report.txt failed on it)."""
    run = scaled_run(fixture_run("lab-6.1-patched-base-randread"), str(tmp_path / "x1"), 1, stretch=0.02)
    con = views.connect(run)
    try:
        bare = con.execute("SELECT name FROM pipeline_stats WHERE meaning IS NULL OR meaning = ''").fetchall()
        mapped = con.execute("SELECT count(*) FROM pipeline_stats WHERE name LIKE 'ctrl_map:%'").fetchone()[0]
    finally:
        con.close()
    assert mapped > 0 and bare == [], bare


def test_analyze_benchmark_beside_a_baseline_commit(fixture_run, ntscope_bin, tmp_path):
    """BASELINE=<commit> times that commit's analyze on the same runs, the two in turn: a table
    of both medians and their ratio, the record's baseline rows equal to it, and the goal line met
    exactly when the ratio is within half the reps' spread of 1."""
    fixture_run("stock-randread-4k-qd8")
    head = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True)
    assert head.returncode == 0, "the benchmark's baseline is a commit of this clone"
    results = seed_results(tmp_path / "results.jsonl")
    r = run_analyze_benchmark(ntscope_bin, tmp_path, SIZES="1", REPS="2", TRACECMD="0", BASELINE="HEAD")
    assert r.returncode == 0, r.stderr[-2000:]
    rec = appended_record(results, "bench-analyze", r.stdout)
    assert rec["params"]["baseline"] == head.stdout.strip()
    base = rec["figures"]["baseline"]
    assert base["commit"] == head.stdout.strip()
    [row] = base["rows"]
    # each variant ran REPS times, which first alternating
    runs = re.findall(r"rep (\d)/2 x1: .*analyze \((this|baseline)\)", r.stderr)
    assert runs == [("1", "this"), ("1", "baseline"), ("2", "baseline"), ("2", "this")], r.stderr
    [printed] = [line.split() for line in r.stdout.splitlines()
                 if line.split()[:1] == ["1"] and "|" in line and len(line.split()) == 12]
    # N, events | limit (2 words), this s, base s, this/base, spread | this MiB, base MiB
    assert row["analyze_s"] == pytest.approx(float(printed[5]), abs=0.051)
    assert row["baseline_s"] == pytest.approx(float(printed[6]), abs=0.051)
    assert row["ratio"] == pytest.approx(row["analyze_s"] / row["baseline_s"], abs=0.002)
    assert printed[7] == f"{row['ratio']:.3f}" and row["analyze_s"] > 0 and row["baseline_peak_rss_mib"] > 0
    [g] = [g for g in rec["goals"] if g["goal"].startswith("analyze no slower than the baseline")]
    assert g["met"] == (round(row["ratio"], 3) <= round(1 + row["spread"] / 2, 3)), (g, row)
    r = run_analyze_benchmark(ntscope_bin, tmp_path, SIZES="1", TRACECMD="0", BASELINE="no-such-commit")
    assert r.returncode == 2 and "BASELINE='no-such-commit' names no commit" in r.stderr and "fix:" in r.stderr


def test_checkout_run_runs_the_trees_own_code(fixture_run, tmp_path):
    """sql/bench/checkout_run.py runs ntscope from the tree it is given, its Python and SQL both
    (an editable install would map ntscope.sql to this checkout's): a tree whose version and
    whose group-by fields were changed prints the changed ones."""
    import shutil
    run = fixture_run("stock-randread-4k-qd8")
    tree = tmp_path / "tree"
    for d in ("ntscope", "sql", "reports"):
        shutil.copytree(os.path.join(REPO, d), tree / d, ignore=shutil.ignore_patterns("__pycache__", "tests"))
    init = tree / "ntscope" / "__init__.py"
    init.write_text(re.sub(r'__version__ = "[^"]*"', '__version__ = "9.9.9-tree"', init.read_text()))
    keys = tree / "sql" / "core" / "group_key.sql"
    keys.write_text(keys.read_text().replace("['type', 'size', 'device',", "['tree-type', 'size', 'device',"))
    launcher = os.path.join(SQL, "bench", "checkout_run.py")
    r = subprocess.run([sys.executable, launcher, str(tree), "-V"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ntscope 9.9.9-tree", (r.stdout, r.stderr)
    r = subprocess.run([sys.executable, launcher, str(tree), "sql", run, "-c", "SELECT io_group_fields()[1] AS f"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "tree-type" in r.stdout, (r.stdout, r.stderr[-2000:])
    r = subprocess.run([sys.executable, "-m", "ntscope", "sql", run, "-c", "SELECT io_group_fields()[1] AS f"],
                       capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0 and "tree-type" not in r.stdout and "type" in r.stdout, r.stderr[-2000:]
    r = subprocess.run([sys.executable, launcher, str(tmp_path / "nothing"), "-V"], capture_output=True, text=True)
    assert r.returncode == 2 and "not a source tree of ntscope" in r.stderr


def test_analyze_benchmark_copies_again_a_sample_that_changed(ntscope_bin, tmp_path):
    """The bench keeps its converted copy and scaled runs between calls, each marked with the
    sha256 of the sample files it was made from: a sample whose files changed is copied and
    scaled again, never measured as it was."""
    sample = tmp_path / "sample"
    for host in ("initiator", "target"):
        (sample / host).mkdir(parents=True)
        for name in ("trace.dat", "fio.log"):
            src = os.path.join(REPO, "fixtures", "stock-randread-4k-qd8", host, name)
            if os.path.exists(src):
                (sample / host / name).write_bytes(open(src, "rb").read())
    copy, scaled = tmp_path / "bench" / "sample", tmp_path / "bench" / "sample-x1-s0.02"
    r = run_analyze_benchmark(ntscope_bin, tmp_path, SAMPLE=str(sample), SIZES="1", TRACECMD="0")
    assert r.returncode == 0, r.stderr[-2000:]
    first = (copy / ".done").read_text()
    assert "initiator/fio.log " in first and (scaled / ".done").read_text() == first
    with open(sample / "initiator" / "fio.log", "a") as f:
        f.write("a line added after the copy\n")
    r = run_analyze_benchmark(ntscope_bin, tmp_path, SAMPLE=str(sample), SIZES="1", TRACECMD="0")
    assert r.returncode == 0, r.stderr[-2000:]
    again = (copy / ".done").read_text()
    assert again != first and (scaled / ".done").read_text() == again
    assert (copy / "initiator" / "fio.log").read_text().endswith("a line added after the copy\n")
