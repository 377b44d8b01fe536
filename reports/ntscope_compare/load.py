"""Load runs for the compare and interference reports.

Maps files to views and tables only; every metric is computed in sql/compare/*.sql.
  run_connection(run_dir)         one run: sql/load_views.py + sql/compare/interference_*.sql
  compare_connection(base, run)   a fresh DuckDB holding both runs' per-I/O stages as
                                  cmp_source (see compare_10_input.sql) + compare_*.sql
"""
import glob
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SQL_DIR = os.path.join(REPO, "sql")
COMPARE_SQL = os.path.join(SQL_DIR, "compare")
sys.path.insert(0, SQL_DIR)
import load_views  # noqa: E402  (the analysis views' loader, owned by sql/)

RunError = load_views.RunError
# Heavy compare layers, computed once per comparison.
MATERIALIZE = ("cmp_samples", "cmp_bootstrap", "cmp_lad", "intf_io", "intf_io_ahead_pairs", "intf_io_ahead")


def resolve_run(name, runs_dir=None):
    """A run given as a path, or as a name under runs/."""
    runs_dir = runs_dir or os.environ.get("NTSCOPE_RUNS", os.path.join(REPO, "runs"))
    for cand in (name, os.path.join(runs_dir, name)):
        if os.path.isdir(cand):
            return os.path.abspath(cand)
    raise RunError(f"no run directory '{name}' (looked in . and {runs_dir}); "
                   f"fix: pass a run name under runs/ or a path")


def sql_files(prefix):
    return sorted(glob.glob(os.path.join(COMPARE_SQL, prefix + "_*.sql")))


def run_sql_files(con, prefix, materialize=MATERIALIZE):
    for path in sql_files(prefix):
        with open(path) as f:
            con.execute(load_views.as_tables(f.read(), materialize))


def run_connection(run_dir):
    con = load_views.connect(run_dir)
    run_sql_files(con, "interference")
    return con


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
       (SELECT synced FROM clock_offset) AS clock_synced
FROM hosts
"""


def compare_connection(base_dir, run_dir, keep_run=False):
    """Both runs' per-I/O stages in one DuckDB, with the compare views on top.
    keep_run: also return the run's own connection (its interference views)."""
    import duckdb
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    for role, path in (("base", base_dir), ("run", run_dir)):
        rc = run_connection(path)
        src = rc.sql(SOURCE_QUERY, params=[role]).to_arrow_table()
        info = rc.sql(INFO_QUERY, params=[role, path]).to_arrow_table()
        if src.num_rows == 0:
            raise RunError(f"{path}: no I/O with stages (io_stages is empty); fix: check "
                           f"`just analyze {path}` and its pipeline_stats")
        con.register(f"src_{role}", src)
        con.register(f"info_{role}", info)
        if keep_run and role == "run":
            run_con = rc
        else:
            rc.close()
    con.execute("CREATE TABLE cmp_source AS SELECT * FROM src_base UNION ALL BY NAME SELECT * FROM src_run")
    con.execute("CREATE TABLE cmp_run_info AS SELECT * FROM info_base UNION ALL BY NAME SELECT * FROM info_run")
    run_sql_files(con, "compare")
    return (con, run_con) if keep_run else con
