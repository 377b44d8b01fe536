"""The R2T round trip of large writes on a real patched capture (fixtures/lab-6.1-patched-
write-128k: 128 KiB writes, which nvme-tcp sends after the target's R2T): the target's
transport stage splits into its own CPU time and the wait for the write data, so a slow
network on writes is not mistaken for a busy target. Needs the converter (NTSCOPE_BIN)."""
from ntscope.sql import views



def test_r2t_wait_splits_the_target_transport_stage(fixture_run):
    con = views.connect(fixture_run("lab-6.1-patched-write-128k"))
    rows = con.execute("""
        SELECT i.io_type, i.size_bytes, count(*) AS n,
               count(*) FILTER (WHERE p.dur = c.dur + w.dur) AS sums,
               count(*) FILTER (WHERE w.dur > 0) AS waited,
               avg(w.dur) AS wait_ns, avg(p.dur) AS parent_ns
        FROM io i
        JOIN io_stages p ON p.io_id = i.io_id AND p.stage_set = 'ntprof' AND p.stage = 'nvmet_tcp_submission'
        JOIN io_stages c ON c.io_id = i.io_id AND c.stage_set = 'ntprof' AND c.stage = 'nvmet_tcp_cmd_recv'
        JOIN io_stages w ON w.io_id = i.io_id AND w.stage_set = 'ntprof' AND w.stage = 'nvmet_tcp_r2t_wait'
        GROUP BY ALL""").fetchall()
    by = {(t, size): (n, sums, waited, wait, parent) for t, size, n, sums, waited, wait, parent in rows}
    n, sums, waited, wait, parent = by[("write", 131072)]
    assert n > 50 and sums == n and waited == n  # every 128 KiB write waited for its data
    assert wait > 0.5 * parent  # the data round trip, not the target's CPU, is most of the stage
    # the connect-time reads of the capture have no R2T: a zero-length wait
    for (t, size), (n, sums, waited, _, _) in by.items():
        if t == "read":
            assert sums == n and waited == 0


def test_stock_join_pairs_a_completion_that_reports_the_transfer_tag(fresh_run, drop_systems):
    """On 6.1 nvme_complete_rq of a write that needed R2T reads the H2CData header's transfer
    tag where the command id was: the fixture made stock (its nvme_tcp / nvmet_tcp events
    dropped) still pairs every such completion with its submit, through the block request,
    and matches every write with the target's command."""
    run = fresh_run("lab-6.1-patched-write-128k")
    drop_systems(run, "initiator", "nvme_tcp")
    drop_systems(run, "target", "nvmet_tcp")
    con = views.connect(run)
    try:
        assert con.execute("SELECT mode FROM analysis_mode").fetchall() == [("stock",)]
        cmds = con.execute("""
            SELECT pairing, state, complete_cid <> cid AS transfer_tag, count(*) FROM nvme_commands
            WHERE role = 'initiator' AND kind = 'io' AND io_type = 'write' GROUP BY ALL""").fetchall()
        ios = con.execute("SELECT io_type, size_bytes, match_state, count(*) FROM io GROUP BY ALL").fetchall()
    finally:
        con.close()
    assert len(cmds) == 1 and cmds[0][:3] == ("block", "complete", True) and cmds[0][3] > 100, cmds
    assert ios == [("write", 131072, "matched", cmds[0][3])], ios
