"""The loader: every ntscope view of one run on a DuckDB connection (connect), or as one SQL
script (build_script).

In:  a run directory (runs/<run>/), each <host>/parquet/ written by `ntscope convert`,
     optional <host>/host.json (capture) and <host>/parquet/metadata.json (convert).
Out: the raw views (raw_views: raw_<system>, run_hosts, kallsyms, printk_formats), then
     sql/[0-9]*.sql in order, and the folders of sql/ a caller asks for (interference,
     selection), on a connection with ntscope's settings (connection).

Every metric is computed in the SQL files.
"""
import os
import re

from ntscope.common.errors import NtscopeError as RunError   # bad input: what, where, the value, the fix
from ntscope.sql.connection import attach_tables, compress_tables, limited_connection
from ntscope.sql.memory_policy import READ_AGAIN_SHARE, tables_by_size
from ntscope.sql.quoting import sql_str
from ntscope.sql.raw_views import SYSTEMS, contract, find_hosts, raw_view_sql, run_hosts_sql, symbol_views_sql

SQL_DIR = os.path.dirname(os.path.abspath(__file__))
INTERFERENCE_SQL = os.path.join(SQL_DIR, "interference")
SELECTION_SQL = os.path.join(SQL_DIR, "selection")
STAGE_TABLE_SQL = os.path.join(SQL_DIR, "05_stage_definitions.sql")
# Which layers are tables (computed once) and which are views is declared in the SQL
# files themselves (CREATE OR REPLACE TABLE / VIEW): re-running a file recomputes its tables.


def view_files():
    return sorted(os.path.join(SQL_DIR, f) for f in os.listdir(SQL_DIR)
                  if re.match(r"^[0-9]{2}_.*\.sql$", f) and not f.startswith("00_"))


def folder_files(folder):
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".sql"))


# Where a host that recorded both the patched events and the capture's probes takes its
# NVMe/TCP milestones from (sql/20_events.sql, host_milestones): auto = the patched events.
MILESTONE_SOURCES = ("auto", "tracepoint", "probe")


def milestones_sql(milestones):
    """The statement that sets the analysis' milestone source (None: auto)."""
    m = milestones or "auto"
    if m not in MILESTONE_SOURCES:
        raise RunError(f"--milestones {m!r} is not one of {', '.join(MILESTONE_SOURCES)}; "
                       "fix: auto (the patched events where a host has them, else its probes), tracepoint or probe")
    return f"SET VARIABLE ntscope_milestones = {sql_str(m)};\n"


def build_parts(run_dir, con=None, milestones=None):
    """The SQL script for one run, in parts: the milestone source, contract, raw views,
    run_hosts, each view file."""
    import duckdb
    run_dir = os.path.abspath(run_dir)
    hosts = find_hosts(run_dir)
    scratch = con or duckdb.connect()
    with open(os.path.join(SQL_DIR, "00_raw_contract.sql")) as f:
        contract_sql = f.read()
    scratch.execute(contract_sql)
    cols = contract(scratch)
    parts = [milestones_sql(milestones), contract_sql]
    for system in SYSTEMS:
        parts.append(raw_view_sql(scratch, run_dir, hosts, system, cols["*"] + cols.get(system, [])))
    parts.append(run_hosts_sql(run_dir, hosts))
    parts.append(symbol_views_sql(run_dir, hosts))
    for vf in view_files():
        with open(vf) as f:
            text = f.read()
        parts.append(f"-- ==== {os.path.basename(vf)}\n" + text)
    return parts


def build_script(run_dir, con=None, milestones=None):
    """The whole SQL script for one run: contract, raw views, run_hosts, view files."""
    return "\n".join(build_parts(run_dir, con, milestones))


def connect(run_dir, memory_limit=None, temp_dir=None, interference=False, progress=None,
            memory_share=READ_AGAIN_SHARE, milestones=None):
    """A DuckDB connection with every view of the run (and the interference views), with
    ntscope's memory limit and spill folder (new_connection), its tables in memory or in a
    file by their estimated size (tables_by_size, memory_share); milestones: where hosts that
    recorded both patched events and probes take their NVMe/TCP milestones from
    (MILESTONE_SOURCES; None: auto)."""
    con = limited_connection(memory_limit, temp_dir)
    attach_tables(con, tables_by_size(con, [run_dir], memory_share))
    if progress:
        progress.step("loading the views (events, commands, join, stages)", con)
    for part in build_parts(run_dir, con, milestones):
        con.execute(part)
        compress_tables(con)
    if interference:
        if progress:
            progress.step("interference (who waited behind whom)", con)
        run_interference(con)
    return con


def folder_parts(folder):
    """The texts of a folder's SQL files, in order."""
    parts = []
    for path in folder_files(folder):
        with open(path) as f:
            parts.append(f.read())
    return parts


def run_folder(con, folder):
    """Runs a folder's SQL files in order (their tables computed now, then compressed)."""
    for part in folder_parts(folder):
        con.execute(part)
        compress_tables(con)


def run_interference(con):
    run_folder(con, INTERFERENCE_SQL)


def run_selection_tables(con):
    """The tables of the report's selection (sql/selection/), once io_selected is set."""
    run_folder(con, SELECTION_SQL)
