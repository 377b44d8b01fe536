"""Per-I/O data on disk: report/io.parquet (one row per I/O the report covers) and
report/io_stages.parquet (one row per I/O and stage), written by DuckDB COPY straight from the
views of sql/report/export.sql (streamed, zstd): nothing passes through Python. Columns and units:
reports/README.md "Per-I/O data"."""
import os
import shutil
import subprocess

from ntscope import __version__
from ntscope.common import converter
from ntscope.common.errors import NtscopeError
from ntscope.sql.quoting import sql_ident, sql_int, sql_str
from ntscope.sql.spill import private_dir

# the file's key-value metadata names the ntscope version that wrote it
PARQUET = (f"(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880, "
           f"KV_METADATA {{ntscope_version: {sql_str(__version__)}}})")


def copy_query(con, query, path):
    """A small table of an analysis (tenant_seconds, outages, ...) as one zstd Parquet file."""
    con.execute(f"COPY ({query}) TO {sql_str(path)} (FORMAT parquet, COMPRESSION zstd)")


# io_stages.parquet is sorted in parts of about this many rows (one sort each, in memory under
# the default limit): a patched run of 662 k I/Os (22 M rows) sorted in one statement spilled
STAGE_PART_ROWS = 4_000_000


def milestones(con):
    """The milestone columns of io.parquet, in the order of an I/O's life (io_export_milestones):
    (name, stock) pairs, stock true for a column of io_stock_milestones (stock_milestone_names)."""
    return con.execute("SELECT e.milestone, s.milestone IS NOT NULL FROM io_export_milestones e "
                       "LEFT JOIN stock_milestone_names s USING (milestone) "
                       "ORDER BY e.mean_offset_ns, e.milestone").fetchall()


def io_sql(con):
    """io_export (but its join key io_n) plus one column per milestone (ns, initiator clock), and
    the ORDER BY of io.parquet's rows (by first milestone, then io_id): (select, order). The stock
    milestones are io_stock_milestones' columns; the NVMe/TCP ones come from
    io_tcp_milestone_spans (a first_ts and a last_ts per milestone number: tcp_milestones says
    which column holds which), grouped by the integer io_n, not by the io_id string (3 M I/Os:
    5.3 -> 4.2 s; 773 k: 1.02 -> 0.85 s), and every io's: the left join keeps the selected ones
    (selecting them first cost more than it saved when, as by default, all are)."""
    ms = milestones(con)
    # NVMe/TCP milestone name -> (its number, the column of io_tcp_milestone_spans holding it)
    spans = {name: (int(ms_no), "last_ts" if is_last else "first_ts") for name, ms_no, is_last in
             con.execute("SELECT milestone, ms_no, is_last FROM tcp_milestones").fetchall()}
    cols = "".join(f", s.{sql_ident(name)}" if stock else f", p.{sql_ident(name)}" for name, stock in ms)
    tcp = "".join(f", max(m.{spans[name][1]}) FILTER (WHERE m.ms_no = {spans[name][0]}) AS {sql_ident(name)}"
                  for name, stock in ms if not stock)
    order = (sql_ident(ms[0][0]) + ", " if ms else "") + "io_id"
    tcp_join = (f" LEFT JOIN (SELECT m.io_n{tcp} FROM io_tcp_milestone_spans m GROUP BY m.io_n) p USING (io_n)"
                if tcp else "")
    return (f"SELECT e.* EXCLUDE (io_n){cols} FROM io_export e "
            f"LEFT JOIN io_stock_milestones s USING (io_n){tcp_join}"), order


def write_io(con, path):
    """The rows are made into a temporary table first and sorted from it: sorted in the statement
    that joins them, the sort waited behind the joins' hash tables (a patched run of 1 M I/Os,
    46 milestone columns: 31.1 s in one statement, 10.7 s so; the same file contents)."""
    select, order = io_sql(con)
    con.execute(f"CREATE OR REPLACE TEMP TABLE io_export_rows AS {select}")
    try:
        con.execute(f"COPY (SELECT * FROM io_export_rows ORDER BY {order}) TO {sql_str(path)} {PARQUET}")
    finally:
        con.execute("DROP TABLE IF EXISTS io_export_rows")


def stage_parts(con, sets, part_rows):
    """io_n ranges [lo, hi) (None: open) of about part_rows stage rows each, over the selected
    ios, in io order; [(None, None)] when one part holds them all. The rows per io are counted as
    the sets' definitions (each io has a row per definition); io_n is dense, so equal ranges of
    io_n hold about equal numbers of ios."""
    lo, hi, ios = con.execute("SELECT min(io_n), max(io_n), count(*) FROM io_selected").fetchone()
    defs = con.execute(f"SELECT count(*) FROM io_stage_definitions WHERE stage_set IN ({sets})").fetchone()[0]
    k = -(-(ios * defs) // part_rows)
    if k <= 1:
        return [(None, None)]
    step = -(-(hi - lo + 1) // k)
    cuts = list(range(lo + step, hi + 1, step))
    return list(zip([None] + cuts, cuts + [None]))


def write_stages(con, path, stage_sets, part_rows=STAGE_PART_ROWS):
    """The stages of the report's stage sets (report.json "stage_sets"), sorted a part of ios at
    a time (stage_parts, io_stage_export_part) into files of a private folder that the converter
    binary puts together into path, copying their row groups as they are (`ntscope
    parquet-concat`): the same rows in the same order as one sorted statement."""
    sets = ", ".join(sql_str(s) for s in stage_sets) or "NULL"

    def query(lo, hi):
        return f"SELECT * FROM io_stage_export_part({sql_int(lo)}, {sql_int(hi)}) WHERE stage_set IN ({sets})"
    parts = stage_parts(con, sets, part_rows)
    if len(parts) == 1:
        con.execute(f"COPY ({query(None, None)}) TO {sql_str(path)} {PARQUET}")
        return
    work = private_dir(con, "ntscope-stages-")
    try:
        files = []
        for k, (lo, hi) in enumerate(parts):
            files.append(os.path.join(work, f"part-{k}.parquet"))
            con.execute(f"COPY ({query(lo, hi)}) TO {sql_str(files[-1])} {PARQUET}")
        done = subprocess.run([converter.path(), "parquet-concat", "--out", path, *files],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            raise NtscopeError(f"writing {os.path.basename(path)} from its parts failed: "
                               f"{done.stderr.strip() or f'exit {done.returncode}'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
