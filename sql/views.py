"""The loader: every ntscope view of one run on a DuckDB connection (connect), or as one SQL
script (build_script).

In:  a run directory (runs/<run>/), each <host>/parquet/ written by `ntscope convert`,
     optional <host>/host.json (capture) and <host>/parquet/metadata.json (convert).
Out: the raw views (raw_views: raw_<system>, run_hosts, kallsyms, printk_formats), then
     the SQL modules a caller asks for (sql/loader.py: each after what it requires;
     RUN_MODULES by default), on a connection with ntscope's settings (connection).

Every metric is computed in the SQL files.
"""
import os

from ntscope.common.errors import NtscopeError as RunError   # bad input: what, where, the value, the fix
from ntscope.sql import loader
from ntscope.sql.connection import attach_tables, compress_tables, limited_connection
from ntscope.sql.memory_policy import READ_AGAIN_SHARE, tables_by_size
from ntscope.sql.quoting import sql_str
from ntscope.sql.raw_views import SYSTEMS, contract, find_hosts, raw_view_sql, run_hosts_sql, symbol_views_sql

SQL_DIR = os.path.dirname(os.path.abspath(__file__))
# The stage table and its vocabularies (read as text by tools that list causes and stages)
STAGE_TABLE_SQL = loader.module_path("core/stage_definitions")
# The SQL modules of a run's connection (connect, the `just sql` shell and script): each module
# says so in its header (`-- loaded: with every run`; loader.py), and what they require comes
# along: the run's views, its report over every I/O (the report's selection, SLOs and timeline
# set are inputs given later: selection.apply, slo.load, timeline.stage_set_of).
RUN_MODULES = loader.loaded_with("with every run")
INTERFERENCE_MODULES = loader.loaded_with("with interference")   # who waited behind whom (connect(interference=True))
SELECTION_MODULES = ("report/selection",)        # the selection's tables (reports/report/selection.py)
# Which layers are tables (computed once) and which are views is declared in the SQL
# files themselves (CREATE OR REPLACE TABLE / VIEW): re-running a file recomputes its tables.


# Where a host that recorded both the patched events and the capture's probes takes its
# NVMe/TCP milestones from (sql/core/events.sql, host_milestones): auto = the patched events.
MILESTONE_SOURCES = ("auto", "tracepoint", "probe")


def milestones_sql(milestones):
    """The statement that sets the analysis' milestone source (None: auto)."""
    m = milestones or "auto"
    if m not in MILESTONE_SOURCES:
        raise RunError(f"--milestones {m!r} is not one of {', '.join(MILESTONE_SOURCES)}; "
                       "fix: auto (the patched events where a host has them, else its probes), tracepoint or probe")
    return f"SET VARIABLE ntscope_milestones = {sql_str(m)};\n"


def run_relations_sql(run_dir, scratch, milestones=None):
    """[SQL] of what the loader makes from the run's files: the milestone source, raw_<system>
    views, run_hosts, kallsyms and printk_formats. SCRATCH reads the files' columns (and gets
    core/raw_contract, the columns the views read)."""
    run_dir = os.path.abspath(run_dir)
    hosts = find_hosts(run_dir)
    loader.load(scratch, ["core/raw_contract"])
    cols = contract(scratch)
    parts = [milestones_sql(milestones)]
    for system in SYSTEMS:
        parts.append(raw_view_sql(scratch, run_dir, hosts, system, cols["*"] + cols.get(system, [])))
    parts.append(run_hosts_sql(run_dir, hosts))
    parts.append(symbol_views_sql(run_dir, hosts))
    return parts


def build_parts(run_dir, con=None, milestones=None, modules=RUN_MODULES):
    """The SQL script for one run, in parts: run_relations_sql, then each module of MODULES and
    what they require (loader.script), inputs at their defaults."""
    import duckdb
    scratch = con or duckdb.connect()
    parts = run_relations_sql(run_dir, scratch, milestones)
    for name, text in loader.script(["core/raw_contract", *modules]):
        parts.append(f"-- ==== sql/{name}.sql\n" + text)
    return parts


def build_script(run_dir, con=None, milestones=None):
    """The whole SQL script for one run: contract, raw views, run_hosts, view files."""
    return "\n".join(build_parts(run_dir, con, milestones))


def connect(run_dir, memory_limit=None, temp_dir=None, interference=False, progress=None,
            memory_share=READ_AGAIN_SHARE, milestones=None, inputs=None):
    """A DuckDB connection with every view of the run (and the interference views), with
    ntscope's memory limit and spill folder (new_connection), its tables in memory or in a
    file by their estimated size (tables_by_size, memory_share); milestones: where hosts that
    recorded both patched events and probes take their NVMe/TCP milestones from
    (MILESTONE_SOURCES; None: auto); inputs: the modules' inputs ({relation: value}, e.g. a
    tenants file's tenant_rules), given before the tables are built so that none is built twice."""
    con = limited_connection(memory_limit, temp_dir)
    attach_tables(con, tables_by_size(con, [run_dir], memory_share))
    if progress:
        progress.step("loading the views (events, commands, join, stages)", con)
    for part in run_relations_sql(run_dir, con, milestones):
        con.execute(part)
    compress_tables(con)
    load_modules(con, RUN_MODULES, inputs)
    if interference:
        if progress:
            progress.step("interference (who waited behind whom)", con)
        load_modules(con, INTERFERENCE_MODULES)
    return con


def load_modules(con, modules, inputs=None):
    """loader.load with the tables compressed after each module (compress_tables); a module
    that cannot be loaded is a RunError."""
    try:
        return loader.load(con, modules, inputs, after_each=compress_tables)
    except loader.ModuleError as e:
        raise RunError(str(e)) from None
