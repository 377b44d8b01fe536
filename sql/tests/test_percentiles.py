"""The report's statistics come from report_stage_values (each distinct duration's count and
rank), not from quantile aggregates (which hold every duration in memory and cannot spill).
Checked against the durations themselves, sorted in Python, on real captures with several
groups and stage sets: count, mean, min, max, the nearest-rank percentiles (the value at
position ceil(q * n), integers only), every point of the CDF and the log2 histogram; the same for the interference breakdown per stream and for
compare's statistics and CDF points per side."""
import collections
import math

import pytest

from ntscope.sql import views

RUN = "stock-randrw-mixed"   # reads and writes of many sizes: 64 groups, every stock stage set
FRACTIONS = {"p10_ns": 1000, "p50_ns": 5000, "p70_ns": 7000, "p80_ns": 8000, "p90_ns": 9000,
             "p95_ns": 9500, "p99_ns": 9900, "p999_ns": 9990, "p9999_ns": 9999}   # / 10000


def nearest_rank(values, num, den):
    """values[ceil(num / den * n) - 1] of the sorted values, in integers."""
    return values[max(-(-num * len(values) // den), 1) - 1]


def round_half_away(num, den):
    q, r = divmod(abs(num), den)
    return (q + (2 * r >= den)) * (1 if num >= 0 else -1)


def log2_bucket(dur):
    return -2 if dur < 0 else -1 if dur < 1000 else int(math.floor(math.log2(dur / 1000.0)))


@pytest.fixture(scope="module")
def con(fixture_run):
    return views.connect(fixture_run(RUN))


@pytest.fixture(scope="module")
def durations(con):
    """(group_key, stage_set, stage) -> sorted durations of the selected io."""
    out = collections.defaultdict(list)
    for g, ss, st, dur in con.execute("SELECT sel.group_key, s.stage_set, s.stage, s.dur FROM io_stages s "
                                      "JOIN io_selected sel USING (io_id) WHERE s.dur IS NOT NULL").fetchall():
        out[(g, ss, st)].append(dur)
    return {k: sorted(v) for k, v in out.items()}


def test_stats_are_the_sorted_durations(con, durations):
    cur = con.execute("SELECT * FROM report_stage_stats")
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, r)) for r in cur.fetchall()]
    assert len(rows) == len(durations) and len({r["group_key"] for r in rows}) == 64
    for r in rows:
        v = durations[(r["group_key"], r["stage_set"], r["stage"])]
        assert (r["count"], r["min_ns"], r["max_ns"]) == (len(v), v[0], v[-1])
        assert r["mean_ns"] == round_half_away(sum(v), len(v))   # SQL's round()
        for col, num in FRACTIONS.items():
            if col == "p9999_ns" and len(v) < 10000:
                assert r[col] is None
            else:
                assert r[col] == nearest_rank(v, num, 10000), (r["stage"], col)


def test_cdf_is_every_percent_by_nearest_rank(con, durations):
    cdf = collections.defaultdict(dict)
    for g, ss, st, pct, dur in con.execute("SELECT group_key, stage_set, stage, pct, dur_ns "
                                           "FROM report_stage_cdf").fetchall():
        assert pct not in cdf[(g, ss, st)]
        cdf[(g, ss, st)][pct] = dur
    assert cdf.keys() == durations.keys()
    for key, points in cdf.items():
        v = durations[key]
        # exact ranks: quantile_disc(dur, i / 100) rounds i / 100 * n in floating point and
        # picks the next value for some n (e.g. 56 / 100 * 100 > 56)
        assert points == {p: nearest_rank(v, p, 100) for p in range(1, 101)}, key


def test_histogram_counts_every_duration_once(con, durations):
    want = collections.Counter()
    for (g, ss, st), v in durations.items():
        for dur in v:
            want[(g, ss, st, log2_bucket(dur))] += 1
    got = {(g, ss, st, b): n for g, ss, st, b, n in
           con.execute("SELECT group_key, stage_set, stage, bucket, count FROM report_stage_histogram").fetchall()}
    assert got == dict(want)


def test_stream_breakdown_is_the_sorted_durations(fixture_run):
    """intf_stream_breakdown (interference) computes its p50 / p99 the same way, per stream."""
    con = views.connect(fixture_run("lab-6.1-stock-interference-c1"), interference=True)
    per_stream = collections.defaultdict(list)
    for sid, ss, st, dur in con.execute("SELECT i.stream_id, s.stage_set, s.stage, s.dur FROM intf_io i "
                                        "JOIN io_stages s USING (io_id) WHERE s.dur IS NOT NULL").fetchall():
        per_stream[(sid, ss, st)].append(dur)
    rows = con.execute("SELECT stream_id, stage_set, stage, n, mean_ns, p50_ns, p99_ns "
                       "FROM intf_stream_breakdown").fetchall()
    assert len(rows) == len(per_stream) and len({r[0] for r in rows}) == 2
    for sid, ss, st, n, mean, p50, p99 in rows:
        v = sorted(per_stream[(sid, ss, st)])
        assert (n, p50, p99) == (len(v), nearest_rank(v, 1, 2), nearest_rank(v, 99, 100))
        assert mean == pytest.approx(sum(v) / len(v), rel=1e-12)


