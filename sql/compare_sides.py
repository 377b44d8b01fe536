"""Load two runs for the compare report.

Maps files to views and tables only; every metric is computed in sql/compare/*.sql.
compare_connection(base, run) is a fresh DuckDB holding both runs' per-I/O stages as
cmp_source (see sql/compare/input.sql), then the compare modules (COMPARE_MODULES) on top.
"""
import json
import os
import shutil
import sys

import duckdb

from ntscope.sql import connection, memory_policy, quoting, spill, views

from ntscope.sql import compare_side_cache as side_cache

# The SQL modules of the comparison (sql/compare/) and what they require
COMPARE_MODULES = ("compare/repeats", "compare/bootstrap", "compare/lad", "compare/verdict", "compare/workload", "compare/plots")


# One side's rows, in two files; compare_connection adds its role (run) and repeat number (rep).
# IO_QUERY: one row per io. io_rank is the io's place in io_id order, ranked here over the ios
# (1 M at 1 M I/Os) so that the compare numbers its samples in (rep, io_id) order, whatever the
# file's row order, by sorting integers: sorting the 24 M stage rows of two 1 M-I/O sides by the
# io_id strings took 13.8 s, by an integer 4.2 s. The io_id itself stays out: repeated on every
# stage row it was two thirds of the file (257 against 89 MB at 1 M I/Os) and 1.6-1.9 s of
# writing it; io_rank leads back to it in the run's io. STAGE_QUERY: one row per (io, stage),
# with only the io columns that every scan of the stages reads (its group); the stage is named
# by its def_no, and the file carries the names of each def_no in its key-value metadata
# (STAGE_NAMES_KEY; add_side puts them back). At 1 M I/Os (12 M stage rows) the four name
# strings on every row were 0.7 s of a side's 2.2 s of writing, the io's other eight columns
# repeated on every row 0.4 s of the rest.
# The ranks come from a sort of (io_n, io_id) alone: sorting the whole rows by io_id moved every
# column through the sort (0.5 -> 0.33 s at 773 k I/Os); the file's row order is then
# the join's, which nothing reads (see above).
# The comparison's tables per event of its runs: 425 MB for two 1 M-I/O stock runs' 26.4 M events
# (16 bytes), 471 MB for a patched pair's 37.1 M (13).
CMP_BYTES_PER_EVENT = 20
IO_QUERY = """
WITH ranks AS (SELECT io_n, row_number() OVER (ORDER BY io_id) AS io_rank FROM io)
SELECT r.io_rank, i.io_n, i.io_type, i.size_bytes, i.qid, i.cpu, i.pid, i.comm, i.tenant, i.class, i.path,
       i.cgroup, i.file, i.namespace, i.target_device_key,
       coalesce(a.queue_ahead_cmds, 0) AS queue_ahead_cmds,
       coalesce(a.queue_other_cpu_cmds, 0) AS queue_other_cpu_cmds,
       coalesce(a.queue_other_bytes, 0) AS queue_other_bytes,
       coalesce(a.device_other_bytes, 0) AS device_other_bytes,
       w.target_wait_ns AS target_cpu_wait_ns, w.initiator_wait_ns AS initiator_cpu_wait_ns
FROM io i JOIN ranks r USING (io_n) LEFT JOIN intf_io_ahead a USING (io_n) LEFT JOIN io_cpu_wait w USING (io_n)
"""
# over cmp_side_ios: IO_QUERY's rows as a table of the run's connection (export_side)
STAGE_QUERY = """
SELECT i.io_rank, i.io_type, i.size_bytes, s.def_no, s.dur
FROM io_stage_durations s JOIN cmp_side_ios i USING (io_n)
"""

# The names of a side's def_no values, in def_no order (1, 2, ...: io_stage_definitions numbers
# them so), as written into the stages file's metadata under STAGE_NAMES_KEY (a JSON list of
# rows, one value per column of STAGE_NAME_COLUMNS, then of STAGE_CUT_COLUMNS). The names go on
# every row of the side's view; the cut (the definition's milestones: two definitions with the
# same ones give every io the same duration) goes into cmp_side_defs, which the bootstrap reads
# to sample each cut once.
STAGE_NAME_COLUMNS = (("stage_set", "VARCHAR"), ("stage", "VARCHAR"), ("seq", "INTEGER"), ("parent", "VARCHAR"),
                      ("direction", "VARCHAR"))
