"""Load two runs for the compare report.

Maps files to views and tables only; every metric is computed in sql/compare/*.sql.
compare_connection(base, run) is a fresh DuckDB holding both runs' per-I/O stages as
cmp_source (see compare_10_input.sql), then compare_*.sql on top.
"""
import os
import shutil

from ntscope.sql import views

COMPARE_SQL = os.path.join(os.path.dirname(os.path.abspath(views.__file__)), "compare")


def compare_files():
    return sorted(os.path.join(COMPARE_SQL, f) for f in os.listdir(COMPARE_SQL)
                  if f.startswith("compare_") and f.endswith(".sql"))


# {run}, {rep}: the side's role and repeat number as SQL literals (compare_connection)
SOURCE_QUERY = """
SELECT {run} AS run, {rep} AS rep, s.io_id, i.io_type, i.size_bytes, i.qid, i.cpu, i.pid, i.comm,
       s.stage_set, s.stage, s.seq, s.parent, s.direction, s.dur,
       coalesce(a.queue_ahead_cmds, 0) AS queue_ahead_cmds,
       coalesce(a.queue_other_cpu_cmds, 0) AS queue_other_cpu_cmds,
       coalesce(a.queue_other_bytes, 0) AS queue_other_bytes,
       coalesce(a.device_other_bytes, 0) AS device_other_bytes
FROM io_stages s JOIN io i USING (io_id) LEFT JOIN intf_io_ahead a USING (io_id)
"""

INFO_QUERY = """
SELECT ? AS run, ? AS rep, ? AS run_dir, (SELECT max(uncertainty_ns) FROM clock_offset) AS offset_uncertainty_ns,
       string_agg(DISTINCT coalesce(trace_clock, '?'), ',') AS trace_clocks,
       (SELECT bool_and(synced) FROM clock_offset) AS clock_synced,
       (SELECT string_agg(name, ', ' ORDER BY name) FROM pipeline_stats WHERE name LIKE 'input_error:%') AS input_errors,
       string_agg(DISTINCT role, ',' ORDER BY role) AS roles,
       (SELECT sum(local_per_s) FROM target_local_io) AS target_local_io_per_s,
       string_agg(DISTINCT digest, ',' ORDER BY digest) FILTER (WHERE role = 'initiator') AS digest,
       (SELECT avg(wait_ns) FROM io_work_runs WHERE role = 'initiator') AS initiator_io_work_wait_ns,
       (SELECT avg(wait_ns) FROM io_work_runs WHERE role = 'target') AS target_io_work_wait_ns,
       (SELECT avg(wait_ns) FROM net_rx_runs WHERE role = 'initiator') AS initiator_net_rx_wait_ns,
       (SELECT avg(wait_ns) FROM net_rx_runs WHERE role = 'target') AS target_net_rx_wait_ns
FROM hosts
"""


def as_list(dirs):
    return [dirs] if isinstance(dirs, str) else list(dirs)


def compare_connection(base_dirs, run_dirs, keep_run=False, on_first_run=None, progress=None, memory_limit=None,
                       temp_dir=None):
    """Both sides' per-I/O stages in one DuckDB, with the compare views on top. A side is
    a run directory or a list of repeats of one condition (rep 1, 2, ... in list order;
    io_id stays unique per rep, not across them). on_first_run(connection): called with the
    first run's own connection (its interference views) before it closes, for what compare
    reads there. keep_run: return that connection open too (tests query it; it then holds
    its memory beside the comparison's). memory_limit, temp_dir: of each connection
    (views.new_connection; one run's connection is open at a time beside this one, which is
    small until every side is loaded)."""
    con = views.new_connection(memory_limit, temp_dir)
    run_con = None
    names = []
    # Each side's per-I/O stages go from its connection to this one through a Parquet file in
    # a private folder, not through Python: an Arrow copy of a 1 M-I/O side (about 10 M rows)
    # is gigabytes outside both DuckDB memory limits. cmp_source is a view over those files,
    # which live in this connection's spill folder (removed with it): copying them into a
    # table cost more than the compare views' scans of the columns they read.
    stash = views.private_dir(con, "ntscope-compare-", temp_dir)
    ok = False
    try:
        parts = []
        for role, paths in (("base", as_list(base_dirs)), ("run", as_list(run_dirs))):
            for rep, path in enumerate(paths, 1):
                rc = views.connect(path, memory_limit=memory_limit, temp_dir=temp_dir, interference=True,
                                   progress=progress)
                name = f"{role}_{rep}"
                file = os.path.join(stash, f"{name}.parquet")
                part = views.sql_str(views.duckdb_literal_path(file))   # read_parquet globs; COPY TO does not
                rc.execute(f"COPY ({SOURCE_QUERY.format(run=views.sql_str(role), rep=int(rep))}) "
                           f"TO {views.sql_str(file)} (FORMAT parquet)").fetchall()
                if con.execute(f"SELECT count(*) FROM read_parquet({part})").fetchall()[0][0] == 0:
                    raise views.RunError(f"{path}: no I/O with stages (io_stages is empty); fix: check "
                                         f"`just analyze {path}` and its pipeline_stats")
                parts.append(part)
                con.register(f"info_{name}", rc.sql(INFO_QUERY, params=[role, rep, path]).to_arrow_table())
                names.append(name)
                if role == "run" and rep == 1 and on_first_run:
                    on_first_run(rc)
                if keep_run and role == "run" and rep == 1:
                    run_con = rc
                else:
                    rc.close()
        con.execute(f"CREATE VIEW cmp_source AS FROM read_parquet([{', '.join(parts)}], union_by_name = true)").fetchall()
        ok = True
    finally:
        if not ok:
            shutil.rmtree(stash, ignore_errors=True)
    with open(views.STAGE_TABLE_SQL) as f:   # the stage table and vocabularies the verdict joins
        con.execute(f.read())
    con.execute("CREATE TABLE cmp_run_info AS " + " UNION ALL BY NAME ".join(f"SELECT * FROM info_{n}" for n in names))
    for path in compare_files():
        with open(path) as f:
            con.execute(f.read())
        if os.path.basename(path) == "compare_20_bootstrap.sql":
            fill_bootstrap(con)
    return (con, run_con) if keep_run else con


def fill_bootstrap(con):
    """cmp_bootstrap, one batch of cmp_bootstrap_batches at a time (bounded memory; the rows
    are those of one statement over all parts)."""
    for (b,) in con.execute("SELECT DISTINCT batch FROM cmp_bootstrap_batches ORDER BY batch").fetchall():
        con.execute(f"INSERT INTO cmp_bootstrap FROM cmp_bootstrap_batch({int(b)})")
