"""A run's converted hosts and the views over their files: raw_<system> (every host's event
files of one system, the contract's columns always present), run_hosts (each host's
metadata.json and host.json) and kallsyms / printk_formats (each host's symbol tables).

File lists are built literally (no globbing), escaped where DuckDB would glob them, and every
name that reaches SQL text is quoted."""
import json
import os
import re

from ntscope.common import inputs, runs
from ntscope.common.errors import NtscopeError as RunError
from ntscope.sql.quoting import duckdb_literal_path, sql_ident, sql_str

SYSTEMS = ("nvme", "nvmet", "block", "nvme_tcp", "nvmet_tcp", "workqueue", "irq", "tcp",
           "ntscope_nvme_tcp", "ntscope_nvmet_tcp", "ntscope_block", "cgroup")
# Event files the converter writes: <system>/<event>.parquet, C identifiers (anything else
# in the folder is not ours and is not read).
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def find_hosts(run_dir):
    """The run's converted hosts (<host>/parquet/), or a RunError that says what is missing."""
    if not os.path.isdir(run_dir):
        raise RunError(f"run directory {run_dir} does not exist; fix: pass runs/<name> or a path")
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
    return json.dumps(inputs.read_json(path, what, limit, fix))


# host.json's fields the views read, as capture/schemas/host.schema.json gives them (a test holds
# the two equal), with the bounds the views' integer types need: checked before the views see them.
INT32 = {"type": "integer", "minimum": 0, "maximum": 2**31 - 1}
COUNT = {"type": "integer", "minimum": 0, "maximum": 2**62}
HOST_JSON_READ = {"type": "object", "properties": {
    "role": {"enum": ["initiator", "target"]},
    "trace_clock": {"type": "string"},
    "clock_max_error_ns": {"type": ["integer", "null"], "minimum": 0, "maximum": 2**62},
    "start_utc": {"type": "string"}, "end_utc": {"type": "string"},
    "sample": {"type": "object", "properties": {"n": dict(INT32, minimum=1), "mask": INT32}},
    "probes": {"type": "object", "properties": {"active": {"type": "boolean"}, "misses": COUNT, "hits": COUNT}},
    "lost_events": {"type": "object", "properties": {"overrun": COUNT, "commit_overrun": COUNT, "dropped": COUNT}},
    "filters": {"type": "object", "properties": {"applied": {"type": ["boolean", "null"]}}},
    "nvme_tcp_digest": {"type": ["object", "null"], "properties": {"header": {"type": "boolean"},
                                                                   "data": {"type": "boolean"}}},
}}


def check_host_json(path, text):
    """RunError naming host.json, the field, its value and the fix when a field the views read
    is not what capture writes (a role of 5, a sample rate near 2^63, negative misses)."""
    from ntscope.common import json_schema
    if text is None:
        return
    found = json_schema.problems(json.loads(text), HOST_JSON_READ)
    if found:
        field, value, must = found[0]
        shown = json.dumps(value)
        shown = shown if len(shown) <= 40 else shown[:40] + "..."
        raise RunError(f"host.json {path}: {field.replace('$.', '', 1)} is {shown}; it {must} "
                       f"(capture/schemas/host.schema.json); fix: {HOST_JSON_FIX}")


HOST_JSON_FIX = ("write it as capture does (a JSON object: role, clock, controllers ...), or remove it "
                 "(the host's role is then inferred from its events)")


def event_files(run_dir, host, system):
    """<host>/parquet/<system>/*.parquet, listed literally; one that is not a regular file (a FIFO
    would block DuckDB) is refused."""
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
        meta = read_json_text(os.path.join(run_dir, h, "parquet", "metadata.json"), "metadata.json",
                              inputs.METADATA_MAX, "convert the run again (ntscope convert RUN)")
        hj = read_json_text(os.path.join(run_dir, h, "host.json"), "host.json", inputs.HOST_JSON_MAX, HOST_JSON_FIX)
        check_host_json(os.path.join(run_dir, h, "host.json"), hj)
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


def view_files(run_dir):
    """Every file the run's views read (absolute paths, as the views name them): each host's
    event files of SYSTEMS and its symbol tables (sql/guards.py allows exactly these)."""
    run_dir = os.path.abspath(run_dir)
    files = []
    for h in find_hosts(run_dir):
        for system in SYSTEMS:
            files += [os.path.abspath(f) for f in event_files(run_dir, h, system)]
        for _, fname, _ in SYMBOL_TABLES:
            f = os.path.join(run_dir, h, "parquet", fname)
            if os.path.isfile(f):
                files.append(f)
    return files
