"""Rows of the plot views (sql/report/plots.sql) that report.html draws next to report.json's
histograms and CDFs. Only SELECTs here: no arithmetic on the data. Everything is an
aggregate (groups x stages x bins x buckets), so a 1 M-I/O run gives a page of the same
size as a 1 k-I/O one."""
from ntscope.sql.query_rows import rows_of as rows, top_series_rows

CHART_GROUPS = 8        # per-group charts (CDF, histogram, tail, heatmap): the largest groups
BREAKDOWN_GROUPS = 40   # bars of the stacked breakdown: the largest groups
SERIES = 10             # time-series lines: 'all' and the busiest queues


def build(con, doc):
    """The plot rows for doc (report.json): for its primary stage set (primary_stage_set) and
    its largest groups (doc['groups'] is ordered by I/O count)."""
    stage_set = doc["primary_stage_set"]
    chart_groups = [g["key_text"] for g in doc["groups"][:CHART_GROUPS]]
    bar_groups = [g["key_text"] for g in doc["groups"][:BREAKDOWN_GROUPS]]
    return {
        "stage_set": stage_set,
        "presence": rows(con, "SELECT * FROM plot_stage_presence WHERE stage_set = ? AND list_contains(?, group_key) "
                              "ORDER BY group_key, seq", [stage_set, bar_groups]),
        "tail": rows(con, "SELECT * FROM plot_tail_breakdown WHERE stage_set = ? AND list_contains(?, group_key) "
                          "ORDER BY group_key, cohort, seq", [stage_set, chart_groups]),
        "heatmap": rows(con, "SELECT * FROM plot_latency_heatmap WHERE stage_set = ? AND list_contains(?, group_key) "
                             "ORDER BY group_key, bin, bucket", [stage_set, chart_groups]),
        "queue_timeseries": top_series_rows(con, "plot_queue_timeseries", "queue", "queue_completions",
                                            "queue = 'all' DESC, queue_completions DESC, queue", SERIES),
        "queues_total": rows(con, "SELECT count(DISTINCT queue) AS n FROM report_timeseries")[0]["n"],
    }
