"""Report tests: spec parsing, `analyze` on a real capture (text, JSON schema, filters,
timeline), --group-by time. The HTML pages are tested in test_html.py, the timeline in
test_timeline.py, per-I/O Parquet in test_export.py."""
import json
import os
import re
import shutil

import pytest

from ntscope.reports.report import spec as specmod

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---------------------------------------------------------------- spec
@pytest.mark.parametrize("text,bounds", [
    ("4k", (4096, 4096)), ("4096", (4096, 4096)), ("128KiB", (131072, 131072)), ("4k-128k", (4096, 131072)),
    (">=32k", (32768, 2**62)), (">32k", (32769, 2**62)), ("<8k", (0, 8191)), ("<=1m", (0, 1048576)),
])
def test_size_ranges(text, bounds):
    assert specmod.size_range(text) == {"lo": bounds[0], "hi": bounds[1]}


@pytest.mark.parametrize("bad", ["4q", "big", "-"])
def test_bad_size_is_a_clear_error(bad):
    with pytest.raises(specmod.SpecError, match="is not a size"):
        specmod.size_range(bad)


def test_unknown_group_field_is_an_error():
    with pytest.raises(specmod.SpecError, match="group-by field 'colour' is unknown"):
        specmod.Spec(group_by="type,colour")


def test_toml_spec_and_flag_override(tmp_path):
    p = tmp_path / "spec.toml"
    p.write_text('[filter]\ntype = ["read"]\nsize = ">=8k"\nqueue = [1]\n[group]\nby = ["type", "queue"]\n')
    s = specmod.Spec.from_toml(str(p))
    with pytest.raises(RuntimeError, match="selection.apply"):
        s.selection()   # a queue filter is a key of the run's queues: resolved against the run first
    s.queue_keys = ["initiator/c0/q1"]   # what selection.apply resolves qid 1 to on one initiator
    given = {k: v for k, v in s.selection().items() if v is not None}
    assert given == {"types": ["read"], "size_ranges": [{"lo": 8192, "hi": 2**62}], "queue_keys": ["initiator/c0/q1"],
                     "group_by": ["type", "queue"], "bucket_ns": 1_000_000_000, "bucket_decimals": 1}
    assert s.group_by == ["type", "queue"]
    s2 = specmod.Spec.from_toml(str(p), types="write")
    assert s2.types == ["write"]
    p.write_text("[filters]\n")
    with pytest.raises(specmod.SpecError, match=r"unknown table \[filters\]"):
        specmod.Spec.from_toml(str(p))


# ---------------------------------------------------------------- analyze on real captures
def copy_sample(name, dst):
    src = os.path.join(REPO, "fixtures", name)
    for host in ("initiator", "target"):
        shutil.copytree(os.path.join(src, host), os.path.join(dst, host))
    return dst


@pytest.fixture(scope="module")
def analyze(ntscope_cli):
    def run(path, *flags):
        return ntscope_cli("analyze", path, "--quiet", *flags)
    return run


@pytest.fixture(scope="module")
def randread(tmp_path_factory, analyze):
    run = copy_sample("stock-randread-4k-qd8", str(tmp_path_factory.mktemp("rr") / "run"))
    r = analyze(run)
    assert r.returncode == 0, r.stderr
    return run


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, analyze):
    run = copy_sample("stock-randrw-mixed", str(tmp_path_factory.mktemp("mx") / "run"))
    r = analyze(run)
    assert r.returncode == 0, r.stderr
    return run


def test_report_txt(randread):
    text = open(os.path.join(randread, "report", "report.txt")).read()
    lines = text.splitlines()
    assert lines[3].startswith("pipeline_stats")
    assert max(len(l) for l in lines) <= 106   # the stage table: name, 12 columns of 7
    m = re.search(r"group: type=read, size=4096\s+count (\d+) \(matched (\d+)\)\s+IOPS ([\d.]+)", text)
    assert m and int(m.group(1)) == 6389 and int(m.group(2)) == 6389
    assert abs(float(m.group(3)) - 1064) < 15  # fio.log: IOPS=1064


