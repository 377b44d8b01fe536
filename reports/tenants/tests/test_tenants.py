"""Tenants on the lab fixture lab-6.1-patched-tenants (capture/scenarios/tenants.sh): three
cgroups on one initiator (a 4 KiB qd 1 reader, 128 KiB qd 32 writes in two one-second bursts,
a 16 KiB qd 2 reader on namespace 2), both namespaces on one null_blk of the target. Known
answers: fio's per-job counts (the fixture's fio-*.json), truth.json's cgroups and namespaces,
host.json's io.max; the tenants file capture/scenarios/tenants.toml."""
import glob
import json
import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from ntscope.common.json_schema import problems
from ntscope.common.values import SpecError
from ntscope.reports.tenants import tenants_file

FIXTURE = "lab-6.1-patched-tenants"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TOML = os.path.join(REPO, "capture", "scenarios", "tenants.toml")


def fio_ios(run, job):
    """fio's I/Os of a truth job: fio-<job>.json, or the bursts fio-<job><n>.json."""
    files = glob.glob(os.path.join(run, "initiator", f"fio-{job}.json")) or \
        glob.glob(os.path.join(run, "initiator", f"fio-{job}[0-9]*.json"))
    assert files
    return sum(j["read"]["total_ios"] + j["write"]["total_ios"] for f in files for j in json.load(open(f))["jobs"])


@pytest.fixture(scope="module")
def analyzed(fixture_run, ntscope_cli):
    run = fixture_run(FIXTURE)
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--tenants", TOML, "--group-by", "tenant")
    assert r.returncode == 0, r.stderr
    rep = os.path.join(run, "report")
    with open(os.path.join(rep, "tenants.json")) as f:
        doc = json.load(f)
    with open(os.path.join(rep, "report.json")) as f:
        report = json.load(f)
    with open(os.path.join(run, "truth.json")) as f:
        truth = json.load(f)
    return run, doc, report, truth


def test_every_io_is_in_its_jobs_cgroup(analyzed):
    run, doc, _, truth = analyzed
    got = {c["cgroup"]: c["ios"] for c in doc["cgroups"]}
    want = {j["cgroup"]: fio_ios(run, j["job"]) for j in truth["workload"]}
    assert {k: got.get(k) for k in want} == want
    (a,) = doc["attribution"]
    assert a["ios_with_cgroup"] == a["ios"] == sum(want.values()) and a["why_not"] is None


def test_namespaces_count_their_jobs_and_share_one_drive(analyzed):
    run, doc, _, truth = analyzed
    want = {}
    for j in truth["workload"]:
        want[j["nsid"]] = want.get(j["nsid"], 0) + fio_ios(run, j["job"])
    got = {int(n["namespace"].rsplit("/ns", 1)[1]): n["ios"] for n in doc["namespaces"]}
    assert got == want
    assert {n["target_device"] for n in doc["namespaces"]} == {"target/nullb0"}
    assert all(n["namespaces_on_device"] == 2 for n in doc["namespaces"])


def test_tenants_file_names_tenants_and_the_report_groups_by_them(analyzed):
    run, doc, report, truth = analyzed
    tenant_of = {"/latency": "interactive", "/batch": "bulk", "/other": "reports"}
    want = {tenant_of[j["cgroup"]]: fio_ios(run, j["job"]) for j in truth["workload"]}
    assert {t["tenant"]: t["ios"] for t in doc["tenants"]} == want
    assert {t["tenant"]: t["class"] for t in doc["tenants"]} == {"interactive": "latency", "bulk": "batch",
                                                                  "reports": "batch"}
    assert {g["key_text"]: g["count"] for g in report["groups"]} == {f"tenant={k}": v for k, v in want.items()}


def test_per_second_rows_add_up_and_follow_the_bursts(analyzed):
    run, doc, _, _ = analyzed
    rows = pq.read_table(os.path.join(run, "report", "tenant_seconds.parquet")).to_pylist()
    for t in doc["tenants"]:
        assert sum(r["ios"] for r in rows if r["tenant"] == t["tenant"]) == t["ios"]
    bulk = sorted(r["second"] for r in rows if r["tenant"] == "bulk")
    everyone = sorted({r["second"] for r in rows})
    # two one-second bursts after one idle second each: the writer is absent from some seconds
    assert 0 < len(bulk) < len(everyone)


