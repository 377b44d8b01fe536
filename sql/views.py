"""Load every ntscope view for one run into DuckDB (ntscope.sql.views).

In:  a run directory (runs/<run>/), each <host>/parquet/ written by `ntscope convert`,
     optional <host>/host.json (capture) and <host>/parquet/metadata.json (convert).
Out: a DuckDB connection (or one SQL script) holding raw_<system> views over the Parquet
     files, run_hosts, kallsyms and printk_formats (each host's kernel symbols and printk
     strings), then the SQL modules a caller asks for (sql/loader.py: each after what it
     requires; RUN_MODULES by default).

This module only maps files to views; every metric is computed in the SQL files. Paths
and names from the run are data: file lists are built literally (no globbing), escaped
where DuckDB would glob them, and every name that reaches SQL text is quoted.
"""
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import weakref

from ntscope.errors import NtscopeError
from ntscope.sql import loader

SQL_DIR = os.path.dirname(os.path.abspath(__file__))
# The stage table and its vocabularies (read as text by tools that list causes and stages)
STAGE_TABLE_SQL = loader.module_path("core/stage_definitions")
# The SQL modules of a run's connection (connect, the `just sql` shell and script) and what
# they require: the run's views, its report over every I/O (the report's selection, SLOs and
# timeline set are inputs given later: selection.apply, slo.load, timeline.stage_set_of).
RUN_MODULES = ("core/symbols", "core/evidence", "core/cpu_wait", "core/net_flows", "core/pipeline_stats",
               "report/export", "report/plots", "timeline/timeline", "slo/slo")
INTERFERENCE_MODULES = ("interference/plots",)   # who waited behind whom (connect(interference=True))
SELECTION_MODULES = ("report/selection",)        # the selection's tables (reports/report/selection.py)
SYSTEMS = ("nvme", "nvmet", "block", "nvme_tcp", "nvmet_tcp", "workqueue", "irq", "tcp",
           "ntscope_nvme_tcp", "ntscope_nvmet_tcp")
# Which layers are tables (computed once) and which are views is declared in the SQL
# files themselves (CREATE OR REPLACE TABLE / VIEW): re-running a file recomputes its tables.


RunError = NtscopeError  # bad input: the message says what, where, the value, and the fix
# Event files the converter writes: <system>/<event>.parquet, C identifiers (anything else
# in the folder is not ours and is not read).
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def sql_str(s):
    """A string literal."""
    return "'" + str(s).replace("'", "''") + "'"


def sql_int(v):
    """An integer (or None: NULL) as SQL text."""
    return "NULL" if v is None else str(int(v))


def sql_ident(s):
    """A quoted identifier (column names come from trace files)."""
    return '"' + str(s).replace('"', '""') + '"'


def duckdb_literal_path(path):
    """DuckDB globs every path it reads; escape *, ? and [ so the path is taken literally
    (a run named r[1] must not read run r1)."""
    return re.sub(r"([*?\[])", r"[\1]", path)


def find_hosts(run_dir):
    """The run's converted hosts (<host>/parquet/), or a RunError that says what is missing."""
    if not os.path.isdir(run_dir):
        raise RunError(f"run directory {run_dir} does not exist; fix: pass runs/<name> or a path")
    from ntscope import runs
    hosts = sorted(d for d in os.listdir(run_dir) if os.path.isdir(os.path.join(run_dir, d, "parquet")))
    for h in hosts:
        runs.check_host_name(run_dir, h)   # report/ and dot folders are not hosts: refused, not skipped
    if not hosts:
        raise RunError(f"no converted host under {run_dir} (expected <host>/parquet/); "
                       f"fix: run `just convert {run_dir}` first")
    return hosts


def read_json_text(path, what, limit, fix):
    """A run's JSON file (inputs.read_json: a regular file, capped, an object, finite numbers) as
    JSON text for DuckDB, or None when it does not exist."""
    if not os.path.lexists(path):
        return None
    from ntscope import inputs
    return json.dumps(inputs.read_json(path, what, limit, fix))


