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


# ------------------------------------------------------------------ one value twice, long labels, where it goes
SAME_VALUE = ["lab-6.1-stock-base-randread", "lab-6.1-stock-slow-device", "lab-6.1-stock-cmp-slow-net-delay-target"]


def chart_specs(page):
    """The Vega-Lite specs the page embeds."""
    return json.loads(page.split("<script id='ntscope-specs' type='application/json'>", 1)[1].split("</script>", 1)[0])


@pytest.fixture(scope="module")
def same_value(fixture_run, ntscope_cli):
    base, dev, net = (fixture_run(n) for n in SAME_VALUE)
    r = ntscope_cli("sweep", base, dev, net, "--param", "nullblk_us", "--values", "0,300,0")
    assert r.returncode == 0, r.stderr
    out = os.path.join(net, "report")
    return (base, dev, net), r, out, json.load(open(os.path.join(out, "sweep.json")))


def test_runs_of_one_value_keep_their_own_labels_and_bars(same_value):
    (base, dev, net), _, out, doc = same_value
    b, n = os.path.basename(base), os.path.basename(net)
    assert [(r["label"], r["run_dir"]) for r in doc["runs"]] == [
        (f"nullblk_us=0 ({b})", base), (f"nullblk_us=0 ({n})", net), ("nullblk_us=300", dev)]
    # each run its own end_to_end point: the two value-0 runs are not merged
    e2e = {p["label"]: p["mean_ns"] for p in doc["points"] if p["stage"] == "end_to_end"}
    assert len(e2e) == 3 and e2e[f"nullblk_us=0 ({b})"] != e2e[f"nullblk_us=0 ({n})"]
    page = open(os.path.join(out, "sweep.html")).read()
    spec = chart_specs(page)["breakdown-0"]
    bars = [r for r in spec["datasets"]["bars"] if r["stage"] == "fabric_total"]
    assert sorted(r["label"] for r in bars) == sorted(e2e)   # one fabric_total segment in each run's own bar
    fabric = {p["label"]: p["mean_ns"] for p in doc["points"] if p["stage"] == "fabric_total"}
    assert {r["label"]: r["value_us"] for r in bars} == pytest.approx({k: v / 1e3 for k, v in fabric.items()})


def test_long_labels_are_printed_whole(same_value):
    (base, _, net), _, out, doc = same_value
    text = open(os.path.join(out, "sweep.txt")).read()
    head = [line for line in text.splitlines() if line.lstrip().startswith("mean us")][0]
    assert head.split()[2:] == ["nullblk_us=0", f"({os.path.basename(base)})", "nullblk_us=0",
                                f"({os.path.basename(net)})", "nullblk_us=300"]
    assert " llblk_us=300" not in text


def test_where_the_sweep_went_is_said(same_value, fixture_run, ntscope_cli, tmp_path):
    (_, _, net), r, out, _ = same_value
    assert (f"ntscope: wrote {out}/sweep.{{txt,json,html}} (the report folder of the last run given, "
            f"{os.path.basename(net)}: the default; --out DIR writes it elsewhere)") in r.stderr
    # --out follows the out-folder rule of every command: never a run's inputs, never a foreign folder
    runs = [fixture_run(n) for n in SAME_VALUE[:2]]
    r = ntscope_cli("sweep", *runs, "--values", "0,300", "--out", os.path.join(runs[0], "initiator"), "--quiet")
    assert r.returncode == 2 and "refusing to write into" in r.stderr and "host folder" in r.stderr
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep")
    r = ntscope_cli("sweep", *runs, "--values", "0,300", "--out", str(foreign), "--quiet")
    assert r.returncode == 2 and "ntscope did not write it" in r.stderr
    assert os.listdir(foreign) == ["notes.txt"]
    r = ntscope_cli("sweep", *runs, "--values", "0,300", "--out", str(tmp_path / "new"), "--quiet")
    assert r.returncode == 0 and f"ntscope: wrote {tmp_path / 'new'}/sweep.{{txt,json,html}}\n" in r.stderr
