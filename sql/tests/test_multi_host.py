"""Runs with more than two hosts, on real three-VM lab captures (fixtures/lab-6.1-patched-
two-initiators: two initiators, one target; -two-targets: one initiator with a controller
on each of two targets). Every (initiator, target) host pair gets its own clock offset;
initiators are placed on one reference clock; each pair's numbers equal those of the pair
analysed alone. Needs the converter (just build; NTSCOPE_BIN)."""
import json
import os
import shutil
import subprocess

import pytest

from ntscope.sql import views

TWO_INI = "lab-6.1-patched-two-initiators"
TWO_TGT = "lab-6.1-patched-two-targets"


def rows(con, sql, params=None):
    return con.execute(sql, params or []).fetchall()


@pytest.fixture(scope="module")
def two_ini(fixture_run):
    run = fixture_run(TWO_INI)
    return run, views.connect(run)


@pytest.fixture(scope="module")
def two_tgt(fixture_run):
    run = fixture_run(TWO_TGT)
    return run, views.connect(run)


def pair_alone(run, tmp_path, keep):
    """A copy of run holding only the host folders in keep (already converted)."""
    dst = tmp_path / ("alone-" + "-".join(keep))
    dst.mkdir()
    for h in keep:
        shutil.copytree(os.path.join(run, h), dst / h)
    return views.connect(str(dst))


def test_each_controller_maps_to_the_target_that_serves_it(two_tgt, two_ini):
    # both targets hand out cntlid 1: only host.json's address and subsystem tell them apart
    _, con = two_tgt
    assert rows(con, "SELECT ctrl_id, target_host, cntlid, source FROM ctrl_map ORDER BY ctrl_id") == [
        (0, "target", 1, "host.json"), (1, "target2", 1, "host.json")]
    _, con = two_ini
    assert rows(con, "SELECT initiator_host, target_host, cntlid FROM ctrl_map ORDER BY 1") == [
        ("initiator", "target", 2), ("initiator2", "target", 1)]


@pytest.mark.parametrize("name", [TWO_INI, TWO_TGT])
def test_one_clock_offset_per_host_pair_and_every_command_matched(name, fixture_run):
    con = views.connect(fixture_run(name))
    pairs = rows(con, "SELECT initiator_host, target_host, pairs_agreeing, pairs, uncertainty_ns FROM clock_offset "
                      "ORDER BY 1, 2")
    want = {TWO_INI: [("initiator", "target"), ("initiator2", "target")],
            TWO_TGT: [("initiator", "target"), ("initiator", "target2")]}[name]
    assert [p[:2] for p in pairs] == want
    for _, _, agreeing, n, unc in pairs:
        assert n > 200 and agreeing == n
        assert unc < 2_000_000          # within 2 ms: a wrong offset would leave few agreeing
    total, matched = rows(con, "SELECT count(*), count(*) FILTER (WHERE match_state = 'matched') FROM io")[0]
    assert total > 800 and matched == total
    assert rows(con, "SELECT count(*) FROM io_stages WHERE dur < 0")[0][0] == 0
    assert rows(con, "SELECT count(*) FROM pipeline_stats WHERE name LIKE 'input_error:%'")[0][0] == 0


def test_the_two_offsets_differ_as_the_vms_clocks_do(two_ini, two_tgt):
    # the VMs booted at different times: one offset for the run would be wrong for one pair
    for _, con in (two_ini, two_tgt):
        a, b = [r[0] for r in rows(con, "SELECT offset_ns FROM clock_offset ORDER BY 1")]
        assert b - a > 100_000_000


def test_io_counts_per_initiator_and_per_disk_equal_fio(two_ini, two_tgt):
    run, con = two_ini
    got = dict(rows(con, "SELECT initiator_host, count(*) FROM io GROUP BY 1"))
    for host in ("initiator", "initiator2"):
        fio = json.load(open(os.path.join(run, host, "fio-randread.json")))
        # commands in flight when the trace starts or stops are the only difference
        assert abs(got[host] - sum(j["read"]["total_ios"] for j in fio["jobs"])) <= 4, (host, got)
    run, con = two_tgt
    got = dict(rows(con, "SELECT disk, count(*) FROM io GROUP BY 1"))
    fio = json.load(open(os.path.join(run, "initiator", "fio-to_target.json")))
    for d in fio["disk_util"]:
        assert abs(got[d["name"]] - d["read_ios"]) <= 4, (d, got)
    # and each disk's commands went to its own target
    assert dict(rows(con, "SELECT disk, string_agg(DISTINCT target_host, ',') FROM io GROUP BY 1")) == {
        "nvme0n1": "target", "nvme1n1": "target2"}


def test_second_initiator_placed_on_the_reference_clock(two_ini):
    _, con = two_ini
    (ref, shift, via), = rows(con, "SELECT reference_host, shift_ns, via_target FROM initiator_clock "
                                   "WHERE host = 'initiator2'")
    assert (ref, via) == ("initiator", "target")
    o = dict(rows(con, "SELECT initiator_host, offset_ns FROM clock_offset"))
    assert shift == o["initiator2"] - o["initiator"]
    # independent check on the target's one clock: from each initiator's first submit (on
    # the reference clock) to the target receiving it is one network trip, the same for
    # both initiators within a few ms; without the shift they would differ by 0.58 s
    trip = dict(rows(con, "SELECT initiator_host, min(t_init_ts) - min(i_setup_ts) FROM io GROUP BY 1"))
    assert abs(trip["initiator"] - trip["initiator2"]) < 20_000_000, trip
    # the window covers both initiators' work on one time line (a few seconds, not the
    # difference between the VMs' boot times)
    dur = rows(con, "SELECT dur FROM report_window")[0][0]
    assert 3e9 < dur < 8e9