def test_a_cut_shared_by_definitions_gives_each_its_own_statistics(fixture_run):
    """report_stage_values and intf_stream_breakdown count each cut once (io_stage_cuts: the
    definitions with the same milestones, e.g. ntprof's stages and s_notation's) and give the
    counts to every definition of it: on a patched run each stage of each set still gets the
    statistics of its own durations, per group and per stream."""
    con = views.connect(fixture_run("lab-6.1-patched-interference-c3"), interference=True)
    cuts, defs = con.execute("SELECT count(DISTINCT cut_def_no), count(*) FROM io_stage_cuts").fetchone()
    assert cuts < defs   # shared cuts to give out
    per_group, per_stream = collections.defaultdict(list), collections.defaultdict(list)
    for g, ss, st, dur in con.execute("SELECT sel.group_key, s.stage_set, s.stage, s.dur FROM io_stages s "
                                      "JOIN io_selected sel USING (io_id) WHERE s.dur IS NOT NULL").fetchall():
        per_group[(g, ss, st)].append(dur)
    for sid, ss, st, dur in con.execute("SELECT i.stream_id, s.stage_set, s.stage, s.dur FROM intf_io i "
                                        "JOIN io_stages s USING (io_id) WHERE s.dur IS NOT NULL").fetchall():
        per_stream[(sid, ss, st)].append(dur)
    assert {k[1] for k in per_group} == {"ntprof", "s_notation", "stock"}
    stats = con.execute("SELECT group_key, stage_set, stage, count, min_ns, max_ns, p50_ns, p99_ns "
                        "FROM report_stage_stats").fetchall()
    assert {r[:3] for r in stats} == per_group.keys() and len(stats) == len(per_group)
    for g, ss, st, n, lo, hi, p50, p99 in stats:
        v = sorted(per_group[(g, ss, st)])
        assert (n, lo, hi, p50, p99) == (len(v), v[0], v[-1], nearest_rank(v, 1, 2), nearest_rank(v, 99, 100))
    rows = con.execute("SELECT stream_id, stage_set, stage, n, p50_ns, p99_ns FROM intf_stream_breakdown").fetchall()
    assert {r[:3] for r in rows} == per_stream.keys() and len(rows) == len(per_stream)
    assert len({r[0] for r in rows}) >= 2
    for sid, ss, st, n, p50, p99 in rows:
        v = sorted(per_stream[(sid, ss, st)])
        assert (n, p50, p99) == (len(v), nearest_rank(v, 1, 2), nearest_rank(v, 99, 100))


def test_compare_statistics_are_the_sorted_durations(fixture_run):
    """compare's point statistics (cmp_stage_stats) and CDF points (cmp_plot_cdf), per side."""
    from ntscope.sql import compare_sides as load
    con = load.compare_connection([fixture_run("stock-randread-4k-qd8")], [fixture_run(RUN)], cache=True)
    parts = collections.defaultdict(list)
    for run, g, ss, st, dur in con.execute("SELECT run, group_key, stage_set, stage, dur FROM cmp_io_stage "
                                           "WHERE dur IS NOT NULL").fetchall():
        parts[(run, g, ss, st)].append(dur)
    parts = {k: sorted(v) for k, v in parts.items()}
    stats = con.execute("SELECT run, group_key, stage_set, stage, n, mean_ns, p50_ns, p99_ns "
                        "FROM cmp_stage_stats").fetchall()
    assert len(stats) == len(parts) and {s[0] for s in stats} == {"base", "run"}
    for run, g, ss, st, n, mean, p50, p99 in stats:
        v = parts[(run, g, ss, st)]
        assert (n, p50, p99) == (len(v), nearest_rank(v, 1, 2), nearest_rank(v, 99, 100))
        assert mean == pytest.approx(sum(v) / len(v), rel=1e-12)
    cdf = collections.defaultdict(dict)
    for run, g, ss, st, pct, dur in con.execute("SELECT run, group_key, stage_set, stage, pct, dur_ns "
                                                "FROM cmp_plot_cdf").fetchall():
        cdf[(run, g, ss, st)][pct] = dur
    assert cdf.keys() == parts.keys()
    for key, points in cdf.items():
        assert points == {p: nearest_rank(parts[key], p, 100) for p in range(1, 101)}, key
