"""The interference document (interference.json): the intf_* views of one run as rows.
No computation here."""
from ntscope import __version__
from ntscope.sql.query_rows import rows_of

ORDER = {
    "intf_streams": "stream_id",
    "intf_stream_breakdown": "stream_id, stage_set, seq",
    "intf_stream_sharing": "stream_id, resource, other_stream_id",
    "intf_stream_verdict": "stream_id",
    "intf_timeseries": "resource_kind, resource, bin",
    "intf_resource_summary": "resource_kind, resource",
}


def view(con, name):
    return rows_of(con, f"SELECT * FROM {name} ORDER BY {ORDER[name]}")


def interference_model(con, run_dir):
    return {
        "schema": "ntscope.interference/1",
        "ntscope_version": __version__,
        "run_dir": run_dir,
        "streams": view(con, "intf_streams"),
        "stream_verdicts": view(con, "intf_stream_verdict"),
        "sharing": view(con, "intf_stream_sharing"),
        "breakdown": view(con, "intf_stream_breakdown"),
        "timeseries": view(con, "intf_timeseries"),
        "resource_summary": view(con, "intf_resource_summary"),
        "primary_stage_set": (rows_of(con, "SELECT stage_set FROM primary_stage_set") or [{"stage_set": None}])[0]["stage_set"],
    }
