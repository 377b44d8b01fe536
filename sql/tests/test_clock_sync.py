"""The synchronized-clock path of the join (clock_sync_claim, clock_offset) on a real
capture whose hosts both traced on CLOCK_TAI without being synchronized (two lab VMs:
each set its clock from the emulated RTC at boot, so they disagree by far more than a
PTP/NTP error). Needs the converter (just build; NTSCOPE_BIN)."""
import pytest

from ntscope.sql import views

FIXTURE = "lab-6.1-patched-tai-unsynced"


@pytest.fixture(scope="module")
def as_recorded(fixture_run):
    return views.connect(fixture_run(FIXTURE))


def one(con, sql):
    return con.execute(sql).fetchone()


def test_both_hosts_on_tai_make_a_claim(as_recorded):
    clocks = dict(as_recorded.execute("SELECT role, trace_clock FROM hosts").fetchall())
    assert clocks == {"initiator": "tai", "target": "tai"}
    claimed, err, source = one(as_recorded, "SELECT claimed, max_error_ns, error_source FROM clock_sync_claim")
    assert claimed and err == 100000 and source.startswith("assumed")


def test_a_wrong_claim_is_rejected_and_reported(as_recorded):
    synced, offset, est, lo, hi = one(as_recorded, "SELECT synced, offset_ns, estimated_offset_ns, agreed_lo_ns, agreed_hi_ns FROM clock_offset")
    # the VMs' TAI clocks are far apart: the commands bound the offset away from 0
    assert not synced and offset == est
    assert lo > 100000 or hi < -100000, (lo, hi)
    sev, value = one(as_recorded, "SELECT severity, value FROM pipeline_stats WHERE name = 'clock_sync_claim_rejected'")
    assert sev == "error" and str(lo) in value
    # the estimate still joins every command
    total, matched = one(as_recorded, "SELECT count(*), count(*) FILTER (WHERE match_state = 'matched') FROM io")
    assert total > 500 and matched == total


def test_a_claim_the_commands_agree_with_sets_offset_zero(as_recorded, fixture_run):
    est, unc, lo, hi = one(as_recorded, "SELECT offset_ns, uncertainty_ns, agreed_lo_ns, agreed_hi_ns FROM clock_offset")
    err = max(abs(lo), abs(hi)) + 1  # a (poor) synchronization that covers the real offset
    con = views.connect(fixture_run(FIXTURE, {"clock_max_error_ns": err}))
    synced, offset, unc2, method = one(con, "SELECT synced, offset_ns, uncertainty_ns, method FROM clock_offset")
    assert synced and offset == 0 and unc2 == err and "synchronized" in method
    assert one(con, "SELECT count(*) FROM pipeline_stats WHERE name = 'clock_sync_claim_rejected'")[0] == 0
    # the clock-free network time (both directions together) does not depend on the offset
    q = """SELECT io_id, sum(dur) FILTER (WHERE stage IN ('nstack_submission', 'nstack_completion'))
           FROM io_stages WHERE stage_set = 'ntprof' GROUP BY io_id ORDER BY io_id"""
    a, b = as_recorded.execute(q).fetchall(), con.execute(q).fetchall()
    assert len(a) == len(b) > 500 and a == b
    # while each direction moves by the offset that was taken out (est; the drift term
    # of the estimate averages out to well under 50 us over the run)
    q1 = "SELECT avg(dur) FROM io_stages WHERE stage_set = 'ntprof' AND stage = 'nstack_submission'"
    shift = one(con, q1)[0] - one(as_recorded, q1)[0]
    assert abs(shift - est) < 50000, (shift, est)
