"""Rows of the interference plot view (sql/interference/30_plots.sql) that
interference.html draws next to interference.json. Only SELECTs here."""
from ntscope.sql.views import rows_of as rows

STREAMS = 8   # per-stream series: the streams with the most I/Os


def build(con):
    top = ("SELECT stream_id FROM (SELECT DISTINCT stream_id, stream_ios FROM intf_stream_timeseries) "
           "ORDER BY stream_ios DESC, stream_id LIMIT ?")
    return {
        "streams": rows(con, f"SELECT * FROM intf_stream_timeseries WHERE stream_id IN ({top}) "
                             "ORDER BY stream_ios DESC, stream_id, bin", [STREAMS]),
        "streams_total": rows(con, "SELECT count(*) AS n FROM intf_streams")[0]["n"],
    }
