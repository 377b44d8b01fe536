"""A run whose target was not traced, recorded with the capture key nvme_acks: the report leads
with the initiator_only set (the time between command and completion split at the target's TCP
ACK) and says it is an estimate; with both hosts, it says how far the estimate is from the
target's own stages. Known answers from the fixture's numbers (sql/core/nvme_acks.sql and the
diff tests in sql/compare/tests/cases/acks_traced_slow_device)."""
import json
import os

import pytest

from ntscope.sql import views

FIXTURE = "lab-6.1-patched-acks-slow-device"   # 4 KiB reads qd 4, null_blk 2 ms, nvme_acks


@pytest.fixture(scope="module")
def analyzed(fixture_run, ntscope_cli):
    """The fixture with its initiator folder alone, and with both hosts, each analyzed."""
    out = {}
    for name, hosts in (("alone", ["initiator"]), ("both", None)):
        run = fixture_run(FIXTURE, hosts=hosts)
        r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
        assert r.returncode == 0, r.stderr
        with open(os.path.join(run, "report", "report.json")) as f:
            doc = json.load(f)
        with open(os.path.join(run, "report", "report.txt")) as f:
            out[name] = (run, doc, f.read())
    return out


def test_without_the_target_the_initiator_only_set_leads(analyzed):
    _, doc, text = analyzed["alone"]
    assert doc["primary_stage_set"] == "initiator_only"
    assert doc["stage_sets"] == ["initiator_only"]   # the sets cut at target events are dropped
    (g,) = doc["groups"]
    stages = {s["stage"]: s for s in g["stages"]}
    assert list(stages) == ["end_to_end", "host_queue", "est_round_trip", "est_target_side", "est_response",
                            "host_receive", "host_completion"]
    assert stages["est_target_side"]["count"] == 1959 and stages["end_to_end"]["count"] == 2115
    # 4 KiB responses: one segment each, nothing on the wire ahead (no path rate: no response
    # of more than 16 KiB)
    assert stages["est_response"]["max_ns"] == 0
    # the slow device's 2 ms is in the target side, not in the round trip
    assert 2.0e6 < stages["est_target_side"]["mean_ns"] < 3.5e6
    assert stages["est_round_trip"]["mean_ns"] < stages["est_target_side"]["mean_ns"]
    words = " ".join(text.split())
    assert "TARGET NOT TRACED" in words and "1959 of 2115 I/Os split" in words
    assert g["unmeasured"] == []          # no "not measured" block: the middle is estimated
    assert doc["initiator_only_check"] == []
    stats = {s["name"]: s for s in doc["pipeline_stats"]}
    assert stats["matched_pct"]["severity"] == "info"   # no target by design: not a warning
    # the timeline draws the primary set: its estimated stages are slices there too
    run, _, _ = analyzed["alone"]
    with open(os.path.join(run, "report", "timeline.perfetto-trace"), "rb") as f:
        trace = f.read()
    assert b"est_round_trip" in trace and b"est_target_side" in trace and b"target_subsystem" not in trace


def test_with_both_hosts_the_estimate_is_held_to_the_target(analyzed):
    run, doc, text = analyzed["both"]
    assert doc["primary_stage_set"] == "ntprof"
    assert "initiator_only" in doc["stage_sets"]
    check = {r["stage"]: r for r in doc["initiator_only_check"]}
    assert set(check) == {"est_round_trip", "est_target_side"}
    t = check["est_target_side"]
    assert (t["ios"], t["ios_total"]) == (1959, 2115)
    assert t["measured_as"] == "nvmet_tcp_submission + target_subsystem + nvmet_tcp_completion"
    assert round(t["within_share"], 3) == 0.298
    assert round(t["est_mean_ns"] / 1e3) == 2623 and round(t["measured_mean_ns"] / 1e3) == 2695
    # the two estimates tile the same span as the measured parts: equal and opposite errors
    assert check["est_round_trip"]["median_abs_diff_ns"] == t["median_abs_diff_ns"]
    assert "initiator-only estimates against the traced target" in text
    assert "est_target_side  1959 of 2115 I/Os: within max(10%, 50 us) 29.8%" in text
    # the report's rows are the view's
    con = views.connect(run)
    assert con.execute("SELECT within_share FROM initiator_only_check WHERE stage = 'est_target_side'").fetchone()[0] \
        == pytest.approx(t["within_share"])