@pytest.mark.parametrize("name,keep,initiator,target", [
    (TWO_INI, ["initiator2", "target"], "initiator2", "target"),
    (TWO_INI, ["initiator", "target"], "initiator", "target"),
    (TWO_TGT, ["initiator", "target2"], "initiator", "target2"),
])
def test_each_pair_has_the_numbers_it_has_alone(name, keep, initiator, target, fixture_run, tmp_path):
    run = fixture_run(name)
    con = views.connect(run)
    alone = pair_alone(run, tmp_path, keep)
    q = ("SELECT s.io_id, s.stage_set, s.stage, s.dur FROM io_stages s JOIN io USING (io_id) "
         "WHERE io.initiator_host = ? AND io.target_host = ? ORDER BY ALL")
    together = rows(con, q, [initiator, target])
    assert len(together) > 1000
    assert rows(alone, q, [initiator, target]) == together
    qo = "SELECT offset_ns, uncertainty_ns FROM clock_offset WHERE initiator_host = ? AND target_host = ?"
    assert rows(alone, qo, [initiator, target]) == rows(con, qo, [initiator, target])
    if name == TWO_TGT:
        # the controller of the target left out is not joined to a stranger with its cntlid
        assert rows(alone, "SELECT disk, match_state, count(*) > 600 FROM io WHERE target_host IS NULL "
                           "GROUP BY ALL") == [("nvme0n1", "no_target_controller", True)]


def test_streams_of_two_initiators_are_told_apart(two_ini):
    con = views.connect(two_ini[0], interference=True)
    streams = [r[0] for r in rows(con, "SELECT stream_id FROM intf_streams ORDER BY 1")]
    assert len(streams) == 2
    assert sorted(s.split(":")[0] for s in streams) == ["initiator", "initiator2"]
    assert all(":fio/" in s for s in streams)


def test_report_names_each_pair_and_groups_by_host_and_target(fresh_run, ntscope_cli):
    run = fresh_run(TWO_INI)
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--group-by", "host")
    assert r.returncode == 0, r.stderr
    doc = json.load(open(os.path.join(run, "report", "report.json")))
    assert [(p["initiator_host"], p["target_host"]) for p in doc["clock_pairs"]] == [
        ("initiator", "target"), ("initiator2", "target")]
    # no single offset for the run; the largest uncertainty of the two
    assert doc["clock"]["offset_ns"] is None
    assert doc["clock"]["uncertainty_ns"] == max(p["uncertainty_ns"] for p in doc["clock_pairs"])
    shifts = {c["host"]: c["shift_ns"] for c in doc["initiator_clocks"]}
    assert shifts["initiator"] == 0 and shifts["initiator2"] == (
        doc["clock_pairs"][1]["offset_ns"] - doc["clock_pairs"][0]["offset_ns"])
    counts = {g["key"]["host"]: g["count"] for g in doc["groups"]}
    con = views.connect(run)
    assert counts == dict(rows(con, "SELECT initiator_host, count(*) FROM io GROUP BY 1"))
    text = open(os.path.join(run, "report", "report.txt")).read()
    assert "target - initiator2 = " in text and "initiator2 times on initiator's clock: +" in text
    run = fresh_run(TWO_TGT)
    assert ntscope_cli("analyze", run, "--quiet", "--no-interference", "--group-by", "target").returncode == 0
    doc = json.load(open(os.path.join(run, "report", "report.json")))
    assert {g["key"]["target"]: g["matched"] for g in doc["groups"]} == dict(
        rows(views.connect(run), "SELECT target_host, count(*) FROM io GROUP BY 1"))


def rerecorded(run, ntscope_bin):
    """The run as another recording of the same events: each trace.dat rewritten by trace-cmd
    (file version 6, uncompressed: other bytes, the same events), then converted again (compare
    refuses one recording on both sides)."""
    from conftest import convert_run
    for host in sorted(os.listdir(run)):
        trace = os.path.join(run, host, "trace.dat")
        if os.path.isfile(trace):
            subprocess.run(["trace-cmd", "convert", "--file-version", "6", "--compression", "none", "-i", trace,
                            "-o", trace + ".v6"], check=True, capture_output=True)
            os.replace(trace + ".v6", trace)
            shutil.rmtree(os.path.join(run, host, "parquet"), ignore_errors=True)
    return convert_run(run, ntscope_bin)


def test_compare_of_two_multi_host_runs(fresh_run, ntscope_cli, ntscope_bin):
    base, run = fresh_run(TWO_INI, "base"), rerecorded(fresh_run(TWO_INI, "run", convert=False), ntscope_bin)
    r = ntscope_cli("compare", base, run, "--quiet")
    assert r.returncode == 0, r.stderr
    doc = json.load(open(os.path.join(run, "report", "compare.json")))
    assert doc["run"]["input_errors"] is None
    # the same run on both sides: nothing changed; the clock error is the worse pair's
    assert [v["cause_id"] for v in doc["verdicts"]] == ["none"]
    assert doc["verdicts"][0]["e2e_lad"] == 1.0
    unc = max(r[0] for r in rows(views.connect(run), "SELECT uncertainty_ns FROM clock_offset"))
    assert doc["run"]["offset_uncertainty_ns"] == unc
