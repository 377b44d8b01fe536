"""The verdict on every compare case of real lab fixtures agrees with the run's truth.json,
by the same rule the live lab applies (capture/lab/check_diagnosis.py truth_problems): the
cause id, the direction, and the expected stage as bottleneck, detail or most amplified.
A truth.json that expects what neither the paper nor the lab shows fails here, offline,
before the 25-minute lab does."""
import importlib.util
import json
import os

import pytest

from ntscope.sql import compare_sides as compare_load

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
            yield pytest.param(spec["base"], spec["run"], spec.get("truth_groups"), spec.get("hosts"), id=case)


@pytest.mark.parametrize("base,run,groups,hosts", list(fixture_pairs()))
def test_verdict_agrees_with_truth(base, run, groups, hosts, fixture_run):
    rule = check_diagnosis()
    with open(os.path.join(REPO, "fixtures", run, "truth.json")) as f:
        truth = json.load(f)
    con = compare_load.compare_connection(fixture_run(base, hosts=hosts), fixture_run(run, hosts=hosts), cache=True)
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



# The verdict row of the CI lab run where one queue came out faster (2026-11-23): the verdict's
# stages are the ones that shrank most; nvme_tcp_completion grew 71x, nvme_tcp_submission 7.8x.
FASTER_ONE_QUEUE = {"verdict": "faster", "cause_id": "few_queues", "direction": "unknown",
                    "bottleneck_stage": "network_transmission", "detail_stage": "nstack_submission",
                    "amplified_stage": "nstack_submission"}


# Its twin where the target's completion work shrank most (CI lab, 2026-11-25, two pairs).
FASTER_TARGET_CPU = {"verdict": "faster", "cause_id": "target_cpu", "direction": None,
                     "bottleneck_stage": "nvmet_tcp_completion", "detail_stage": None,
                     "amplified_stage": "nvmet_tcp_completion"}


@pytest.mark.parametrize("verdict,grew,problem,row", [
    ("faster", {"nvme_tcp_completion", "nvme_tcp_submission"}, None, FASTER_ONE_QUEUE),
    ("faster", {"nvme_tcp_submission"}, "nvme_tcp_completion (truth.json, ntprof) did not grow significantly",
     FASTER_ONE_QUEUE),
    ("faster", None, "nvme_tcp_completion (truth.json, ntprof) is neither the bottleneck", FASTER_ONE_QUEUE),
    ("slower", {"nvme_tcp_completion"}, "nvme_tcp_completion (truth.json, ntprof) is neither the bottleneck",
     FASTER_ONE_QUEUE),
    # the CI lab pairs of 2026-11-25 where the target's completion work shrank most: the faster
    # verdict's cause is then target_cpu; the queue's signature (what grew) is what must hold
    ("faster", {"nvme_tcp_completion", "nvme_tcp_submission"}, None, FASTER_TARGET_CPU),
    ("faster", {"nvme_tcp_submission"}, "nvme_tcp_completion (truth.json, ntprof) did not grow significantly",
     FASTER_TARGET_CPU),
    ("slower", {"nvme_tcp_completion"}, "cause_id is not few_queues",
     dict(FASTER_TARGET_CPU, amplified_stage="nvme_tcp_completion")),
])
def test_truth_stage_of_a_faster_verdict_is_one_that_grew(verdict, grew, problem, row):
    """Under TCG one queue for two CPUs sometimes makes the run faster end to end while its
    queue stages still grow: the expected stage must then have grown, not shrunk most, and the
    verdict's cause (what shrank most) is not the injected one; a slower verdict must still
    name both."""
    rule = check_diagnosis()
    with open(os.path.join(REPO, "fixtures", "lab-6.1-patched-fs-ext4-one-queue", "truth.json")) as f:
        truth = json.load(f)
    problems = rule.truth_problems(dict(row, verdict=verdict), "ntprof", truth, grew)
    if problem is None:
        assert problems == []
    else:
        assert len(problems) == 1 and problems[0].startswith(problem), problems


@pytest.mark.parametrize("verdict,cause_id,none_ok,ok", [
    ("no significant change", "none", True, True),       # too mild to stand out: nothing named, right
    ("no significant change", "none", False, False),
    ("slower", "slow_network", True, False),              # slower: the shared link must be named
    ("slower", "nic_contention", True, True),
    ("no significant change", "slow_network", True, False),   # a wrong name is wrong at any size
])
def test_none_ok_accepts_only_a_verdict_that_names_nothing(tmp_path, verdict, cause_id, none_ok, ok):
    # check_diagnosis compare --none-ok (the mild live NIC-contention check): a compare.json with
    # one verdict row, the truth.json of the recorded mild stream
    import argparse
    import shutil
    rule = check_diagnosis()
    run = tmp_path / "run"
    (run / "report").mkdir(parents=True)
    shutil.copy(os.path.join(REPO, "fixtures", "lab-6.1-patched-nic-flows-mild", "truth.json"), run / "truth.json")
    v = {"group_key": "type=read, size=4096", "verdict": verdict, "cause_id": cause_id,
         "direction": "unknown" if cause_id != "none" else None, "bottleneck_stage": "network_transmission",
         "detail_stage": None, "amplified_stage": None}
    with open(run / "report" / "compare.json", "w") as f:
        json.dump({"stage_set": "ntprof", "verdicts": [v], "lad": []}, f)
    a = argparse.Namespace(run_dir=str(run), group=None, verdicts="slower,no significant change", none_ok=none_ok,
                           stage=None, change_us=None, within="0.7,1.3", amplified=None, min_lad=2.0)
    assert rule.check_compare(a)[0] is ok
