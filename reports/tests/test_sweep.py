"""A run series (python -m ntscope sweep) on real patched captures of the same 4 KiB random
read at iodepth 1 and 16: ordered by the parameter their truth.json holds, stage means
equal each run's own report, LAD against the first point."""
import json
import os

import pytest

QD1, QD16 = "lab-6.1-patched-base-randread", "lab-6.1-patched-few-queues-1job"


@pytest.fixture(scope="module")
def swept(fixture_run, ntscope_cli, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("sweep"))
    runs = [fixture_run(QD16), fixture_run(QD1)]            # given out of order on purpose
    r = ntscope_cli("sweep", *runs, "--param", "iodepth", "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    return runs, out, json.load(open(os.path.join(out, "sweep.json")))


def test_runs_are_ordered_by_the_parameter(swept):
    runs, _, doc = swept
    assert [(r["label"], r["param_value"]) for r in doc["runs"]] == [("iodepth=1", 1.0), ("iodepth=16", 16.0)]
    assert [r["run_dir"] for r in doc["runs"]] == [runs[1], runs[0]]
    assert doc["stage_set"] == "ntprof"


def test_points_are_each_runs_own_report(swept, ntscope_cli):
    runs, _, doc = swept
    for r in doc["runs"]:
        rep = ntscope_cli("analyze", r["run_dir"], "--quiet", "--no-interference", "--out",
                          os.path.join(r["run_dir"], "own"))
        assert rep.returncode == 0, rep.stderr
        own = json.load(open(os.path.join(r["run_dir"], "own", "report.json")))
        (g,) = own["groups"]
        want = {s["stage"]: s["mean_ns"] for s in g["stages"] if s["stage_set"] == "ntprof"}
        got = {p["stage"]: p["mean_ns"] for p in doc["points"] if p["run_idx"] == r["run_idx"]}
        assert got == want
        (e2e,) = [p for p in doc["points"] if p["run_idx"] == r["run_idx"] and p["stage"] == "end_to_end"]
        assert e2e["count"] == g["count"] and abs(e2e["iops"] - g["iops"]) < 1e-6


def test_lad_is_against_the_first_point(swept):
    _, _, doc = swept
    by = {(p["stage"], p["run_idx"]): p for p in doc["points"]}
    for (stage, idx), p in by.items():
        first = by[(stage, 0)]
        if first["mean_ns"]:
            assert p["lad_mean"] == pytest.approx(p["mean_ns"] / first["mean_ns"])
        else:
            assert p["lad_mean"] is None
    (amp,) = doc["most_amplified"]
    top = max((p for p in doc["points"] if p["run_idx"] == 1 and p["stage"] != "end_to_end" and p["lad_mean"]),
              key=lambda p: p["lad_mean"])
    assert amp["stage"] == top["stage"] and amp["lad_mean"] == pytest.approx(top["lad_mean"])


def test_pages(swept):
    _, out, doc = swept
    text = open(os.path.join(out, "sweep.txt")).read()
    assert "iodepth=1" in text and "most amplified: " + doc["most_amplified"][0]["stage"] in text
    page = open(os.path.join(out, "sweep.html")).read()
    assert page.count("data-kind='breakdown'") == 1 and page.count("data-kind='lad_lines'") == 1
    assert "http://" not in page.replace("http://www.w3.org", "")


def test_a_sweep_needs_values_for_runs_without_truth(fixture_run, ntscope_cli, tmp_path):
    r = ntscope_cli("sweep", fixture_run("stock-randread-4k-qd8"), fixture_run("lab-6.1-stock-base-randread"),
                    "--param", "iodepth", "--out", str(tmp_path))
    assert r.returncode == 2 and "has no truth.json" in r.stderr and "--values" in r.stderr
    r = ntscope_cli("sweep", fixture_run("stock-randread-4k-qd8"), fixture_run("lab-6.1-stock-base-randread"),
                    "--values", "8,1", "--out", str(tmp_path), "--quiet")
    assert r.returncode == 0, r.stderr
    doc = json.load(open(tmp_path / "sweep.json"))
    assert [r["label"] for r in doc["runs"]] == ["value=1", "value=8"]
