"""compare --group-by: each group of I/Os compared on its own, grouped as analyze groups them
(sql/core/group_key.sql io_group_key, the key analyze's io_selected gives). Known
answer: the multipath pair (capture/scenarios/multipath-delay.sh, round-robin over two paths, 5 ms
added on path B's initiator egress): grouped by path, B is slower by about 5 ms in its
submission network stage and its cause is path_degraded; A is not slower."""
import json
import os

import pytest

from ntscope.reports.report import spec
from ntscope.sql import views

A, B = "initiator/nvme0@169.254.10.2:4420", "initiator/nvme1@169.254.11.2:4420"


@pytest.fixture(scope="module")
def by_path(fixture_run, ntscope_cli, tmp_path_factory):
    base, run = fixture_run("lab-6.1-patched-multipath-base"), fixture_run("lab-6.1-patched-multipath-delay")
    out = str(tmp_path_factory.mktemp("by-path"))
    r = ntscope_cli("compare", base, run, "--group-by", "path", "--out", out, "--quiet", "--no-cache")
    assert r.returncode == 0, r.stderr
    return json.load(open(os.path.join(out, "compare.json"))), open(os.path.join(out, "compare.txt")).read()


def test_a_verdict_per_path_names_the_delayed_one(by_path):
    doc, text = by_path
    assert doc["params"]["group_by"] == ["path"]
    verdicts = {v["group_key"]: v for v in doc["verdicts"]}
    assert set(verdicts) == {f"path={A}", f"path={B}"}
    b = verdicts[f"path={B}"]
    assert (b["verdict"], b["cause_id"]) == ("slower", "path_degraded")
    assert verdicts[f"path={A}"]["verdict"] != "slower"
    lad = {(r["group_key"], r["stage"]): r for r in doc["lad"] if r["statistic"] == "mean" and r["stage_set"] == doc["stage_set"]}
    added_ms = (lad[(f"path={B}", "nstack_submission")]["run_ns"] - lad[(f"path={B}", "nstack_submission")]["base_ns"]) / 1e6
    assert 4.0 <= added_ms <= 6.0, added_ms            # the 5 ms injected (+- 20%)
    assert "groups: by path (--group-by), a verdict each" in text and f"== group path={B}" in text


@pytest.mark.parametrize("value, said", [("time", "a time bucket is of one run's clock"),
                                         ("queue", "--group-by queue is analyze's, not compare's"),
                                         ("paths", "field 'paths' is unknown"), ("path,path", "names no field or one twice")])
def test_a_group_by_compare_cannot_use_is_refused(ntscope_cli, value, said):
    r = ntscope_cli("compare", "fixtures/lab-6.1-patched-multipath-base", "fixtures/lab-6.1-patched-multipath-delay",
                    "--group-by", value)
    assert r.returncode == 2 and said in r.stderr and "fix:" in r.stderr, r.stderr


def test_compare_and_analyze_spell_every_group_key_alike(fixture_run):
    """analyze's io_selected (grouped by a --group-by through selection.apply) and compare's
    io_group_key over the columns compare keeps give each io the same key, for every field but
    time and for a combination, on a run with tenants, files and namespaces."""
    from ntscope.reports.report import selection
    con = views.connect(fixture_run("lab-6.1-patched-tenant-files"))
    combos = [[f] for f in spec.FIELDS if f != "time"] + [["type", "queue", "path", "tenant"]]
    for fields in combos:
        selection.apply(con, spec.Spec(group_by=fields))
        differ, distinct = con.execute(
            "SELECT count(*) FILTER (WHERE s.group_key IS DISTINCT FROM io_group_key(?::VARCHAR[], io)), "
            "count(DISTINCT s.group_key) FROM io_selected s JOIN io USING (io_id)", [fields]).fetchone()
        assert differ == 0, fields
        assert distinct >= 1, fields
    assert con.execute("SELECT count(DISTINCT io_group_key(['file'], io)) FROM io").fetchone()[0] >= 3


def test_every_field_compare_keeps_groups_the_ios(fixture_run, ntscope_cli, tmp_path):
    """Each field compare accepts names a column its input holds: the groups compared are the
    keys analyze gives on both sides (none when the sides share no value: pids differ)."""
    from ntscope.reports.compare import params
    base, run = fixture_run("lab-6.1-patched-tenants-base"), fixture_run("lab-6.1-patched-tenants")
    cons = [views.connect(base), views.connect(run)]
    for field in params.COMPARE_GROUP_FIELDS:
        out = str(tmp_path / field)
        r = ntscope_cli("compare", base, run, "--group-by", field, "--out", out, "--quiet", "--confidence", "0.8")
        assert r.returncode == 0, (field, r.stderr)
        got = {v["group_key"] for v in json.load(open(os.path.join(out, "compare.json")))["lad"]}
        base_keys, run_keys = ({k for (k,) in c.execute("SELECT DISTINCT io_group_key(?::VARCHAR[], io) FROM io",
                                                         [[field]]).fetchall()} for c in cons)
        both = base_keys & run_keys
        assert got <= both and bool(got) == bool(both), (field, got, both)
        assert field == "pid" or got, field


def test_namespaces_on_one_drive_each_get_a_verdict_naming_the_batch(fixture_run, ntscope_cli, tmp_path):
    """The tenants pair (capture/scenarios/tenants.sh: the latency tenant on namespace 1, another
    on namespace 2, both backed by one null_blk; the run adds the batch tenant's bursts on
    namespace 1): by target device, namespace and cgroup, two groups on the one drive, each
    slower, and each cause names the batch tenant whose traffic grew (the tenant is not a key here)."""
    base, run = fixture_run("lab-6.1-patched-tenants-base"), fixture_run("lab-6.1-patched-tenants")
    out = str(tmp_path / "ns")
    r = ntscope_cli("compare", base, run, "--group-by", "target_device,namespace,cgroup", "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    doc = json.load(open(os.path.join(out, "compare.json")))
    assert doc["params"]["group_by"] == ["target_device", "namespace", "cgroup"]
    got = {v["group_key"]: v for v in doc["verdicts"]}
    nqn = "nqn.2026-11.io.ntscope:lab"
    assert set(got) == {f"target_device=target/nullb0, namespace={nqn}/ns1, cgroup=/latency",
                        f"target_device=target/nullb0, namespace={nqn}/ns2, cgroup=/other"}
    for v in got.values():
        assert v["verdict"] == "slower" and v["offending_tenant"] == "batch", v


def test_the_group_by_fields_are_named_alike_in_sql_and_the_flags(fixture_run):
    """--group-by's fields (spec.FIELDS, what the flags accept) are io_group_fields(), the order
    of the values sql/core/group_key.sql keys by: a field added on one side only fails here."""
    con = views.connect(fixture_run("lab-6.1-patched-tenant-files"))
    assert con.execute("SELECT io_group_fields()").fetchone()[0] == list(spec.FIELDS)