def test_report_json_schema(randread):
    doc = json.load(open(os.path.join(randread, "report", "report.json")))
    assert doc["mode"] == "stock"
    stats = {s["name"]: s for s in doc["pipeline_stats"]}
    for k in ("initiator_commands", "target_commands", "matched_commands"):
        assert set(stats[k]) == {"name", "severity", "value", "meaning"}
    assert stats["initiator_commands"]["value"] == 6389
    assert stats["matched_commands"]["value"] == 6389
    assert set(doc["clock"]) >= {"offset_ns", "uncertainty_ns", "method"}
    assert isinstance(doc["clock"]["offset_ns"], int)
    [g] = doc["groups"]
    assert g["key"] == {"type": "read", "size_bytes": 4096}
    assert g["count"] == 6389 and g["iops"] > 1000 and g["mb_s"] > 4
    names = [s["stage"] for s in g["stages"]]
    assert names[0] == "end_to_end" and "fabric_total" in names and "target_device" in names
    for s in g["stages"]:
        for k in ("count", "mean_ns", "p10_ns", "p50_ns", "p70_ns", "p80_ns", "p90_ns", "p95_ns",
                  "p99_ns", "p999_ns", "max_ns"):
            assert isinstance(s[k], int), (s["stage"], k)
        assert s["p10_ns"] <= s["p50_ns"] <= s["p99_ns"] <= s["max_ns"]


def test_filters_and_grouping(mixed, analyze):
    r = analyze(mixed, "--type", "write", "--size", "4k-16k", "--group-by", "type,queue")
    assert r.returncode == 0, r.stderr
    doc = json.load(open(os.path.join(mixed, "report", "report.json")))
    keys = [g["key"] for g in doc["groups"]]
    assert keys and all(k["type"] == "write" and k["queue"] in ("initiator/c0/q1", "initiator/c0/q2") for k in keys)
    total = sum(g["count"] for g in doc["groups"])
    assert 0 < total < 1439  # fio issued 1439 writes of 4k-128k
    r = analyze(mixed, "--size", "huge")
    assert r.returncode == 2 and "size 'huge' is not a size" in r.stderr


def test_group_by_time_rates_per_bucket_in_time_order(tmp_path, analyze):
    """--group-by time on the 6 s randread capture, 0.5 s buckets: groups in time order (not by
    count), each group's IOPS = its count over its own bucket (0.5 s), the last bucket clipped to
    the window's end."""
    run = copy_sample("stock-randread-4k-qd8", str(tmp_path / "run"))
    r = analyze(run, "--group-by", "time", "--time-bucket", "0.5")
    assert r.returncode == 0, r.stderr
    doc = json.load(open(os.path.join(run, "report", "report.json")))
    times = [g["key"]["time_s"] for g in doc["groups"]]
    counts = [g["count"] for g in doc["groups"]]
    assert len(times) >= 10 and times == sorted(times) and counts != sorted(counts, reverse=True)
    assert sum(counts) == 6389
    # each group's own statistics, histogram and CDF (read for every group at once, handed out by key)
    for g in doc["groups"]:
        e2e = [s for s in g["stages"] if s["stage"] == "end_to_end"]
        assert len(e2e) == 1 and e2e[0]["count"] == g["count"]
        assert sum(h["count"] for h in g["histograms"] if h["stage"] == "end_to_end") == g["count"]
        cdf = [c["dur_ns"] for c in g["cdf_pct_1_to_100"] if c["stage"] == "end_to_end"]
        assert len(cdf) == 1 and (cdf[0][49], cdf[0][98], cdf[0][99]) == (e2e[0]["p50_ns"], e2e[0]["p99_ns"],
                                                                        e2e[0]["max_ns"])
    assert len({g["stages"][0]["mean_ns"] for g in doc["groups"]}) > 1
    w = doc["window"]
    for g in doc["groups"][:-1]:    # whole buckets (the first starts with the run's first I/O)
        assert g["iops"] == pytest.approx(g["count"] / 0.5)
        assert g["mb_s"] == pytest.approx(g["bytes"] / 0.5 / 1e6)
    last = doc["groups"][-1]
    last_start = w["start_ts"] + round(last["key"]["time_s"] * 1e9)
    assert last["iops"] == pytest.approx(last["count"] / ((w["end_ts"] - last_start) / 1e9))
    text = open(os.path.join(run, "report", "report.txt")).read()
    assert text.index("group: time=0.0") < text.index("group: time=0.5") < text.index("group: time=1.0")


def test_missing_run_is_fatal(analyze):
    r = analyze("/nonexistent/run")
    assert r.returncode == 2 and "no run directory" in r.stderr