HOST_JSON_FIX = ("write it as capture does (a JSON object: role, clock, controllers ...), or remove it "
                 "(the host's role is then inferred from its events)")


def event_files(run_dir, host, system):
    """<host>/parquet/<system>/*.parquet, listed literally; one that is not a regular file (a FIFO
    would block DuckDB) is refused."""
    from ntscope import inputs
    d = os.path.join(run_dir, host, "parquet", system)
    if not os.path.isdir(d):
        return []
    files = []
    for f in sorted(os.listdir(d)):
        if f.endswith(".parquet") and IDENT.match(f[:-len(".parquet")]):
            path = os.path.join(d, f)
            inputs.check_regular(path, "event file", "convert the run again (ntscope convert RUN)")
            files.append(path)
    return files


def contract(con):
    rows = con.execute("SELECT system, column_name, column_type FROM raw_contract").fetchall()
    out = {}
    for system, col, typ in rows:
        out.setdefault(system, []).append((col, typ))
    return out


def unreadable_parquet(what, e):
    """The RunError for event files DuckDB cannot read (WHAT names them; E is DuckDB's error);
    DuckDB running out of memory is not the files' fault and is raised as it is."""
    import duckdb
    if isinstance(e, (duckdb.OutOfMemoryException, duckdb.InterruptException)):
        return e
    return RunError(f"cannot read {what}: {str(e).splitlines()[0]}; "
                    f"fix: convert the run again (delete <host>/parquet/ and run `just convert`)")


# read_parquet's column naming each row's file: not a C identifier, so no trace field has it
FILE_COLUMN = "ntscope file"
# the columns raw_<system> adds (a trace field of the same name is kept as field_<name>)
VIEW_COLUMNS = ("host", "event")
INTEGER_TYPES = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                 "UBIGINT", "UHUGEINT"}


def type_family(t):
    t = t.upper()
    return "list" if t.endswith("[]") else "integer" if t in INTEGER_TYPES else t


def check_contract_types(con, files, columns):
    """RunError naming the file and column when an event file has a contract column of a type
    that cannot be read as the contract's (a field of size 0 becomes a BLOB: casting it to
    BIGINT fails only when a row is read, deep inside a view)."""
    want = dict(columns)
    for f in files:
        for name, typ, *_ in con.execute(f"DESCRIBE SELECT * FROM read_parquet({sql_str(duckdb_literal_path(f))})").fetchall():
            if name in want and type_family(typ) != type_family(want[name]):
                raise RunError(f"event file {f}: column {name} is {typ}, but ntscope reads {name} as {want[name]} (the "
                               "trace's event format gives this field another type or size, e.g. size 0); fix: check the "
                               "event's format in the trace (trace-cmd report --events), or record with a kernel "
                               "ntscope supports (kernel-patches/EVENTS.md)")


def raw_view_sql(con, run_dir, hosts, system, columns):
    """CREATE VIEW raw_<system>: all hosts' event files, contract columns always present."""
    files = []
    for h in hosts:
        files += event_files(run_dir, h, system)
    name = f"raw_{system}"
    if not files:
        cols = ", ".join(f"NULL::{t} AS {c}" for c, t in columns)
        return (f"CREATE OR REPLACE VIEW {name} AS SELECT NULL::VARCHAR AS host, "
                f"NULL::VARCHAR AS event, {cols} WHERE false;\n")
    src = ("read_parquet([" + ", ".join(sql_str(duckdb_literal_path(os.path.abspath(f))) for f in files) +
           f"], union_by_name = true, filename = {sql_str(FILE_COLUMN)})")
    try:
        described = con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()
    except Exception as e:  # noqa: BLE001 - duckdb raises its own IOException / InvalidInputException
        raise unreadable_parquet(f"the {system} Parquet files of {run_dir}", e) from None
    have = {r[0]: r[1] for r in described}
    if any(c in have and type_family(have[c]) != type_family(t) for c, t in columns):
        check_contract_types(con, files, columns)
    sel = []
    for c, t in columns:
        sel.append(f"CAST({sql_ident(c)} AS {t}) AS {c}" if c in have else f"NULL::{t} AS {c}")
    for c in sorted(set(have) - {c for c, _ in columns} - {FILE_COLUMN}):
        if c not in VIEW_COLUMNS:
            sel.append(sql_ident(c))
        elif f"field_{c}" not in have:
            sel.append(f"{sql_ident(c)} AS {sql_ident('field_' + c)}")
    file_col = sql_ident(FILE_COLUMN)
    return (f"CREATE OR REPLACE VIEW {name} AS SELECT "
            f"regexp_extract({file_col}, '([^/]+)/parquet/[^/]+/[^/]+\\.parquet$', 1) AS host, "
            f"regexp_extract({file_col}, '([^/]+)\\.parquet$', 1) AS event, "
            + ", ".join(sel) + f" FROM {src};\n")


