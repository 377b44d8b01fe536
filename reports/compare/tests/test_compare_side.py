"""A compare side's rows name their io by io_rank (sql/compare_sides.py IO_QUERY, STAGE_QUERY), not by
the io_id string: the recipe in sql/compare/input.sql leads from io_rank back to the
run's io, whose columns and stage durations are the side's, and the bootstrap's sample order
(rep, io_rank) is io_id order."""
from ntscope.sql import compare_sides as load

RANKED_IO = "SELECT *, row_number() OVER (ORDER BY io_id) AS io_rank FROM io"   # as documented


def test_io_rank_leads_back_to_the_runs_io(fixture_run):
    base, run = fixture_run("stock-randread-4k-qd8"), fixture_run("stock-randrw-mixed")
    con, run_con = load.compare_connection([base], [run], keep_run=True)
    try:
        side = {r[0]: r[1:] for r in con.execute(
            "SELECT io_rank, io_type, size_bytes, qid, cpu, pid FROM cmp_io WHERE run = 'run'").fetchall()}
        ios = {r[0]: r[1:] for r in run_con.execute(
            f"SELECT io_rank, io_type, size_bytes, qid, cpu, pid FROM ({RANKED_IO})").fetchall()}
        assert len(side) > 1000 and set(side) == set(ios)
        assert all(side[k] == ios[k] for k in side)
        # each stage row's io columns are its io's, and every io has a row for each definition
        stage_ios = con.execute("SELECT io_rank, any_value(io_type), any_value(size_bytes), count(*), "
                                "count(DISTINCT (io_type, size_bytes)) FROM cmp_source WHERE run = 'run' "
                                "GROUP BY io_rank").fetchall()
        defs = run_con.execute("SELECT count(*) FROM io_stage_definitions").fetchall()[0][0]
        assert {r[0] for r in stage_ios} == set(side)
        assert all(r[1:3] == side[r[0]][:2] and r[3] == defs and r[4] == 1 for r in stage_ios)
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
