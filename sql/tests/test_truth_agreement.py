"""The verdict on every compare case of real lab fixtures agrees with the run's truth.json,
by the same rule the live lab applies (capture/lab/check_diagnosis.py truth_problems): the
cause id, the direction, and the expected stage as bottleneck, detail or most amplified.
A truth.json that expects what neither the paper nor the lab shows fails here, offline,
before the 25-minute lab does."""
import importlib.util
import json
import os

import pytest

from ntscope.compare import load as compare_load

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = os.path.join(REPO, "sql", "compare", "tests", "cases")


def check_diagnosis():
    spec = importlib.util.spec_from_file_location(
        "check_diagnosis", os.path.join(REPO, "capture", "lab", "check_diagnosis.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fixture_pairs():
    for case in sorted(os.listdir(CASES)):
        with open(os.path.join(CASES, case, "case.json")) as f:
            spec = json.load(f)
        if "base" in spec and not spec["base"].startswith("/"):
            yield pytest.param(spec["base"], spec["run"], spec.get("truth_groups"), id=case)


@pytest.mark.parametrize("base,run,groups", list(fixture_pairs()))
def test_verdict_agrees_with_truth(base, run, groups, fixture_run):
    rule = check_diagnosis()
    with open(os.path.join(REPO, "fixtures", run, "truth.json")) as f:
        truth = json.load(f)
    con = compare_load.compare_connection(fixture_run(base), fixture_run(run))
    try:
        cur = con.execute("SELECT * FROM cmp_verdict ORDER BY group_key")
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r)) for r in cur.fetchall()]
    finally:
        con.close()
    if groups:  # the case names the groups its truth is about (a file system: dozens of sizes)
        assert {v["group_key"] for v in rows} >= set(groups), (run, groups)
        rows = [v for v in rows if v["group_key"] in groups]
    assert rows, f"{run}: no verdict rows"
    for v in rows:
        assert rule.truth_problems(v, v["stage_set"], truth) == [], (run, v["group_key"], v["cause_id"],
                                                               v["bottleneck_stage"], v["detail_stage"],
                                                               v.get("amplified_stage"))
