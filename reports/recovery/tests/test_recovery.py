"""Errors and recovery on the lab fixture lab-6.1-patched-link-flap (capture/scenarios/link-flap.sh):
4 KiB random reads at iodepth 4 while the initiator's only path loses every packet for 8 s under
a 5 s I/O timeout; its base lab-6.1-patched-link-flap-base is the same workload without the
loss. Known answers: fio's I/O count (fio-randread.json), the instants the scenario took the
link down and up (trace_marker lines in the trace), the I/O timeout and reconnect delay
(truth.json)."""
import json
import os
import subprocess
import sys

import pyarrow.parquet as pq

from ntscope.common.json_schema import problems

FIXTURE, BASE = "lab-6.1-patched-link-flap", "lab-6.1-patched-link-flap-base"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def fio_ios(run):
    with open(os.path.join(run, "initiator", "fio-randread.json")) as f:
        return sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in json.load(f)["jobs"])


def doc_of(run, name):
    with open(os.path.join(run, "report", name)) as f:
        return json.load(f)


def test_an_outage_is_found_with_its_phases_and_every_io_counted_once(analyzed_recovery):
    """One outage of nvme0; the 4 commands in flight cancelled with 0x371 and each sent again;
    the I/O count is fio's (the attempts are not I/Os of their own); report.json counts the same."""
    run, doc, stdout = analyzed_recovery(FIXTURE)
    (o,) = doc["outages"]
    assert (o["ctrl_id"], o["kind"], o["cancelled"], o["ios_held"], o["reconnect_attempts"]) == (0, "error_recovery", 4, 4, 1)
    assert o["last_answer_ts"] < o["detected_ts"] < o["recovered_ts"] and o["first_answer_ts"] > o["detected_ts"]
    assert o["outage_ns"] == o["first_answer_ts"] - o["last_answer_ts"]
    (e,) = doc["errors"]
    assert (e["status"], e["commands"], e["retried"], e["failed"]) == (0x371, 4, 4, 0)
    assert e["status_text"].startswith("aborted by the host")
    (r,) = doc["retried_ios"]
    assert (r["ios"], r["retried"], r["failed_attempts"]) == (fio_ios(run), 4, 4)
    assert 0 < r["lost_max_ns"] <= o["outage_ns"] and r["lost_ns"] <= 4 * r["lost_max_ns"]
    assert sum(g["count"] for g in doc_of(run, "report.json")["groups"]) == fio_ios(run)
    rows = pq.read_table(os.path.join(run, "report", "outages.parquet")).to_pylist()
    assert [(x["outage_n"], x["outage_ns"]) for x in rows] == [(1, o["outage_ns"])]
    assert "== errors and recovery" in stdout and f"no answer for {o['outage_ns'] / 1e9:.3f} s" in stdout


def test_the_lab_check_passes_on_the_fixture(analyzed_recovery):
    """capture/lab/check_recovery.py (the outage against the link's down and up instants, the
    I/O timeout, the reconnect delay; fio's count) on the recorded run."""
    run, _, _ = analyzed_recovery(FIXTURE)
    r = subprocess.run([sys.executable, os.path.join(REPO, "capture", "lab", "check_recovery.py"), run],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FAIL" not in r.stdout and "all recovery checks passed" in r.stdout


def test_the_base_has_no_outage_and_the_documents_match_their_schema(analyzed_recovery):
    run, doc, stdout = analyzed_recovery(BASE)
    assert doc["outages"] == [] and doc["errors"] == []
    (r,) = doc["retried_ios"]
    assert (r["ios"], r["retried"], r["lost_max_ns"]) == (fio_ios(run), 0, None)
    assert [(x["host"], x["asked"], x["why_not"]) for x in doc["recorded"]] == [("initiator", True, None)]
    assert "nvme_tcp_error_recovery_work" in doc["recorded"][0]["works"]
    assert "== errors and recovery" not in stdout   # nothing went wrong: the part prints nothing
    with open(os.path.join(REPO, "reports", "schemas", "recovery.schema.json")) as f:
        schema = json.load(f)
    assert problems(doc, schema) == [] and problems(analyzed_recovery(FIXTURE)[1], schema) == []


def test_a_capture_without_the_recovery_key_says_so(fixture_run, ntscope_cli):
    """A run recorded before the capture key existed: nothing recorded, said so, no outage."""
    run = fixture_run("lab-6.1-patched-nic-flows")
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
    assert r.returncode == 0, r.stderr
    doc = doc_of(run, "recovery.json")
    assert [(x["asked"], x["why_not"]) for x in doc["recorded"]] == [(False, "not asked")]
    assert doc["outages"] == [] and doc["errors"] == []
    with open(os.path.join(run, "report", "recovery.txt")) as f:
        assert "recovery works not recorded (not asked" in f.read()
