"""Rows of the interference plot view (sql/interference/30_plots.sql) that
interference.html draws next to interference.json. Only SELECTs here."""
from ntscope.sql.views import rows_of as rows

STREAMS = 8   # per-stream series: the streams with the most I/Os


def build(con):
    # the view evaluated once for both the ranking and the rows (MATERIALIZED): read twice, it
    # aggregated every I/O twice (0.25 -> 0.12 s at 773 k I/Os, the same rows)
    return {
        "streams": rows(con, "WITH t AS MATERIALIZED (FROM intf_stream_timeseries), "
                             "top AS (SELECT stream_id FROM (SELECT DISTINCT stream_id, stream_ios FROM t) "
                             "        ORDER BY stream_ios DESC, stream_id LIMIT ?) "
                             "SELECT * FROM t WHERE stream_id IN (FROM top) "
                             "ORDER BY stream_ios DESC, stream_id, bin", [STREAMS]),
        "streams_total": rows(con, "SELECT count(*) AS n FROM intf_streams")[0]["n"],
    }
