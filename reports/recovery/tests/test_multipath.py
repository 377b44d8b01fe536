"""Paths of native multipath on the lab fixtures (capture/scenarios/multipath-*.sh): one
namespace (nvme0n1) over two controllers, nvme0 via 169.254.10.2 (path A) and nvme1 via
169.254.11.2 (path B). Known answers: fio's I/O count, the 5 ms delay injected on path B
(lab-6.1-patched-multipath-delay, round-robin), and the instant the target made path A
inaccessible (lab-6.1-patched-multipath-ana: a trace_marker line in the target's trace)."""
import json
import os
import statistics

import pyarrow.parquet as pq

DELAY, ANA, ONE_PATH = "lab-6.1-patched-multipath-delay", "lab-6.1-patched-multipath-ana", "lab-6.1-patched-link-flap-base"
A, B = "initiator/nvme0@169.254.10.2:4420", "initiator/nvme1@169.254.11.2:4420"


def fio_ios(run):
    with open(os.path.join(run, "initiator", "fio-randread.json")) as f:
        return sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in json.load(f)["jobs"])


def io_rows(run, *columns):
    return pq.read_table(os.path.join(run, "report", "io.parquet"), columns=list(columns)).to_pylist()


def test_each_io_carries_its_path_and_the_namespace_device(analyzed_recovery):
    """Round-robin: half of fio's I/Os on each path, every one on nvme0n1 (not the paths' hidden
    disks nvme0c0n1 / nvme0c1n1), its bio's queueing found across the multipath remap."""
    run, doc, _ = analyzed_recovery(DELAY)
    rows = io_rows(run, "path", "disk", "ana_grpid", "ana_state", "i:block_bio_queue")
    assert len(rows) == fio_ios(run) == 1686
    assert {r["disk"] for r in rows} == {"nvme0n1"}
    assert sum(r["path"] == A for r in rows) == sum(r["path"] == B for r in rows) == 843
    assert all(r["i:block_bio_queue"] is not None for r in rows)
    assert {(r["ana_grpid"], r["ana_state"]) for r in rows} == {(1, "optimized")}
    assert [(p["path"], p["ios"], p["share"], p["ana_state_start"], p["ana_state_end"]) for p in doc["paths"]] == \
        [(A, 843, 0.5, "optimized", "optimized"), (B, 843, 0.5, "optimized", "optimized")]
    assert doc["path_events"] == []


def test_the_delayed_path_shows_the_delay_in_its_network_stage(analyzed_recovery):
    """The 5 ms injected on path B's initiator egress (+- 20%): in its submission-direction
    network stage at the 10th percentile (5.18 ms over A's; the median, 5.62, carries the TCG
    timers' lateness too), and both ways in network_transmission's median (5.84 ms)."""
    run, _, _ = analyzed_recovery(DELAY)
    path = {r["io_id"]: r["path"] for r in io_rows(run, "io_id", "path")}
    dur = {(s, p): [] for s in ("nstack_submission", "network_transmission") for p in (A, B)}
    for r in pq.read_table(os.path.join(run, "report", "io_stages.parquet")).to_pylist():
        if r["stage_set"] == "ntprof" and r["stage"] in ("nstack_submission", "network_transmission"):
            dur[(r["stage"], path[r["io_id"]])].append(r["dur"])
    p10 = lambda v: statistics.quantiles(v, n=10)[0]
    extra_ms = (p10(dur[("nstack_submission", B)]) - p10(dur[("nstack_submission", A)])) / 1e6
    assert 4.0 <= extra_ms <= 6.0, extra_ms
    median_ms = (statistics.median(dur[("network_transmission", B)]) - statistics.median(dur[("network_transmission", A)])) / 1e6
    assert 4.0 <= median_ms <= 6.0, median_ms


def test_an_ana_change_moves_the_io_to_the_other_path(analyzed_recovery):
    """Path A alone, then B alone from the target's change on; A's ANA change notice 0-200 ms
    after the change (the target's marker on the run's clock); the 4 commands A refused with
    0x302 are attempts of I/Os B completed: the I/O count is fio's."""
    run, doc, stdout = analyzed_recovery(ANA)
    rows = io_rows(run, "path", "ana_state", "i:nvme_setup_cmd", "offset_ns", "attempts")
    assert len(rows) == fio_ios(run) == 4314
    marks = [r["ts"] for r in pq.read_table(os.path.join(run, "target", "parquet", "ftrace", "print.parquet")).to_pylist()
             if "ana port 1 inaccessible" in r["buf"]]
    mark = marks[0] - statistics.median(r["offset_ns"] for r in rows)
    pa, pb = doc["paths"]
    assert (pa["path"], pa["ana_state_start"], pa["ana_state_end"], pa["ana_notices"]) == (A, "optimized", "inaccessible", 1)
    assert (pb["path"], pb["ana_state_start"], pb["ana_state_end"], pb["ana_notices"]) == (B, "optimized", "optimized", 0)
    assert pa["ios"] + pb["ios"] == len(rows)
    ev = {e["event"]: e for e in doc["path_events"]}
    assert set(ev) == {"ana_change", "path_left", "path_joined"}
    assert (ev["ana_change"]["path"], ev["ana_change"]["state_after"]) == (A, "inaccessible")
    assert 0 <= ev["ana_change"]["ts"] - mark <= 200e6
    assert (ev["path_left"]["path"], ev["path_joined"]["path"]) == (A, B)
    assert abs(ev["path_left"]["ts"] - mark) <= 200e6 and abs(ev["path_joined"]["ts"] - mark) <= 200e6
    # path_events.parquet: the same rows, in the same order
    assert pq.read_table(os.path.join(run, "report", doc["outputs"]["path_events"])).to_pylist() == doc["path_events"]
    assert all(r["path"] == A for r in rows if r["i:nvme_setup_cmd"] < mark - 200e6)
    assert all(r["path"] == B for r in rows if r["i:nvme_setup_cmd"] > mark + 200e6)
    # each I/O's ANA state at submission: before A's notice, its start state; after, its end state
    assert {r["ana_state"] for r in rows if r["path"] == A and r["i:nvme_setup_cmd"] < ev["ana_change"]["ts"]} == {"optimized"}
    assert {r["ana_state"] for r in rows if r["path"] == B} == {"optimized"}
    (e,) = doc["errors"]
    assert (e["status"], e["commands"], e["retried"], e["failed"]) == (0x302, 4, 4, 0)
    assert sum(r["attempts"] - 1 for r in rows) == 4
    assert "path_left" in stdout and "ANA group 1 optimized -> inaccessible" in stdout


def test_one_path_without_multipath_has_no_ana_and_no_path_event(analyzed_recovery):
    run, doc, _ = analyzed_recovery(ONE_PATH)
    assert [(p["path"], p["ana_grpid"], p["ana_state_start"]) for p in doc["paths"]] == \
        [("initiator/nvme0@169.254.10.2:4420", None, None)]
    assert doc["path_events"] == []
    assert pq.read_table(os.path.join(run, "report", "path_events.parquet")).num_rows == 0
    assert {r["ana_state"] for r in io_rows(run, "ana_state")} == {None}