def run_hosts_sql(run_dir, hosts):
    rows = []
    for h in hosts:
        from ntscope import inputs
        meta = read_json_text(os.path.join(run_dir, h, "parquet", "metadata.json"), "metadata.json",
                              inputs.METADATA_MAX, "convert the run again (ntscope convert RUN)")
        hj = read_json_text(os.path.join(run_dir, h, "host.json"), "host.json", inputs.HOST_JSON_MAX, HOST_JSON_FIX)
        rows.append("(" + ", ".join([sql_str(h), sql_str(os.path.abspath(os.path.join(run_dir, h))),
                                     "NULL" if meta is None else sql_str(meta) + "::JSON",
                                     "NULL" if hj is None else sql_str(hj) + "::JSON"]) + ")")
    return ("-- run_hosts: one row per host directory of the run.\n"
            "--   host           directory name under the run (initiator, target, ...)\n"
            "--   dir            absolute path of that directory\n"
            "--   metadata_json  <host>/parquet/metadata.json written by convert (NULL if absent)\n"
            "--   host_json      <host>/host.json written by capture (NULL if absent)\n"
            "CREATE OR REPLACE TABLE run_hosts AS SELECT * FROM (VALUES "
            + ", ".join(rows) + ") AS t(host, dir, metadata_json, host_json);\n")


# The trace's own symbol tables, written by the converter beside the event files
# (analyzer/src/symbol_files.rs): view name, file name, columns.
SYMBOL_TABLES = (
    ("kallsyms", "kallsyms.parquet", (("address", "UBIGINT"), ("type", "VARCHAR"), ("name", "VARCHAR"),
                                      ("module", "VARCHAR"))),
    ("printk_formats", "printk_formats.parquet", (("address", "UBIGINT"), ("format", "VARCHAR"))),
)


def symbol_views_sql(run_dir, hosts):
    """CREATE VIEW kallsyms / printk_formats: every host's table, with `host` and `seq` (the
    line's place in its section, from 0) added; empty with the same columns when no host has
    one (a conversion by an older ntscope)."""
    parts = []
    for view, fname, columns in SYMBOL_TABLES:
        files = [(h, os.path.join(run_dir, h, "parquet", fname)) for h in hosts]
        files = [(h, f) for h, f in files if os.path.isfile(f)]
        cols = ", ".join(c for c, _ in columns)
        comment = (f"-- {view}: one row per line of each host's {view} section of its trace.dat, in\n"
                   f"-- file order (sql/core/symbols.sql resolves addresses with it).\n"
                   f"--   host  host directory name; seq  the line's place in the section, from 0\n"
                   f"--   {cols}  as analyzer/README.md describes them\n")
        if not files:
            typed = ", ".join(f"NULL::{t} AS {c}" for c, t in columns)
            parts.append(f"{comment}CREATE OR REPLACE VIEW {view} AS SELECT NULL::VARCHAR AS host, "
                         f"NULL::BIGINT AS seq, {typed} WHERE false;\n")
            continue
        selects = [f"SELECT {sql_str(h)} AS host, file_row_number AS seq, {cols} FROM read_parquet("
                   f"{sql_str(duckdb_literal_path(os.path.abspath(f)))}, file_row_number = true)" for h, f in files]
        parts.append(f"{comment}CREATE OR REPLACE VIEW {view} AS " + " UNION ALL ".join(selects) + ";\n")
    return "".join(parts)


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


