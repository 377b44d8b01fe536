"""Repeats: `compare base1,base2,base3 run1,run2,run3` judges a change of a mean against
run-to-run variation too. Real lab fixtures: three runs without digests and three with
(capture/scenarios/digest.sh, qd 1): each one-to-one pair is significantly slower, but
the three base runs themselves differ by more than the digests cost (13.1 .. 16.8 ms), so
with three runs per side the change is within run-to-run variation."""
import math
import statistics

import pytest

from ntscope.reports.compare import model
from ntscope.sql import compare_sides as load

BASES = ["lab-6.1-patched-digest-base", "lab-6.1-patched-digest-base-r2", "lab-6.1-patched-digest-base-r3"]
RUNS = ["lab-6.1-patched-digest", "lab-6.1-patched-digest-r2", "lab-6.1-patched-digest-r3"]
GROUP = "type=read, size=131072"
T975 = {2: 4.303, 3: 3.182, 4: 2.776}   # Student's t, two-sided 95%


def e2e(m):
    (v,) = [v for v in m["verdicts"] if v["group_key"] == GROUP]
    (r,) = [r for r in m["lad"] if r["group_key"] == GROUP and r["stage"] == "end_to_end"
            and r["statistic"] == "mean" and r["stage_set"] == m["stage_set"]]
    return v, r


@pytest.mark.parametrize("k", [0, 1, 2])
def test_each_pair_alone_is_significantly_slower(fixture_run, k):
    v, r = e2e(model.compare_model(fixture_run(BASES[k]), fixture_run(RUNS[k]), cache=True))
    assert (v["verdict"], v["reps_base"], v["reps_run"]) == ("slower", 1, 1)
    assert r["significant"] and r["change_lo_ns"] > 0 and r["between_change_lo_ns"] is None


def test_three_runs_per_side_are_within_run_to_run_variation(fixture_run):
    bases, runs = [fixture_run(b) for b in BASES], [fixture_run(r) for r in RUNS]
    m = model.compare_model(bases, runs, cache=True)
    v, r = e2e(m)
    assert [x["rep"] for x in m["base_runs"]] == [1, 2, 3] and [x["run_dir"] for x in m["run_runs"]] == runs
    # the pooled bootstrap alone still excludes 0: only the runs' spread makes it noise
    assert r["change_lo_ns"] > 0 and (r["reps_base"], r["reps_run"]) == (3, 3)
    assert r["between_change_lo_ns"] < 0 < r["between_change_hi_ns"]
    assert not r["significant"]
    assert (v["verdict"], v["cause_id"]) == ("no significant change", "none")
    assert "3 and 3 runs per side" in v["evidence"]


def test_between_run_interval_is_welch_on_the_runs_own_means(fixture_run):
    bases, runs = [fixture_run(b) for b in BASES], [fixture_run(r) for r in RUNS]
    con = load.compare_connection(bases, runs, cache=True)
    try:
        stage_set = con.execute("SELECT stage_set FROM cmp_stage_set").fetchone()[0]
        means = con.execute("SELECT run, rep, mean_ns FROM cmp_rep_stats WHERE group_key = ? AND stage = 'end_to_end' "
                            "AND stage_set = ? ORDER BY run, rep", [GROUP, stage_set]).fetchall()
        lo, hi, df = con.execute("SELECT change_lo_ns, change_hi_ns, df FROM cmp_between_runs WHERE group_key = ? "
                                 "AND stage = 'end_to_end' AND stage_set = ?", [GROUP, stage_set]).fetchone()
    finally:
        con.close()
    b = [x[2] for x in means if x[0] == "base"]
    r = [x[2] for x in means if x[0] == "run"]
    assert len(b) == len(r) == 3
    # each rep's mean is its own run's: the one-run comparison of that run sees the same mean
    _, alone = e2e(model.compare_model(bases[1], runs[1], cache=True))
    assert math.isclose(b[1], alone["base_ns"], rel_tol=1e-9) and math.isclose(r[1], alone["run_ns"], rel_tol=1e-9)
    vb, vr = statistics.variance(b) / 3, statistics.variance(r) / 3
    want_df = int((vb + vr) ** 2 / (vb ** 2 / 2 + vr ** 2 / 2))
    half = T975[want_df] * math.sqrt(vb + vr)
    diff = statistics.mean(r) - statistics.mean(b)
    assert df == want_df
    # the printed table's t has 3 decimals; cmp_t_quantile's is exact: they differ by < 0.0005 x the standard error
    assert abs(lo - (diff - half)) < 5e-4 * math.sqrt(vb + vr) and abs(hi - (diff + half)) < 5e-4 * math.sqrt(vb + vr)


def test_the_cli_takes_comma_lists_and_writes_beside_the_first_run(fixture_run, ntscope_cli):
    bases, runs = [fixture_run(b) for b in BASES], [fixture_run(r) for r in RUNS]
    r = ntscope_cli("compare", ",".join(bases), ",".join(runs))
    assert r.returncode == 0, r.stderr
    assert "repeats: 3 base runs, 3 runs" in r.stdout and "VERDICT: NO SIGNIFICANT CHANGE" in r.stdout
    import json, os
    doc = json.load(open(os.path.join(runs[0], "report", "compare.json")))
    assert [x["run_dir"] for x in doc["base_runs"]] == bases and doc["verdicts"][0]["reps_run"] == 3


def test_a_run_list_names_each_run_once(fixture_run, ntscope_cli):
    b = fixture_run(BASES[0])
    r = ntscope_cli("compare", f"{b},{b}", fixture_run(RUNS[0]), "--quiet")
    assert r.returncode == 2 and "names" in r.stderr and "twice" in r.stderr
    r = ntscope_cli("compare", b, b, "--quiet")
    assert r.returncode == 2 and "on both sides" in r.stderr