STAGE_CUT_COLUMNS = (("from_milestone", "VARCHAR"), ("to_milestone", "VARCHAR"), ("minus_from_milestone", "VARCHAR"),
                     ("minus_to_milestone", "VARCHAR"))
STAGE_NAMES_QUERY = ("SELECT def_no, " + ", ".join(c for c, _ in STAGE_NAME_COLUMNS + STAGE_CUT_COLUMNS)
                     + " FROM io_stage_definitions ORDER BY def_no")
STAGE_NAMES_KEY = "ntscope_stage_definitions"

# One side's info row (sql/compare/side_info.sql, loaded on the run's connection: SIDE_MODULES);
# compare_connection adds run, rep and run_dir.
SIDE_MODULES = ("compare/side_info",)
INFO_QUERY = "FROM cmp_side_info"


def as_list(dirs):
    return [dirs] if isinstance(dirs, str) else list(dirs)


def compare_connection(base_dirs, run_dirs, keep_run=False, on_first_run=None, progress=None, memory_limit=None,
                       temp_dir=None, first_run=None, cache=False, params=None):
    """Both sides' per-I/O stages in one DuckDB, with the compare views on top. A side is
    a run directory or a list of repeats of one condition (rep 1, 2, ... in list order;
    io_rank is unique per rep, not across them). on_first_run(connection) -> dict: what
    compare shows of the first run of the RUN side (JSON documents), computed on its own
    connection before it closes; first_run (a dict) receives it. keep_run: return that
    connection open too (tests query it; it then holds its memory beside the comparison's;
    never from the cache). memory_limit, temp_dir: of each connection (connection.new_connection;
    one run's connection is open at a time beside this one, which is small until every side
    is loaded). cache: read each side from side_cache when fresh, keep the ones built.
    params: {cmp_params column: value} set over the defaults (compare.params.from_flags)."""
    con = connection.limited_connection(memory_limit, temp_dir)
    # the comparison's tables (sample values, rank points, bootstrap) are read again by the
    # model: in memory while they are small (memory_policy.tables_by_size; CMP_BYTES_PER_EVENT)
    connection.attach_tables(con, memory_policy.tables_by_size(con, as_list(base_dirs) + as_list(run_dirs),
                                                  memory_policy.READ_AGAIN_SHARE, CMP_BYTES_PER_EVENT))
    run_con = None
    names = []
    # Each side's per-I/O stages go from its connection to this one through a Parquet file in
    # a private folder, not through Python: an Arrow copy of a 1 M-I/O side (about 10 M rows)
    # is gigabytes outside both DuckDB memory limits. cmp_source is a view over those files,
    # which live in this connection's spill folder (removed with it): copying them into a
    # table cost more than the compare views' scans of the columns they read.
    stash = spill.private_dir(con, "ntscope-compare-", temp_dir)
    ok = False
    try:
        for role, paths in (("base", as_list(base_dirs)), ("run", as_list(run_dirs))):
            for rep, path in enumerate(paths, 1):
                name = f"{role}_{rep}"
                first = role == "run" and rep == 1
                side = side_cache.load(path, stash) if cache and not (keep_run and first) else None
                if side is not None and first and on_first_run and side.first_run is None:
                    side = None   # kept as a base side, without the run side's documents
                rows = add_side(con, name, role, rep, path, side.stages, side.ios, side.info) if side is not None else None
                if side is not None and rows is None:
                    print(f"ntscope: note: the compare input kept in {side_cache.folder(path)} is damaged; "
                          f"building it again", file=sys.stderr)
                    side = None
                if side is not None:
                    if progress:
                        progress.step(f"{name}: the compare input kept by an earlier analyze or compare", con)
                    if first and on_first_run and first_run is not None:
                        first_run.update(side.first_run)
                else:
                    files, kept = build_side(path, role, rep, first, on_first_run, first_run, stash, cache,
                                             memory_limit, temp_dir, progress, keep_run and first)
                    run_con = kept or run_con
                    rows = add_side(con, name, role, rep, path, *files, strict=True)
                if rows == 0:
                    raise views.RunError(f"{path}: no I/O with stages (io_stages is empty); fix: check "
                                         f"`just analyze {path}` and its pipeline_stats")
                names.append(name)
        for view, prefix in (("cmp_source", "side"), ("cmp_io", "side_ios")):
            con.execute(f"CREATE VIEW {view} AS " + " UNION ALL BY NAME ".join(f"(FROM {prefix}_{n})" for n in names))
        ok = True
    finally:
        if not ok:
            shutil.rmtree(stash, ignore_errors=True)
    con.execute("CREATE TABLE cmp_run_info AS " + " UNION ALL BY NAME ".join(f"SELECT * FROM info_{n}" for n in names))
    con.execute("CREATE TABLE cmp_side_defs AS " + " UNION ALL BY NAME ".join(f"FROM defs_{n}" for n in names))
    for n in names:
        con.execute(f"DROP TABLE info_{n}")
        con.execute(f"DROP TABLE defs_{n}")
    views.load_modules(con, COMPARE_MODULES, {"cmp_params": params} if params else None)
    return (con, run_con) if keep_run else con


