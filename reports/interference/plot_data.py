"""Rows of the interference plot view (sql/interference/plots.sql) that
interference.html draws next to interference.json. Only SELECTs here."""
from ntscope.sql.query_rows import rows_of as rows, top_series_rows

STREAMS = 8   # per-stream series: the streams with the most I/Os


def build(con):
    return {
        "streams": top_series_rows(con, "intf_stream_timeseries", "stream_id", "stream_ios",
                                   "stream_ios DESC, stream_id", STREAMS),
        "streams_total": rows(con, "SELECT count(*) AS n FROM intf_streams")[0]["n"],
    }
