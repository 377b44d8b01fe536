"""A compare side's rows name their io by io_rank (reports/compare/load.py SOURCE_QUERY), not by
the io_id string: the recipe in sql/compare/compare_10_input.sql leads from io_rank back to the
run's io, whose columns and stage durations are the side's, and the bootstrap's sample order
(rep, io_rank) is io_id order."""
from ntscope.compare import load

RANKED_IO = "SELECT *, row_number() OVER (ORDER BY io_id) AS io_rank FROM io"   # as documented


def test_io_rank_leads_back_to_the_runs_io(fixture_run):
    base, run = fixture_run("stock-randread-4k-qd8"), fixture_run("stock-randrw-mixed")
    con, run_con = load.compare_connection([base], [run], keep_run=True)
    try:
        side = {r[0]: r[1:] for r in con.execute(
            "SELECT DISTINCT io_rank, io_type, size_bytes, qid, cpu, pid FROM cmp_source WHERE run = 'run'").fetchall()}
        ios = {r[0]: r[1:] for r in run_con.execute(
            f"SELECT io_rank, io_type, size_bytes, qid, cpu, pid FROM ({RANKED_IO})").fetchall()}
        assert len(side) > 1000 and set(side) <= set(ios)
        assert all(side[k] == ios[k] for k in side)
        e2e = dict(con.execute("SELECT io_rank, dur FROM cmp_source WHERE run = 'run' AND stage_set = 'stock' "
                               "AND stage = 'end_to_end' AND dur IS NOT NULL").fetchall())
        e2e_run = dict(run_con.execute(
            f"SELECT r.io_rank, s.dur FROM ({RANKED_IO}) r JOIN io_stages s USING (io_id) "
            "WHERE s.stage_set = 'stock' AND s.stage = 'end_to_end' AND s.dur IS NOT NULL").fetchall())
        assert len(e2e) > 1000 and e2e == e2e_run
        # the first sample of each part is the part's io with the smallest io_id
        first = con.execute("""
            SELECT p.part_id, any_value(v.dur) AS first_dur, min_by(s.dur, s.io_rank) AS lowest_dur
            FROM cmp_sample_parts p JOIN cmp_io_stage s USING (run, group_key, stage_set, stage)
            JOIN cmp_sample_vals v ON v.sample_key = (p.part_id << 32) + 1
            GROUP BY p.part_id""").fetchall()
        assert first and all(r[1] == r[2] for r in first)
    finally:
        run_con.close()
        con.close()