# Memory. DuckDB's own default memory limit is 80% of the machine's RAM, and the analysis of a
# large run takes what it is given (5.9 GB peak RSS at 3.3 M events). ntscope bounds every
# connection instead: 2 GB, or half the memory of a smaller machine (physical RAM or the
# cgroup's memory.max, whichever is less). 2 GB because the goal is a peak RSS of at most 3 GB
# whatever the run's size: the limit covers DuckDB's buffer manager, not Python's objects,
# Arrow results, the allocator's slack and the code, which measured 0.4-0.5 GB above it
# (2.41 GB at 3.3 M events, 2.51 GB at 10.1 M). Beyond the limit DuckDB
# spills to a private folder (spill_dir). Override with --memory-limit / NTSCOPE_MEMORY_LIMIT
# (a DuckDB size: 3GB, 500MB; `none`: DuckDB's default).
DEFAULT_MEMORY_LIMIT_BYTES = 2 * 10**9
MEMORY_LIMIT_ENV = "NTSCOPE_MEMORY_LIMIT"
TEMP_DIR_ENV = "NTSCOPE_TEMP_DIR"
NO_LIMIT = ("none", "default")
SPILL_PREFIX = "ntscope-spill-"
DATABASE = "ntscope"       # the connection's default database (new_connection)
TABLES_IN_FILE, TABLES_IN_MEMORY = "file", "memory"   # where its tables live (new_connection)
# The views' and interference tables, uncompressed, per event of the run: 183-192 bytes on a
# patched capture (4.3 M events) and stock runs of 10 and 13 M.
TABLE_BYTES_PER_EVENT = 200
# The share of the memory limit the estimated tables may take to live in memory (tables_by_size).
# READ_AGAIN: analyze's tables, read again after the views (report model, timeline, plots): in
# memory, runs estimated at 0.48 and 0.52 of the 2 GB limit took 8-9% less time (RSS 1.1 ->
# 1.8-2.0 GB), one at 1.04 no less (the later steps evict the tables); so are the comparison's.
# READ_ONCE: a compare or sweep side's, read once and closed: 16% less at 1.36 of the limit,
# 19% at 1.5, the same at 2.7.
READ_AGAIN_SHARE, READ_ONCE_SHARE = 0.6, 1.5
SPILL_DIR = re.compile(r"^" + SPILL_PREFIX + r"(?P<pid>\d+)-[A-Za-z0-9_]+$")


