"""The capture's probes (capture key probes=) on real lab captures. fixtures/lab-6.1-patched-
probes-agreement and lab-6.12-patched-probes-agreement were recorded on the patched kernels
with probes=on (scenario probes-agreement: 4 KiB reads and 128 KiB R2T writes), so every I/O
carries its NVMe/TCP milestones twice, from the tracepoints and from the probes: the offline
twin of the lab's live agreement check, and the source of mixed runs (a host's patched
events or probes left out, as a host without them records). Needs the converter."""
import importlib.util
import os
import shutil

import pytest

from ntscope.sql import loader, views

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AGREEMENT = ("lab-6.1-patched-probes-agreement", "lab-6.12-patched-probes-agreement")
# runs of the stock lab kernels with probes=on (their compare cases: sql/compare/tests/cases/probes_*)
PROBED = sorted(n for n in os.listdir(os.path.join(REPO, "fixtures")) if "-stock-probes-" in n)


def check_probes():
    spec = importlib.util.spec_from_file_location(
        "check_probes", os.path.join(REPO, "capture", "lab", "check_probes.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def stages(run, milestones=None):
    con = views.connect(run, milestones=milestones)
    try:
        return {(i, s): d for i, s, d in con.execute(
            "SELECT io_id, stage, dur FROM io_stages WHERE stage_set = 'ntprof'").fetchall()}
    finally:
        con.close()


def one(con, sql):
    return con.execute(sql).fetchall()


@pytest.mark.parametrize("name", AGREEMENT)
def test_probes_give_every_io_the_patched_events_answer(name, fixture_run):
    """Per ntprof stage: every I/O the patched events measure is measured by the probes too,
    and >= 95% agree within max(5%, 30 us) (the lab's tolerance: under TCG the tracepoint
    recorded first delays its probe by its own cost); R2T writes included."""
    run = fixture_run(name)
    tp, pr = stages(run, "tracepoint"), stages(run, "probe")
    assert len(tp) == len(pr) and len(tp) > 500 * 12
    for stage in {s for _, s in tp}:
        ios = [k for k, d in tp.items() if k[1] == stage and d is not None]
        assert len(ios) > 500, stage
        assert all(pr.get(k) is not None for k in ios), stage
        agree = sum(1 for k in ios if abs(pr[k] - tp[k]) <= max(0.05 * abs(tp[k]), 30_000))
        assert agree >= 0.95 * len(ios), (stage, agree, len(ios))
    # the writes' R2T wait is measured by both: milliseconds, not 0
    con = views.connect(run, milestones="probe")
    try:
        waits = one(con, """SELECT count(*), count(*) FILTER (WHERE s.dur > 100000) FROM io_stages s JOIN io USING (io_id)
                            WHERE s.stage = 'nvmet_tcp_r2t_wait' AND io.size_bytes = 131072""")[0]
    finally:
        con.close()
    assert waits[0] > 20 and waits[1] == waits[0], waits


def test_the_live_checks_agreement_fails_on_a_wrong_command_id(fixture_run, tmp_path, monkeypatch):
    """check_probes.py agreement (the live check) on the same fixture passes, and fails when the
    probes' command id is off by one generation (their hits then belong to other I/Os)."""
    run = fixture_run(AGREEMENT[0])
    cp = check_probes()
    assert cp.main(["agreement", run]) == 0
    real = open(os.path.join(REPO, "sql", "core/events.sql")).read()
    broken = real.replace("coalesce(cid, ((genctr & 15) << 12) | tag)", "coalesce(cid, (((genctr + 1) & 15) << 12) | tag)")
    assert broken != real
    sql_dir = tmp_path / "sql"
    shutil.copytree(os.path.join(REPO, "sql"), sql_dir, ignore=shutil.ignore_patterns("tests", "bench", "__pycache__"))
    (sql_dir / "core/events.sql").write_text(broken)
    monkeypatch.setattr(loader, "SQL_DIR", str(sql_dir))
    assert cp.main(["agreement", run]) == 1


def test_mixed_run_patched_initiator_probed_target(fresh_run, drop_systems):
    run = fresh_run(AGREEMENT[0])
    drop_systems(run, "target", "nvmet_tcp")
    con = views.connect(run)
    try:
        assert one(con, "SELECT mode FROM analysis_mode") == [("patched+probes",)]
        assert dict(one(con, "SELECT host, source FROM host_milestones")) == {"initiator": "tracepoint", "target": "probe"}
        assert one(con, "SELECT count(*) FROM stage_coverage WHERE NOT measurable") == [(0,)]
        n, measured = one(con, """SELECT count(DISTINCT io_id), count(*) FILTER (WHERE dur IS NOT NULL) FROM io_stages
                                  WHERE stage_set = 'ntprof' AND stage IN ('network_transmission', 'target_subsystem')""")[0]
    finally:
        con.close()
    assert n > 500 and measured >= 2 * n - 2


def test_mixed_run_probed_initiator_stock_target(fresh_run, drop_systems):
    """The target recorded stock events only: its stages are named, never measured between
    other points; the initiator's own stages come from its probes."""
    run = fresh_run(AGREEMENT[0])
    drop_systems(run, "initiator", "nvme_tcp")
    drop_systems(run, "target", "nvmet_tcp", "ntscope_nvmet_tcp")
    con = views.connect(run)
    try:
        assert one(con, "SELECT mode FROM analysis_mode") == [("probes",)]
        gaps = dict(one(con, "SELECT stage, missing FROM stage_coverage WHERE stage_set = 'ntprof' AND NOT measurable"))
        assert set(gaps) == {"network_transmission", "nstack_submission", "nstack_completion", "nvmet_tcp_submission",
                             "nvmet_tcp_cmd_recv", "nvmet_tcp_r2t_wait", "target_subsystem", "nvmet_tcp_completion"}, gaps
        reasons = {r for (r,) in one(con, "SELECT DISTINCT reason FROM stage_coverage WHERE NOT measurable")}
        assert reasons == {"target recorded stock events only: record it with probes=on (a kernel with probe events and BTF) "
                           "or the patched modules"}, reasons
        assert one(con, f"""SELECT count(*) FROM io_stages WHERE stage_set = 'ntprof' AND dur IS NOT NULL
                            AND stage IN ({', '.join("'" + s + "'" for s in gaps)})""") == [(0,)]
        measured = dict(one(con, """SELECT stage, count(dur) FROM io_stages WHERE stage_set = 'ntprof'
                                    AND stage IN ('blk_submission', 'nvme_tcp_submission', 'nvme_tcp_completion') GROUP BY 1"""))
        n = one(con, "SELECT count(*) FROM io")[0][0]
    finally:
        con.close()
    assert n > 500 and all(v >= n - 2 for v in measured.values()), (n, measured)


def test_probed_fixtures_are_there():
    """A base, a slow device, a slow network and few queues on both stock kernels (the compare
    cases' runs, sql/compare/tests/cases/probes_*)."""
    for kernel in ("6.1", "6.12"):
        for scenario in ("base-randread", "cmp-slow-net-delay-target", "few-queues", "few-queues-1job"):
            assert f"lab-{kernel}-stock-probes-{scenario}" in PROBED, (kernel, scenario)
    assert {"lab-6.1-stock-probes-slow-device", "lab-6.12-stock-probes-cmp-slow-device"} <= set(PROBED)


@pytest.mark.parametrize("name", PROBED)
def test_a_probed_stock_run_gives_every_ntprof_stage(name, fixture_run):
    """A stock kernel's run recorded with probes=on: mode probes from both hosts' probes, no hit
    lost, every I/O matched and every ntprof stage measured for it, the stages summing to
    end_to_end (top-level) and to their parents; the verdicts are the compare cases'."""
    con = views.connect(fixture_run(name))
    try:
        assert one(con, "SELECT mode FROM analysis_mode") == [("probes",)]
        assert sorted(one(con, "SELECT host, source FROM host_milestones")) == [("initiator", "probe"), ("target", "probe")]
        assert one(con, "SELECT sum(probe_misses) FROM hosts") == [(0,)]
        assert one(con, "SELECT count(*) FROM stage_coverage WHERE NOT measurable") == [(0,)]
        n, matched = one(con, "SELECT count(*), count(*) FILTER (WHERE match_state = 'matched') FROM io")[0]
        assert n > 100 and matched == n, (n, matched)
        unmeasured = one(con, """SELECT stage, count(*) FROM io_stages WHERE stage_set = 'ntprof' AND dur IS NULL
                                 GROUP BY stage""")
        assert unmeasured == [], unmeasured
        bad = one(con, "SELECT stage_set, reason FROM io_stage_check WHERE stage_set = 'ntprof' AND NOT ok LIMIT 3")
        assert bad == [], bad
    finally:
        con.close()