def add_side(con, name, role, rep, path, stages, ios, info, strict=False):
    """The views side_NAME over a side's stages file (with its role and rep, and each row's
    stage names from the file's metadata: stage_names) and side_ios_NAME over its ios file,
    and the table info_NAME from its info file; returns the side's stage row count. None when
    a file cannot be read (a damaged kept side), unless strict (a side just built: the error is
    raised)."""
    part, ios_part, info_part = (quoting.sql_str(quoting.duckdb_literal_path(f)) for f in (stages, ios, info))
    head = f"SELECT {quoting.sql_str(role)} AS run, {int(rep)} AS rep"
    try:
        defs = stage_definitions(con, part, stages)
        con.execute(f"CREATE OR REPLACE VIEW side_{name} AS {head}, * EXCLUDE (def_no, dur), {stage_names(defs)}, "
                    f"def_no, dur FROM read_parquet({part})")
        columns = STAGE_NAME_COLUMNS + STAGE_CUT_COLUMNS
        con.execute(f"CREATE OR REPLACE TABLE defs_{name} (run VARCHAR, rep INTEGER, def_no INTEGER, "
                    + ", ".join(f"{c} {t}" for c, t in columns) + ")")
        if defs:
            con.executemany(f"INSERT INTO defs_{name} VALUES ({', '.join('?' * (3 + len(columns)))})",
                            [[role, rep, i, *d] for i, d in enumerate(defs, 1)])
        con.execute(f"CREATE OR REPLACE VIEW side_ios_{name} AS {head}, * FROM read_parquet({ios_part})")
        # the counts read the files' footers: a truncated or foreign file fails here
        rows = con.execute(f"SELECT count(*) FROM side_{name}").fetchall()[0][0]
        con.execute(f"SELECT count(*) FROM side_ios_{name}").fetchall()
        con.execute(f"CREATE OR REPLACE TABLE info_{name} AS SELECT ?::VARCHAR AS run, ?::INTEGER AS rep, "
                    f"?::VARCHAR AS run_dir, * FROM read_parquet({info_part})", [role, rep, path])
        return rows
    except (duckdb.Error, ValueError):
        if strict:
            raise
        return None


def stage_definitions(con, part, stages):
    """A side's stage definitions from its stages file's metadata, in def_no order: one list
    per def_no, the values of STAGE_NAME_COLUMNS then STAGE_CUT_COLUMNS. ValueError when the
    metadata has no valid definitions (a foreign or damaged file)."""
    found = con.execute(f"SELECT decode(value) FROM parquet_kv_metadata({part}) WHERE decode(key) = ?",
                        [STAGE_NAMES_KEY]).fetchall()
    try:
        defs = json.loads(found[0][0]) if len(found) == 1 else None
    except ValueError:
        defs = None
    width = len(STAGE_NAME_COLUMNS) + len(STAGE_CUT_COLUMNS)
    # an empty list is valid: a run without stages (no initiator) has no rows either
    if not (isinstance(defs, list) and all(isinstance(d, list) and len(d) == width for d in defs)):
        raise ValueError(f"{stages}: no stage names in its metadata ({STAGE_NAMES_KEY})")
    return defs


