"""--slo objectives on a real capture (fixtures/stock-randread-4k-qd8: 6389 reads): the
judged statistic is the report's own (same nearest-rank percentile), per second as well,
and the worst I/Os are the slowest ones with their stages."""
import json
import os

import pytest

from ntscope.reports.slo import objectives as slo
from ntscope.reports.report.spec import SpecError
from ntscope.sql import views


@pytest.fixture(scope="module")
def judged(fixture_run, ntscope_cli):
    run = fixture_run("stock-randread-4k-qd8")
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--out", os.path.join(run, "slo-report"),
                    "--slo", "read,4k: p99 <= 20ms", "--slo", "read: target_device p90 < 5us",
                    "--slo", "write: p50 <= 1ms", "--slo", "4k-8k: mean <= 1s")
    assert r.returncode == 0, r.stderr
    doc = json.load(open(os.path.join(run, "slo-report", "report.json")))
    text = open(os.path.join(run, "slo-report", "report.txt")).read()
    return run, doc, text


def stage(doc, name):
    (g,) = doc["groups"]
    (s,) = [s for s in g["stages"] if s["stage"] == name and s["stage_set"] == "stock"]
    return s


def test_objectives_use_the_reports_own_statistics(judged):
    _, doc, text = judged
    o = {x["slo_id"]: x for x in doc["slo"]["objectives"]}
    assert o[1]["ios"] == 6389 and o[1]["value_ns"] == stage(doc, "end_to_end")["p99_ns"] and o[1]["met"]
    assert o[2]["value_ns"] == stage(doc, "target_device")["p90_ns"] and o[2]["met"] is False
    assert o[2]["limit_ns"] == 4999          # '< 5us' on integer ns
    assert o[3]["ios"] == 0 and o[3]["met"] is None                  # no writes in this run
    assert o[4]["value_ns"] == stage(doc, "end_to_end")["mean_ns"] and o[4]["met"]
    assert "MET     read,4k: p99 <= 20ms" in text and "MISSED  read: target_device p90 < 5us" in text
    assert "NO DATA  write: p50 <= 1ms" in text


def test_per_second_values_are_each_seconds_percentile(judged):
    run, doc, _ = judged
    per = [p for p in doc["slo"]["per_second"] if p["slo_id"] == 1]
    # the same thing computed another way: quantile_disc per second over the stage rows
    vc = views.connect(run)
    want = dict(vc.execute("""
        WITH t0 AS (SELECT min(coalesce(i_bio_queue_ts, i_setup_ts)) AS t FROM io)
        SELECT (i.i_setup_ts - t0.t) // 1000000000 AS second, quantile_disc(s.dur, 0.99)
        FROM io i JOIN io_stages s USING (io_id), t0
        WHERE s.stage_set = 'stock' AND s.stage = 'end_to_end' AND s.dur IS NOT NULL GROUP BY 1""").fetchall())
    assert {p["second"]: p["value_ns"] for p in per} == want
    o = [x for x in doc["slo"]["objectives"] if x["slo_id"] == 1][0]
    assert o["seconds"] == len(want) and o["seconds_missed"] == sum(v > o["limit_ns"] for v in want.values())
    assert o["worst_value_ns"] == max(want.values())


def test_worst_ios_are_the_slowest_with_their_stages(judged):
    _, doc, text = judged
    w = [x for x in doc["slo"]["worst_ios"] if x["slo_id"] == 1]
    assert [x["rank"] for x in w] == list(range(1, 11))
    assert w[0]["dur_ns"] == stage(doc, "end_to_end")["max_ns"]
    assert all(a["dur_ns"] >= b["dur_ns"] for a, b in zip(w, w[1:]))
    # top-level stock stages tile end_to_end
    assert [s["stage"] for s in w[0]["stages"]] == ["host_queue", "fabric_total", "target_exec", "host_completion"]
    assert sum(s["dur_ns"] for s in w[0]["stages"]) == w[0]["dur_ns"]
    assert w[0]["queue_key"].startswith("initiator/c0/q") and f"#1 io {w[0]['io_id']} at " in text
    # the value printed is labelled with the objective's stage, then the stages that make it
    line = next(l for l in text.splitlines() if f"#1 io {w[0]['io_id']} at " in l)
    assert f": end_to_end {w[0]['dur_ns'] / 1e3:.0f} us; its top-level stages (us): host_queue=" in line, line


@pytest.mark.parametrize("bad, message", [
    ("read p99 2ms", "is not '[SELECTOR:] [STAGE] STATISTIC <= LIMIT'"),
    ("read: p99 <= 2", "objective 'read: p99 <= 2': the bound 2 has no unit"),
    ("read: nvme_magic p99 <= 2ms", "no stage 'nvme_magic' in stage set 'stock'"),
    ("read: p100 <= 2ms", "percentile p100 is not between p0 and p100"),
    ("huge: p99 <= 2ms", "size 'huge' is not a size"),
])
def test_bad_objectives_are_clear_errors(bad, message):
    with pytest.raises(SpecError, match=message.replace("[", r"\[").replace("]", r"\]")):
        slo.parse(bad, 1, "stock", {("stock", "end_to_end"), ("stock", "target_device")})


def test_a_bad_objective_exits_2(judged, ntscope_cli):
    run, _, _ = judged
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--out", os.path.join(run, "x"),
                    "--slo", "read: p99 <= soon")
    assert r.returncode == 2 and "fix: e.g. --slo" in r.stderr