def test_latency_class_misses_only_in_burst_seconds_and_blames_the_batch(analyzed):
    run, doc, _, _ = analyzed
    rows = pq.read_table(os.path.join(run, "report", "tenant_seconds.parquet")).to_pylist()
    bulk = {r["second"] for r in rows if r["tenant"] == "bulk"}
    classes = {c["class"]: c for c in doc["classes"]}
    (obj,) = classes["latency"]["objectives"]
    assert obj["text"] == "p99 <= 50ms" and obj["metric"] == "latency" and obj["bound"] == 50000
    assert obj["seconds_missed"] >= 1 and set(obj["missed_seconds"]) <= bulk
    firsts = {b["second"]: b["other"] for b in classes["latency"]["blame"]
              if b["shared"] == "target_device" and b["blame_rank"] == 1}
    assert {s: firsts.get(s) for s in obj["missed_seconds"]} == {s: "batch" for s in obj["missed_seconds"]}
    cls = pq.read_table(os.path.join(run, "report", "class_seconds.parquet")).to_pylist()
    assert sorted(r["second"] for r in cls if r["class"] == "latency" and not r["met"]) == obj["missed_seconds"]


def test_limits_show_the_configured_io_max(analyzed):
    _, doc, _, _ = analyzed
    limits = {l["cgroup"]: l for l in doc["limits"]}
    assert "riops=100000" in limits["/other"]["io_max"] and limits["/latency"]["io_max"] is None


def test_document_matches_its_schema_and_filters_select_a_tenant(analyzed, ntscope_cli, fixture_run):
    _, doc, _, _ = analyzed
    with open(os.path.join(REPO, "reports", "schemas", "tenants.schema.json")) as f:
        assert problems(doc, json.load(f)) == []
    run = fixture_run(FIXTURE, fresh=True)
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--tenant", "latency", "--group-by", "cgroup")
    assert r.returncode == 0, r.stderr
    with open(os.path.join(run, "report", "report.json")) as f:
        groups = json.load(f)["groups"]
    # without a tenants file a tenant is the top-level cgroup
    assert [g["key"] for g in groups] == [{"cgroup": "/latency"}]


def test_tenants_file_errors_name_the_entry_and_the_fix(tmp_path):
    bad = tmp_path / "t.toml"
    bad.write_text('[[tenant]]\nname = "a"\ncgroups = ["web"]\n')
    with pytest.raises(SpecError, match=r"does not start at the cgroup v2 root; fix: .*\"/web\""):
        tenants_file.read(str(bad))
    bad.write_text('[[tenant]]\nname = "a"\ncgroups = ["/web"]\nclass = "gold"\n')
    with pytest.raises(SpecError, match=r"class 'gold' is not defined"):
        tenants_file.read(str(bad))
    ok = tmp_path / "ok.toml"
    ok.write_text('[[class]]\nname = "gold"\nobjectives = ["read: p99 <= 2ms"]\n')
    _, classes = tenants_file.read(str(ok))
    with pytest.raises(SpecError, match=r"has a selector"):
        tenants_file.objective_rows(classes, "ntprof", {("ntprof", "end_to_end")})
    rows = tenants_file.objective_rows({"gold": ["iops >= 200", "ntprof:end_to_end p90 < 3ms"]}, "ntprof",
                                       {("ntprof", "end_to_end")})
    assert [(r["metric"], r["min_rate"], r["limit_ns"]) for r in rows] == [("iops", 200.0, None),
                                                                          ("latency", None, 2_999_999)]


FILES_FIXTURE = "lab-6.1-patched-tenant-files"   # ext4 direct read and write, xfs buffered write


@pytest.fixture(scope="module")
def files_run(fixture_run, ntscope_cli):
    run = fixture_run(FILES_FIXTURE)
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--group-by", "file")
    assert r.returncode == 0, r.stderr
    with open(os.path.join(run, "report", "tenants.json")) as f:
        doc = json.load(f)
    with open(os.path.join(run, "truth.json")) as f:
        truth = json.load(f)
    return run, doc, truth


def fio_job(run, job):
    with open(os.path.join(run, "initiator", f"fio-{job}.json")) as f:
        j = json.load(f)["jobs"][0]
    return j["read"]["total_ios"] + j["write"]["total_ios"], j["read"]["io_bytes"] + j["write"]["io_bytes"]