def machine_memory_bytes():
    """Physical RAM, or the cgroup's memory limit when it is lower (a container)."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                v = f.read().strip()
        except OSError:
            continue
        if v.isdigit() and 0 < int(v) < total:
            total = int(v)
    return total


def default_memory_limit():
    """The memory limit ntscope gives DuckDB unless told otherwise, as a DuckDB size."""
    return f"{min(DEFAULT_MEMORY_LIMIT_BYTES, machine_memory_bytes() // 2) // 10**6}MB"


def memory_limit_setting(memory_limit=None):
    """The memory_limit to SET (None: leave DuckDB's default): the value given, else
    $NTSCOPE_MEMORY_LIMIT, else default_memory_limit(); `none` / `default` mean DuckDB's own."""
    v = memory_limit if memory_limit not in (None, "") else os.environ.get(MEMORY_LIMIT_ENV) or None
    if v is None:
        return default_memory_limit()
    return None if v.strip().lower() in NO_LIMIT else v.strip()


def clean_stale_spill(parent):
    """Removes ntscope-spill-<pid>-* folders under PARENT whose process is gone (a kill -9)."""
    from ntscope.output import pid_alive
    try:
        entries = os.listdir(parent)
    except OSError:
        return
    for e in entries:
        m = SPILL_DIR.match(e)
        if m and int(m.group("pid")) != os.getpid() and not pid_alive(int(m.group("pid"))):
            shutil.rmtree(os.path.join(parent, e), ignore_errors=True)


def spill_dir(temp_dir=None):
    """A fresh private folder for DuckDB's spill files: under --temp-dir / $NTSCOPE_TEMP_DIR
    when given (created if missing; the folder itself is never removed), else under TMPDIR
    (/tmp). Never inside a run: the inputs stay as they were."""
    parent = temp_dir or os.environ.get(TEMP_DIR_ENV) or tempfile.gettempdir()
    parent = os.path.abspath(parent)
    try:
        os.makedirs(parent, exist_ok=True)
        clean_stale_spill(parent)
        return tempfile.mkdtemp(prefix=f"{SPILL_PREFIX}{os.getpid()}-", dir=parent)
    except OSError as e:
        raise RunError(f"cannot make a spill folder under {parent}: {e.strerror}; fix: pass --temp-dir DIR "
                       f"(or set {TEMP_DIR_ENV}) to a writable folder with free space") from None


def private_dir(con, prefix, fallback=None):
    """A fresh folder for a connection's working files: inside its private spill folder
    (new_connection; removed with the connection), else under fallback (TMPDIR when None: a
    plain connection's default spill folder, '.tmp', may not exist)."""
    spill = con.execute("SELECT current_setting('temp_directory')").fetchall()[0][0]
    return tempfile.mkdtemp(prefix=prefix, dir=spill if os.path.isdir(spill or "") else fallback)


def new_connection(memory_limit=None, temp_dir=None, tables=TABLES_IN_FILE):
    """An empty DuckDB connection with ntscope's settings: the memory limit
    (memory_limit_setting), a private spill folder, removed when the connection is
    garbage-collected or the process exits (DuckDB deletes its spill files on close), and
    its tables in a database file there (TABLES_IN_FILE) or in memory (TABLES_IN_MEMORY)."""
    con = limited_connection(memory_limit, temp_dir)
    attach_tables(con, tables)
    return con


# Every connection ntscope opens, so that Ctrl-C can stop the query running on it
# (InterruptQueries).
LIVE = weakref.WeakSet()


class InterruptQueries:
    """Within it, Ctrl-C (SIGINT) stops the DuckDB queries running on every connection ntscope
    opened. A query holds the main thread in DuckDB, where Python's own handler cannot run until
    it ends (minutes): the signal's wake-up byte reaches a thread here, which interrupts the
    queries (DuckDB raises InterruptException, then Python its KeyboardInterrupt: exit 130)."""

    def __enter__(self):
        self.old = None
        if threading.current_thread() is not threading.main_thread():
            return self
        self.r, self.w = os.pipe()
        os.set_blocking(self.w, False)
        self.old = signal.set_wakeup_fd(self.w, warn_on_full_buffer=False)
        self.thread = threading.Thread(target=self.watch, daemon=True)
        self.thread.start()
        return self

    def watch(self):
        while True:
            try:
                got = os.read(self.r, 64)
            except OSError:
                got = b""
            if not got:
                os.close(self.r)
                return
            if signal.SIGINT in got:
                for con in list(LIVE):
                    try:
                        con.interrupt()
                    except Exception:  # noqa: BLE001 - a closed connection: nothing runs on it
                        pass

    def __exit__(self, *exc):
        if self.old is not None:
            signal.set_wakeup_fd(self.old)
            os.close(self.w)   # the thread reads the end of the pipe and stops
            self.thread.join()
        return False


# The planner settings of every connection that runs the views (limited_connection, the DuckDB
# shell's init script). An ASOF join whose left side DuckDB estimates at <= 64 rows runs as a
# nested loop over the right side; an estimate that low for a side of millions (a DISTINCT over
# a CTE was one) made one statement quadratic (not done after 10 minutes, 10 M events). The
# sorted merge costs little more for a truly small side.
PLANNER_SETTINGS = ("SET asof_loop_join_threshold = 0",)


def limited_connection(memory_limit=None, temp_dir=None):
    """new_connection before its tables' database is attached."""
    import duckdb
    limit = memory_limit_setting(memory_limit)
    con = duckdb.connect()
    LIVE.add(con)
    con.execute("SET enable_progress_bar = false")
    for statement in PLANNER_SETTINGS:
        con.execute(statement)
    if limit is not None:
        try:
            con.execute(f"SET memory_limit = {sql_str(limit)}")
        except duckdb.Error as e:
            con.close()
            where = "" if memory_limit not in (None, "") else f" (from {MEMORY_LIMIT_ENV})"
            raise RunError(f"--memory-limit {limit!r}{where} is not a memory size ({str(e).splitlines()[0]}); "
                           f"fix: e.g. --memory-limit 3GB, or none for DuckDB's default (80% of RAM)") from None
    spill = spill_dir(temp_dir)
    weakref.finalize(con, shutil.rmtree, spill, ignore_errors=True)
    con.execute(f"SET temp_directory = {sql_str(spill)}")
    return con


def attach_tables(con, tables):
    """Attaches the database the connection's tables live in (TABLES_IN_FILE or
    TABLES_IN_MEMORY) as its default."""
    # TABLES_IN_FILE: a database file in the spill folder, compressed when checkpointed
    # (compress_tables, after each SQL file). At 10 M events (773 k I/Os) the tables took 2.4 GB
    # uncompressed, 1.4 GB of it spilled under the 2 GB limit and read back by every later
    # query; compressed, 0.5 GB. Not ':memory:' (COMPRESS): an in-memory database's compressed
    # blocks cannot be evicted, so at a small limit or a large run they broke the memory limit
    # (tests/test_memory_limit.py); a file's blocks are evicted like spill.
    # TABLES_IN_MEMORY: a plain in-memory database, never checkpointed, whose blocks DuckDB
    # evicts to the spill folder under the limit. Not compressing, each table-making statement
    # is about 30% faster, worth it while the tables are small beside the limit (tables_by_size).
    spill = con.execute("SELECT current_setting('temp_directory')").fetchall()[0][0]
    for statement in attach_sql(spill, tables):
        con.execute(statement)


def attach_sql(spill, tables):
    """The statements that attach the tables' database (attach_tables) and make it the default."""
    if tables == TABLES_IN_FILE:
        where = sql_str(os.path.join(spill, "tables.duckdb"))
    elif tables == TABLES_IN_MEMORY:
        where = "':memory:'"
    else:
        raise ValueError(f"tables={tables!r}: not {TABLES_IN_FILE!r} or {TABLES_IN_MEMORY!r}")
    return [f"ATTACH {where} AS {DATABASE}", f"USE {DATABASE}"]


def run_events(con, run_dir):
    """How many events the views will read: the rows of every host's event files (their
    Parquet footers)."""
    run_dir = os.path.abspath(run_dir)
    files = [f for h in find_hosts(run_dir) for system in SYSTEMS for f in event_files(run_dir, h, system)]
    if not files:
        return 0
    listed = ", ".join(sql_str(duckdb_literal_path(f)) for f in files)   # absolute: run_dir is
    try:
        return con.execute(f"SELECT coalesce(sum(num_rows), 0) FROM parquet_file_metadata([{listed}])"
                           ).fetchall()[0][0]
    except Exception as e:  # noqa: BLE001 - duckdb raises its own IOException / InvalidInputException
        raise unreadable_parquet(f"the Parquet files of {run_dir}", e) from None


def memory_limit_bytes(con):
    """The connection's memory limit in bytes, from DuckDB's own reading of it ('1.8 GiB')."""
    text = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    m = re.fullmatch(r"\s*([0-9.]+)\s*([KMGTP]i?B|bytes)\s*", text)
    if not m:
        raise RunError(f"DuckDB reads the memory limit back as {text!r}, not a size; fix: pass --memory-limit "
                       f"as e.g. 3GB")
    unit = m.group(2)
    scale = 1 if unit == "bytes" else (1024 if "i" in unit else 1000) ** ("KMGTP".index(unit[0]) + 1)
    return float(m.group(1)) * scale


def tables_by_size(con, run_dirs, memory_share, bytes_per_event=TABLE_BYTES_PER_EVENT):
    """TABLES_IN_MEMORY when the tables, estimated at bytes_per_event of the runs' events, take
    at most memory_share of the connection's memory limit; else TABLES_IN_FILE."""
    estimate = bytes_per_event * sum(run_events(con, d) for d in run_dirs)
    return TABLES_IN_MEMORY if estimate <= memory_share * memory_limit_bytes(con) else TABLES_IN_FILE


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
    for part in run_relations_sql(run_dir, con, milestones):
        con.execute(part)
    compress_tables(con)
    load_modules(con, RUN_MODULES)
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


def compress_tables(con):
    """Compresses the tables made since the last call, when they live in a file (see
    new_connection). Not in memory: a checkpoint there compresses too (2.9 s of a 1 M-I/O
    side's 16 s of views), into blocks like those of ':memory:' (COMPRESS) (attach_tables)."""
    if tables_in_file(con):
        con.execute(f"CHECKPOINT {DATABASE}")


def tables_in_file(con):
    """True when the connection's tables live in a database file (new_connection)."""
    rows = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = ?", [DATABASE]).fetchall()
    return bool(rows and rows[0][0])


def query_interrupted(e):
    """Whether a DuckDB error is Ctrl-C stopping a query: InterruptException when InterruptQueries
    interrupted it, RuntimeError('Query interrupted') when DuckDB saw the signal first."""
    import duckdb
    return isinstance(e, duckdb.InterruptException) or (type(e) is RuntimeError and str(e).strip() == "Query interrupted")


def run_script(con, text, out=sys.stdout):
    """Runs SQL statements in order; prints each result as CSV. Exit 0, or 2 at the first
    statement that fails (its error on stderr)."""
    import csv
    writer = csv.writer(out, lineterminator="\n")
    try:
        statements = con.extract_statements(text)
    except Exception as e:  # noqa: BLE001
        print(f"ntscope sql: error: {e}", file=sys.stderr)
        return 2
    for i, st in enumerate(statements, 1):
        try:
            cur = con.execute(st)
            if cur.description:
                writer.writerow([d[0] for d in cur.description])
                for row in cur.fetchall():
                    writer.writerow(["" if v is None else v for v in row])
        except Exception as e:  # noqa: BLE001
            if query_interrupted(e):
                raise KeyboardInterrupt from None   # Ctrl-C: the command exits 130, not a failed statement
            print(f"ntscope sql: error in statement {i}: {str(e).strip()}", file=sys.stderr)
            return 2
    return 0


def rows_of(con, sql, params=None):
    """The rows of a query as dicts (column name -> value): what the report models read."""
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def top_series_rows(con, view, key, weight, rank, n):
    """The rows of a time-series VIEW (one row per KEY and bin) for its first N keys by RANK (an
    ORDER BY over KEY and WEIGHT, the key's per-run total), ordered by RANK, then bin. The view
    is evaluated once for the ranking and the rows (MATERIALIZED): read twice, it aggregated
    every I/O twice (the interference streams' 0.31 -> 0.16 s at 773 k I/Os). VIEW, KEY,
    WEIGHT, RANK are the callers' constants, never user input."""
    return rows_of(con, f"WITH t AS MATERIALIZED (FROM {view}), "
                        f"top AS (SELECT {key} FROM (SELECT DISTINCT {key}, {weight} FROM t) ORDER BY {rank} LIMIT ?) "
                        f"SELECT * FROM t WHERE {key} IN (FROM top) ORDER BY {rank}, bin", [n])