def stage_names(defs):
    """The select list that names each row's stage: one typed list literal per column of
    STAGE_NAME_COLUMNS, indexed by def_no (a constant lookup per row; a join with a table of
    names cost a hash probe per row on every scan of cmp_source)."""
    def literal(v):
        return "NULL" if v is None else quoting.sql_str(v)
    return ", ".join(f"([{', '.join(literal(d[k]) for d in defs)}]::{t}[])[def_no] AS {c}"
                     for k, (c, t) in enumerate(STAGE_NAME_COLUMNS))


def export_side(rc, folder, name):
    """A run's side of a comparison, from its connection (views and interference tables):
    (stages file, ios file, info file) written into folder as NAME.parquet, NAME.ios.parquet
    and NAME.info.parquet."""
    file = os.path.join(folder, f"{name}.parquet")
    ios_file = os.path.join(folder, f"{name}.ios.parquet")
    info_file = os.path.join(folder, f"{name}.info.parquet")
    defs = rc.execute(STAGE_NAMES_QUERY).fetchall()
    if [d[0] for d in defs] != list(range(1, len(defs) + 1)):
        raise views.RunError(f"io_stage_definitions numbers its rows {[d[0] for d in defs]}, not 1..{len(defs)}; "
                             f"fix: number def_no with row_number() as sql/core/stages.sql does")
    names = quoting.sql_str(json.dumps([list(d[1:]) for d in defs]))
    # the ios ranked once, read by both files (a table of the run's database, whose blocks can
    # spill, unlike a temporary table's; dropped after)
    rc.execute(f"CREATE OR REPLACE TABLE cmp_side_ios AS {IO_QUERY}")
    try:
        rc.execute(f"COPY (SELECT * EXCLUDE (io_n) FROM cmp_side_ios) TO {quoting.sql_str(ios_file)} "
                   f"(FORMAT parquet)").fetchall()
        rc.execute(f"COPY ({STAGE_QUERY}) TO {quoting.sql_str(file)} "
                   f"(FORMAT parquet, KV_METADATA {{{quoting.sql_str(STAGE_NAMES_KEY)}: {names}}})").fetchall()
    finally:
        rc.execute("DROP TABLE IF EXISTS cmp_side_ios")
    views.load_modules(rc, SIDE_MODULES)
    rc.execute(f"COPY ({INFO_QUERY}) TO {quoting.sql_str(info_file)} (FORMAT parquet)").fetchall()
    return file, ios_file, info_file


def keep_analyzed_side(con, run_dir, run_key, interference, plots):
    """What analyze has at hand for a later compare of the run (its connection with the
    interference tables, the interference document and plot rows), kept in side_cache."""
    folder = spill.private_dir(con, "ntscope-side-")
    try:
        side_cache.store(run_dir, run_key, export_side(con, folder, "side"),
                         {"interference": interference, "plots": plots})
    except (duckdb.Error, views.RunError) as e:   # the report does not depend on it
        print(f"ntscope: note: analyze did not keep the compare input of {run_dir} ({str(e).splitlines()[0]}); "
              f"a later compare builds it", file=sys.stderr)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def build_side(path, role, rep, first, on_first_run, first_run, stash, cache, memory_limit, temp_dir, progress,
               keep_open):
    """One side from its run's views, into the stash: (its files as export_side returns them,
    the run's connection if keep_open else None). Kept in side_cache when cache."""
    run_key = side_cache.key(path) if cache else None   # before reading: a change meanwhile is not kept as fresh
    rc = views.connect(path, memory_limit=memory_limit, temp_dir=temp_dir, interference=True, progress=progress,
                       memory_share=memory_policy.READ_ONCE_SHARE)   # read once and closed
    try:
        files = export_side(rc, stash, f"{role}_{rep}")
        docs = on_first_run(rc) if first and on_first_run else None
        if docs is not None and first_run is not None:
            first_run.update(docs)
        if cache:
            side_cache.store(path, run_key, files, docs)
    except BaseException:
        rc.close()
        raise
    if keep_open:
        return files, rc
    rc.close()
    return files, None
