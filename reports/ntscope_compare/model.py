"""Fetch the compare / interference views as plain rows (dicts). No computation here."""
from . import load

RUN_INTERFERENCE = ("intf_streams", "intf_stream_sharing", "intf_stream_verdict", "intf_timeseries")
ORDER = {
    "cmp_verdict": "group_key",
    "cmp_lad": "group_key, stage_set, seq, statistic",
    "cmp_queue_evidence": "run, group_key",
    "cmp_run_info": "run",
    "cmp_params": "1",
    "intf_streams": "stream_id",
    "intf_stream_breakdown": "stream_id, stage_set, seq",
    "intf_stream_sharing": "stream_id, resource, other_stream_id",
    "intf_stream_verdict": "stream_id",
    "intf_timeseries": "resource_kind, resource, bin",
}


def rows(con, view, where=None, order=None):
    q = f"SELECT * FROM {view}" + (f" WHERE {where}" if where else "") + f" ORDER BY {order or ORDER.get(view, '1')}"
    rel = con.sql(q)
    cols = rel.columns
    return [dict(zip(cols, r)) for r in rel.fetchall()]


def interference_model(con, run_dir):
    return {
        "schema": "ntscope.interference/1",
        "run_dir": run_dir,
        "streams": rows(con, "intf_streams"),
        "stream_verdicts": rows(con, "intf_stream_verdict"),
        "sharing": rows(con, "intf_stream_sharing"),
        "breakdown": rows(con, "intf_stream_breakdown"),
        "timeseries": rows(con, "intf_timeseries"),
    }


def compare_model(base_dir, run_dir):
    con, run_con = load.compare_connection(base_dir, run_dir, keep_run=True)
    info = {r["run"]: r for r in rows(con, "cmp_run_info")}
    stage_set = (con.sql("SELECT stage_set FROM cmp_stage_set").fetchall() or [None])[0]
    model = {
        "schema": "ntscope.compare/1",
        "base": info.get("base"),
        "run": info.get("run"),
        "params": rows(con, "cmp_params")[0],
        "stage_set": stage_set[0] if stage_set else None,
        "verdicts": rows(con, "cmp_verdict"),
        "lad": rows(con, "cmp_lad"),
        "queue_evidence": rows(con, "cmp_queue_evidence"),
        "interference": interference_model(run_con, run_dir),
    }
    run_con.close()
    con.close()
    return model
