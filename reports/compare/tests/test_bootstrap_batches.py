"""The compare bootstrap in batches (cmp_bootstrap_batches, filled one batch at a time as
sql/compare/bootstrap.sql's header says): any batch size gives the same resamples, so the same intervals; batches
only bound the memory a comparison needs."""
from ntscope.sql import compare_sides as load
from ntscope.sql import views

BASE, RUN = "lab-6.1-patched-target-cpu-base", "lab-6.1-patched-target-cpu"
LAD = ("SELECT group_key, stage_set, stage, statistic, lad, lad_lo, lad_hi, change_lo_ns, change_hi_ns, significant "
       "FROM cmp_lad ORDER BY ALL")


def rerun_with_batch_draws(con, draws):
    """The comparison again with cmp_params' bootstrap_batch_draws at DRAWS (the loader runs
    the bootstrap and what depends on it again)."""
    views.load_modules(con, load.COMPARE_MODULES, {"cmp_params": {"bootstrap_batch_draws": draws}})


def test_batch_size_changes_nothing_but_the_batches(fixture_run):
    con = load.compare_connection(fixture_run(BASE), fixture_run(RUN), cache=True)
    default_batches = con.execute("SELECT count(DISTINCT batch) FROM cmp_bootstrap_batches").fetchone()[0]
    want = con.execute(LAD).fetchall()
    rows = con.execute("SELECT count(*) FROM cmp_bootstrap").fetchone()[0]
    for draws in (1, 2**31 - 1):     # one part per batch; everything in one batch
        if draws > 1:   # one batch of all draws needs more than the default 2 GB (why batches exist)
            con.execute("SET memory_limit = '8GB'")
        rerun_with_batch_draws(con, draws)
        batches, parts = con.execute("SELECT count(DISTINCT batch), count(*) FROM cmp_bootstrap_batches").fetchone()
        assert batches == (parts if draws == 1 else 1)
        assert con.execute("SELECT count(*) FROM cmp_bootstrap").fetchone()[0] == rows
        assert con.execute(LAD).fetchall() == want
    # the default splits this comparison (2 runs x 3 stage sets, ~3000 I/Os a side)
    assert 1 < default_batches < parts
    # each cut is resampled once (parts: 2 runs x 23 cuts), every definition gets its rows (2 x 34)
    assert parts == 2 * 23
    assert rows == 200 * con.execute("SELECT count(*) FROM cmp_sample_parts").fetchone()[0] == 200 * 2 * 34


def test_one_cut_has_the_same_intervals_under_each_of_its_names(fixture_run):
    """Two definitions with the same milestones (each s_notation stage is an ntprof cut; stock's
    end_to_end and host_completion are ntprof's) give every io the same duration: one
    population, so the same statistics and the same bootstrap intervals under each name."""
    con = load.compare_connection(fixture_run(BASE), fixture_run(RUN), cache=True)
    same = con.execute("""
        WITH d AS (SELECT stage_set, stage, from_milestone, to_milestone, coalesce(minus_from_milestone, '') AS mf,
                          coalesce(minus_to_milestone, '') AS mt FROM stage_definitions),
        pairs AS (SELECT a.stage_set AS set_a, a.stage AS stage_a, b.stage_set AS set_b, b.stage AS stage_b
                  FROM d a JOIN d b USING (from_milestone, to_milestone, mf, mt)
                  WHERE (a.stage_set, a.stage) < (b.stage_set, b.stage))
        SELECT p.set_a, p.stage_a, p.set_b, p.stage_b, x.group_key, x.statistic,
               (x.base_ns, x.run_ns, x.lad, x.lad_lo, x.lad_hi, x.change_lo_ns, x.change_hi_ns, x.significant)
             = (y.base_ns, y.run_ns, y.lad, y.lad_lo, y.lad_hi, y.change_lo_ns, y.change_hi_ns, y.significant) AS equal
        FROM pairs p
        JOIN cmp_lad x ON x.stage_set = p.set_a AND x.stage = p.stage_a
        JOIN cmp_lad y ON y.stage_set = p.set_b AND y.stage = p.stage_b
                      AND y.group_key = x.group_key AND y.statistic = x.statistic
        ORDER BY ALL""").fetchall()
    # 9 s_notation stages and 2 stock ones share an ntprof cut (one stock pair is also an
    # s_notation one): 11 pairs and more, x 3 statistics, in the one group of this fixture
    assert len(same) >= 11 * 3, same
    assert [r for r in same if not r[-1]] == []
