"""The sweep document (sweep.json): the sweep_* views as rows. No computation here."""
from ntscope import __version__
from ntscope.sql.query_rows import rows_of

from . import load


def sweep_model(run_dirs, param=None, values=None, progress=None, memory_limit=None, temp_dir=None):
    con = load.connection(run_dirs, param, values, progress, memory_limit=memory_limit, temp_dir=temp_dir)
    doc = {
        "schema": "ntscope.sweep/1",
        "ntscope_version": __version__,
        "param": param,
        "stage_set": con.execute("SELECT stage_set FROM sweep_stage_set").fetchone()[0],
        "runs": rows_of(con, "SELECT * FROM sweep_run_info ORDER BY run_idx"),
        "points": rows_of(con, "SELECT * FROM sweep_points ORDER BY group_key, seq, run_idx"),
        "most_amplified": rows_of(con, "SELECT * FROM sweep_most_amplified ORDER BY group_key"),
    }
    con.close()
    return doc