def test_each_file_is_named_and_counts_its_jobs_io(files_run):
    run, doc, truth = files_run
    files = {f["file"]: f for f in doc["files"]}
    for job in truth["workload"]:
        ios, nbytes = fio_job(run, job["job"])
        f = files[job["file"]]
        if job["direct"]:   # one fio I/O, one request (nomerges=2)
            assert (f["ios"], f["bytes"]) == (ios, nbytes), job["file"]
        else:               # the page cache gathers the writes: the bytes written back are fio's
            assert f["bytes"] == nbytes and f["ios"] < ios, job["file"]
        assert f["tenants"] == [job["cgroup"].strip("/")]


def test_buffered_writeback_counts_for_its_owner_not_the_flusher(files_run):
    run, _, truth = files_run
    (buffered,) = [j for j in truth["workload"] if not j["direct"]]
    rows = pq.read_table(os.path.join(run, "report", "io.parquet"), columns=["file", "cgroup", "comm"]).to_pylist()
    mine = [r for r in rows if r["file"] == buffered["file"]]
    assert {r["cgroup"] for r in mine} == {buffered["cgroup"]}
    assert "fio" not in {r["comm"] for r in mine}   # written back by a kernel thread or sync


def test_file_seconds_and_the_file_group_add_up(files_run, ntscope_cli):
    run, doc, _ = files_run
    rows = pq.read_table(os.path.join(run, "report", "file_seconds.parquet")).to_pylist()
    with open(os.path.join(run, "report", "report.json")) as f:
        groups = {g["key"]["file"]: g["count"] for g in json.load(f)["groups"]}
    for f in doc["files"]:
        assert sum(r["ios"] for r in rows if r["file"] == f["file"]) == f["ios"] == groups[f["file"]]


@pytest.mark.parametrize("which", ["tenants", "files"])
def test_the_lab_check_passes_on_the_fixture(which, analyzed, files_run):
    """The lab's own check (capture/lab/check_tenants.py: counts, namespaces, tenant_seconds
    against fio's completion log, classes and blame; files and their owners) on the recorded run."""
    run = (analyzed if which == "tenants" else files_run)[0]
    r = subprocess.run([sys.executable, os.path.join(REPO, "capture", "lab", "check_tenants.py"), run],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FAIL" not in r.stdout and "all tenant checks passed" in r.stdout


def test_compare_names_the_tenant_whose_traffic_grew(fixture_run, ntscope_cli):
    """The base without the batch tenant (lab-6.1-patched-tenants-base: tenants batch_n=0
    span=5) against the run with its bursts: the 4 KiB reads' verdict is traffic sharing the
    path, and names the batch tenant (its top-level cgroup: compare takes no tenants file) whose
    bytes grew from none."""
    base, run = fixture_run("lab-6.1-patched-tenants-base"), fixture_run(FIXTURE, fresh=True)
    r = ntscope_cli("compare", base, run, "--quiet")
    assert r.returncode == 0, r.stderr
    with open(os.path.join(run, "report", "compare.json")) as f:
        doc = json.load(f)
    (v,) = [v for v in doc["verdicts"] if v["group_key"] == "type=read, size=4096"]
    assert v["verdict"] == "slower" and v["cause_id"] in ("interference", "few_queues", "busy_device")
    assert (v["offending_tenant"], v["offending_class"]) == ("batch", None)
    bulk = fio_ios(run, "batch") * 131072 / 1e6   # the batch's bytes, MB
    assert f"tenant batch, 0.0 -> {bulk:.1f} MB a run" in v["cause"]


def test_the_readme_inline_tenants_file_reads(tmp_path):
    """README's recipe writes the file inline (TOML arrays of inline tables): the same entries."""
    with open(os.path.join(REPO, "README.md")) as f:
        row = next(line for line in f if line.startswith("| tenants and classes"))
    tenant = row.split("e.g. `", 1)[1].split("`", 1)[0]
    klass = row.split("` and `", 2)[1].split("`", 1)[0]
    path = tmp_path / "inline.toml"
    path.write_text(tenant + "\n" + klass + "\n")
    tenants, classes = tenants_file.read(str(path))
    assert tenants == [{"name": "web", "cgroups": ["/kubepods/*web*"], "class": "gold"}]
    assert classes == {"gold": ["p99 <= 2ms", "iops >= 200"]}
    assert [r["pattern"] for r in tenants_file.rule_rows(tenants)] == ["/kubepods/*web*"]
