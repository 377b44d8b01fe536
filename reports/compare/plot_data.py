"""Rows of the compare plot views (sql/compare/plots.sql) that compare.html draws
next to compare.json, and the run's per-stream rows. Only SELECTs here."""
from ntscope.sql.query_rows import rows_of as rows

GROUPS = 8   # groups with charts: those with the most I/Os in the run


def build(con, interference_rows, stage_set):
    """con: the compare connection; interference_rows: interference_plots.build() of the
    compared run's own connection (read before it closed)."""
    top = "FROM cmp_plot_top_groups(?, ?)"   # the groups with the most I/Os (sql/compare/plots.sql)
    return {
        "cdf": rows(con, f"SELECT * FROM cmp_plot_cdf WHERE stage_set = ? AND group_key IN ({top}) "
                         "ORDER BY group_key, seq, run, pct", [stage_set, stage_set, GROUPS]),
        "presence": rows(con, f"SELECT * FROM cmp_plot_presence WHERE stage_set = ? AND group_key IN ({top}) "
                              "ORDER BY group_key, seq", [stage_set, stage_set, GROUPS]),
        "interference": interference_rows,
    }
