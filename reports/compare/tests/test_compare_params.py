"""compare's statistics flags (--resamples, --confidence, --min-rel-change, --min-abs-change,
--seed) feed cmp_params, compare.json records them as JSON numbers, and bad values are refused
before any work. Real lab fixtures: stock 6.1, 4 KiB random reads at qd 1, base vs 2 ms netem
delay on the target's egress (end_to_end mean 7067 -> 11483 us: +4416 us, LAD 1.62)."""
import json
import os

import pytest

from ntscope.sql import compare_sides as load

BASE, RUN = "lab-6.1-stock-base-randread", "lab-6.1-stock-cmp-slow-net-delay-target"
# Student's t, two-sided, as printed in the tables (3 decimals): df -> t
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 10: 2.228, 20: 2.086, 30: 2.042, 120: 1.980}
T99 = {1: 63.657, 2: 9.925, 3: 5.841, 4: 4.604, 5: 4.032, 10: 3.169, 20: 2.845, 30: 2.750, 120: 2.617}
T999 = {1: 636.619, 2: 31.599, 5: 6.869, 10: 4.587, 30: 3.646}


@pytest.fixture(scope="module")
def sides(fixture_run):
    return fixture_run(BASE), fixture_run(RUN)


@pytest.fixture(scope="module")
def compare(sides, ntscope_cli, tmp_path_factory):
    def run(*flags, expect=0):
        out = str(tmp_path_factory.mktemp("compare"))
        r = ntscope_cli("compare", *sides, "--quiet", "--no-cache", "--out", out, *flags)
        assert r.returncode == expect, r.stderr
        if expect:
            return r, out
        return json.load(open(os.path.join(out, "compare.json"))), open(os.path.join(out, "compare.txt")).read()
    return run


@pytest.fixture(scope="module")
def default(compare):
    return compare()


def test_params_are_json_numbers(default):
    doc, _ = default
    p = doc["params"]
    assert p == {"resamples": 200, "seed": 42, "max_draws": 4000, "bootstrap_batch_draws": 4000000,
                 "min_rel_change": 0.1, "min_abs_change_ns": 20000, "cpu_wait_min_ratio": None,
                 "cpu_wait_min_share": 0.5, "nic_other_min_share": 0.1, "confidence": 0.95,
                 "group_by": ["type", "size"]}
    for k, v in p.items():
        assert v is None or type(v) in (int, float) or k == "group_by", (k, v)


def mean_rows(doc):
    return {r["stage"]: r for r in doc["lad"] if r["statistic"] == "mean"}


def test_flags_feed_the_params_the_intervals_and_the_report(default, compare):
    doc95, _ = compare("--resamples", "1000")
    doc99, text = compare("--resamples", "1000", "--confidence", "99%")
    assert doc99["params"]["confidence"] == 0.99 and doc99["params"]["resamples"] == 1000
    assert doc95["params"]["confidence"] == 0.95
    assert "99% bootstrap CIs, 1000 resamples, seed 42" in text and "change us [99% CI]" in text
    v = doc99["verdicts"][0]
    assert v["verdict"] == "slower" and "(99% CI " in v["evidence"]
    # the same resamples (seed 42): the 99% interval holds the 95% one, and is wider somewhere
    a, b = mean_rows(doc95), mean_rows(doc99)
    assert a.keys() == b.keys()
    for stage in a:
        assert b[stage]["change_lo_ns"] <= a[stage]["change_lo_ns"] <= a[stage]["change_hi_ns"] <= b[stage]["change_hi_ns"]
    e2e = "end_to_end"
    assert b[e2e]["change_hi_ns"] - b[e2e]["change_lo_ns"] > 1.1 * (a[e2e]["change_hi_ns"] - a[e2e]["change_lo_ns"])
    # the point values do not depend on the interval's level
    assert b[e2e]["change_ns"] == a[e2e]["change_ns"] == mean_rows(default[0])[e2e]["change_ns"]


def test_the_change_thresholds_decide_significance(compare):
    # +4416 us of 7067 us is 62%: a floor of 70% (or of 5 ms) makes it no significant change
    for flags in (["--min-rel-change", "0.7"], ["--min-abs-change", "5ms"]):
        doc, text = compare(*flags)
        assert doc["verdicts"][0]["verdict"] == "no significant change", flags
        assert not mean_rows(doc)["end_to_end"]["significant"]
    doc, text = compare("--min-rel-change", "60%", "--min-abs-change", "4.4ms", "--seed", "7")
    assert doc["params"]["min_rel_change"] == 0.6 and doc["params"]["min_abs_change_ns"] == 4400000
    assert doc["params"]["seed"] == 7
    assert doc["verdicts"][0]["verdict"] == "slower"
    assert ">= 60% and >= 4400 us" in text


@pytest.mark.parametrize("level,table", [(0.95, T95), (0.99, T99), (0.999, T999)])
def test_t_quantiles_are_the_printed_tables(sides, level, table):
    con = load.compare_connection(*sides, cache=True, params={"confidence": level, "resamples": 10000})
    try:
        got = dict(con.execute("SELECT df, t FROM cmp_t_quantile").fetchall())
    finally:
        con.close()
    assert sorted(got) == list(range(1, 201))
    for df, t in table.items():
        assert round(got[df], 3) == t, (level, df, got[df])


@pytest.mark.parametrize("flags,message", [
    (["--confidence", "95"], "--confidence '95' is 95 (as a fraction: 0.95?), outside 0.5..0.999"),
    (["--confidence", "0.99"], "a 99% interval from 200 resamples has 1 resamples beyond each end (at least 5 make "
                               "an end more than the most extreme draw); fix: --resamples 1000 or more"),
    (["--resamples", "10"], "--resamples '10' is not a whole number from 50 to 100,000"),
    (["--resamples", "2e3"], "--resamples '2e3' is not a whole number from 50 to 100,000"),
    (["--min-abs-change", "50"], "--min-abs-change '50' is not a duration (it needs a unit: ns, us, ms or s); "
                                 "fix: e.g. --min-abs-change 50us"),
    (["--min-rel-change", "twenty"], "--min-rel-change 'twenty' is not a fraction or a percentage; fix: e.g."),
    (["--min-rel-change", "20"], "--min-rel-change '20' is 20, above 10"),
    (["--seed", "-1"], "--seed '-1' is not a whole number from 0 to 2147483647"),
])
def test_bad_values_are_refused_before_any_work(compare, flags, message):
    r, out = compare(*flags, expect=2)
    assert message in r.stderr and "fix:" in r.stderr and "Traceback" not in r.stderr
    assert os.listdir(out) == []
