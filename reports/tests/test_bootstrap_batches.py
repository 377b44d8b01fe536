"""The compare bootstrap in batches (cmp_bootstrap_batches, reports/compare/load.py
fill_bootstrap): any batch size gives the same resamples, so the same intervals; batches
only bound the memory a comparison needs."""
import os

from ntscope.compare import load

BASE, RUN = "lab-6.1-patched-target-cpu-base", "lab-6.1-patched-target-cpu"
LAD = ("SELECT group_key, stage_set, stage, statistic, lad, lad_lo, lad_hi, change_lo_ns, change_hi_ns, significant "
       "FROM cmp_lad ORDER BY ALL")


def rerun_from_bootstrap(con):
    for name in ("compare_20_bootstrap.sql", "compare_25_lad.sql"):
        with open(os.path.join(load.COMPARE_SQL, name)) as f:
            con.execute(f.read())
        if name == "compare_20_bootstrap.sql":
            load.fill_bootstrap(con)


def test_batch_size_changes_nothing_but_the_batches(fixture_run):
    con = load.compare_connection(fixture_run(BASE), fixture_run(RUN))
    default_batches = con.execute("SELECT count(DISTINCT batch) FROM cmp_bootstrap_batches").fetchone()[0]
    want = con.execute(LAD).fetchall()
    rows = con.execute("SELECT count(*) FROM cmp_bootstrap").fetchone()[0]
    for draws in (1, 2**31 - 1):     # one part per batch; everything in one batch
        con.execute(f"UPDATE cmp_params SET bootstrap_batch_draws = {draws}")
        if draws > 1:   # one batch of all draws needs more than the default 2 GB (why batches exist)
            con.execute("SET memory_limit = '8GB'")
        rerun_from_bootstrap(con)
        batches, parts = con.execute("SELECT count(DISTINCT batch), count(*) FROM cmp_bootstrap_batches").fetchone()
        assert batches == (parts if draws == 1 else 1)
        assert con.execute("SELECT count(*) FROM cmp_bootstrap").fetchone()[0] == rows
        assert con.execute(LAD).fetchall() == want
    # the default splits this comparison (2 runs x 3 stage sets, ~3000 I/Os a side)
    assert 1 < default_batches < parts
    assert rows == 200 * parts
