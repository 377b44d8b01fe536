"""Load two runs for the compare report.

Maps files to views and tables only; every metric is computed in sql/compare/*.sql.
compare_connection(base, run) is a fresh DuckDB holding both runs' per-I/O stages as
cmp_source (see compare_10_input.sql), then compare_*.sql on top.
"""
import os

from ntscope.sql import views

COMPARE_SQL = os.path.join(os.path.dirname(os.path.abspath(views.__file__)), "compare")
# Heavy compare layers, computed once per comparison.
MATERIALIZE = ("cmp_sample_parts", "cmp_sample_vals", "cmp_stage_stats", "cmp_bootstrap", "cmp_lad", "cmp_queue_evidence")


def compare_files():
    return sorted(os.path.join(COMPARE_SQL, f) for f in os.listdir(COMPARE_SQL)
                  if f.startswith("compare_") and f.endswith(".sql"))


SOURCE_QUERY = """
SELECT ? AS run, s.io_id, i.io_type, i.size_bytes, i.qid, i.cpu, i.pid, i.comm,
       s.stage_set, s.stage, s.seq, s.parent, s.direction, s.dur,
       coalesce(a.queue_ahead_cmds, 0) AS queue_ahead_cmds,
       coalesce(a.queue_other_cpu_cmds, 0) AS queue_other_cpu_cmds,
       coalesce(a.queue_other_bytes, 0) AS queue_other_bytes,
       coalesce(a.device_other_bytes, 0) AS device_other_bytes
FROM io_stages s JOIN io i USING (io_id) LEFT JOIN intf_io_ahead a USING (io_id)
"""

INFO_QUERY = """
SELECT ? AS run, ? AS run_dir, (SELECT uncertainty_ns FROM clock_offset) AS offset_uncertainty_ns,
       string_agg(DISTINCT coalesce(trace_clock, '?'), ',') AS trace_clocks,
       (SELECT synced FROM clock_offset) AS clock_synced,
       (SELECT string_agg(name, ', ' ORDER BY name) FROM pipeline_stats WHERE name LIKE 'input_error:%') AS input_errors,
       string_agg(DISTINCT role, ',' ORDER BY role) AS roles,
       (SELECT sum(local_per_s) FROM target_local_io) AS target_local_io_per_s
FROM hosts
"""


def compare_connection(base_dir, run_dir, keep_run=False, progress=None):
    """Both runs' per-I/O stages in one DuckDB, with the compare views on top.
    keep_run: also return the run's own connection (its interference views)."""
    import duckdb
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    for role, path in (("base", base_dir), ("run", run_dir)):
        rc = views.connect(path, interference=True, progress=progress)
        src = rc.sql(SOURCE_QUERY, params=[role]).to_arrow_table()
        info = rc.sql(INFO_QUERY, params=[role, path]).to_arrow_table()
        if src.num_rows == 0:
            raise views.RunError(f"{path}: no I/O with stages (io_stages is empty); fix: check "
                           f"`just analyze {path}` and its pipeline_stats")
        con.register(f"src_{role}", src)
        con.register(f"info_{role}", info)
        if keep_run and role == "run":
            run_con = rc
        else:
            rc.close()
    with open(views.STAGE_TABLE_SQL) as f:   # the stage table and vocabularies the verdict joins
        con.execute(f.read())
    con.execute("CREATE TABLE cmp_source AS SELECT * FROM src_base UNION ALL BY NAME SELECT * FROM src_run")
    con.execute("CREATE TABLE cmp_run_info AS SELECT * FROM info_base UNION ALL BY NAME SELECT * FROM info_run")
    for path in compare_files():
        with open(path) as f:
            con.execute(views.as_tables(f.read(), MATERIALIZE))
    return (con, run_con) if keep_run else con
