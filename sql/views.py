"""Load every ntscope view for one run into DuckDB (ntscope.sql.views).

In:  a run directory (runs/<run>/), each <host>/parquet/ written by `ntscope convert`,
     optional <host>/host.json (capture) and <host>/parquet/metadata.json (convert).
Out: a DuckDB connection (or one SQL script) holding raw_<system> views over the Parquet
     files, run_hosts, then sql/[0-9]*.sql in order.

This module only maps files to views; every metric is computed in the SQL files. Paths
and names from the run are data: file lists are built literally (no globbing), escaped
where DuckDB would glob them, and every name that reaches SQL text is quoted.
"""
import json
import os
import re
import sys

from ntscope.errors import NtscopeError

SQL_DIR = os.path.dirname(os.path.abspath(__file__))
INTERFERENCE_SQL = os.path.join(SQL_DIR, "interference")
STAGE_TABLE_SQL = os.path.join(SQL_DIR, "05_stage_definitions.sql")
SYSTEMS = ("nvme", "nvmet", "block", "nvme_tcp", "nvmet_tcp", "workqueue", "irq")
# Which layers are tables (computed once) and which are views is declared in the SQL
# files themselves (CREATE OR REPLACE TABLE / VIEW): re-running a file recomputes its tables.


RunError = NtscopeError  # bad input: the message says what, where, the value, and the fix
# Event files the converter writes: <system>/<event>.parquet, C identifiers (anything else
# in the folder is not ours and is not read).
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def sql_str(s):
    """A string literal."""
    return "'" + str(s).replace("'", "''") + "'"


def sql_ident(s):
    """A quoted identifier (column names come from trace files)."""
    return '"' + str(s).replace('"', '""') + '"'


def duckdb_literal_path(path):
    """DuckDB globs every path it reads; escape *, ? and [ so the path is taken literally
    (a run named r[1] must not read run r1)."""
    return re.sub(r"([*?\[])", r"[\1]", path)


def find_hosts(run_dir):
    hosts = sorted(d for d in os.listdir(run_dir)
                   if not d.startswith(".") and os.path.isdir(os.path.join(run_dir, d, "parquet")))
    if not hosts:
        raise RunError(f"no converted host under {run_dir} (expected <host>/parquet/); "
                       f"fix: run `just convert {run_dir}` first")
    return hosts


def read_text(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        text = f.read()
    try:
        json.loads(text)
    except ValueError as e:
        raise RunError(f"{path}: not valid JSON ({e}); fix: re-run capture/convert for this host")
    return text


def event_files(run_dir, host, system):
    """<host>/parquet/<system>/*.parquet, listed literally."""
    d = os.path.join(run_dir, host, "parquet", system)
    if not os.path.isdir(d):
        return []
    return sorted(os.path.join(d, f) for f in os.listdir(d)
                  if f.endswith(".parquet") and IDENT.match(f[:-len(".parquet")]))


def contract(con):
    rows = con.execute("SELECT system, column_name, column_type FROM raw_contract").fetchall()
    out = {}
    for system, col, typ in rows:
        out.setdefault(system, []).append((col, typ))
    return out


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
           "], union_by_name = true, filename = true)")
    try:
        have = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()}
    except Exception as e:  # noqa: BLE001 - duckdb raises its own IOException / InvalidInputException
        raise RunError(f"cannot read the {system} Parquet files of {run_dir}: {str(e).splitlines()[0]}; "
                       f"fix: convert the run again (delete <host>/parquet/ and run `just convert`)") from None
    sel = []
    for c, t in columns:
        sel.append(f"CAST({sql_ident(c)} AS {t}) AS {c}" if c in have else f"NULL::{t} AS {c}")
    extra = sorted(have - {c for c, _ in columns} - {"filename"})
    sel += [sql_ident(c) for c in extra]
    return (f"CREATE OR REPLACE VIEW {name} AS SELECT "
            f"regexp_extract(filename, '([^/]+)/parquet/[^/]+/[^/]+\\.parquet$', 1) AS host, "
            f"regexp_extract(filename, '([^/]+)\\.parquet$', 1) AS event, "
            + ", ".join(sel) + f" FROM {src};\n")


def run_hosts_sql(run_dir, hosts):
    rows = []
    for h in hosts:
        meta = read_text(os.path.join(run_dir, h, "parquet", "metadata.json"))
        hj = read_text(os.path.join(run_dir, h, "host.json"))
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


def view_files():
    return sorted(os.path.join(SQL_DIR, f) for f in os.listdir(SQL_DIR)
                  if re.match(r"^[0-9]{2}_.*\.sql$", f) and not f.startswith("00_"))


def interference_files():
    return sorted(os.path.join(INTERFERENCE_SQL, f) for f in os.listdir(INTERFERENCE_SQL) if f.endswith(".sql"))


def build_script(run_dir, con=None):
    """The whole SQL script for one run: contract, raw views, run_hosts, view files."""
    import duckdb
    run_dir = os.path.abspath(run_dir)
    if not os.path.isdir(run_dir):
        raise RunError(f"run directory {run_dir} does not exist; fix: pass runs/<name> or a path")
    hosts = find_hosts(run_dir)
    scratch = con or duckdb.connect()
    with open(os.path.join(SQL_DIR, "00_raw_contract.sql")) as f:
        contract_sql = f.read()
    scratch.execute(contract_sql)
    cols = contract(scratch)
    parts = [contract_sql]
    for system in SYSTEMS:
        parts.append(raw_view_sql(scratch, run_dir, hosts, system, cols["*"] + cols.get(system, [])))
    parts.append(run_hosts_sql(run_dir, hosts))
    for vf in view_files():
        with open(vf) as f:
            text = f.read()
        parts.append(f"-- ==== {os.path.basename(vf)}\n" + text)
    return "\n".join(parts)


def connect(run_dir, memory_limit=None, temp_dir=None, interference=False, progress=None):
    """A DuckDB connection with every view of the run (and the interference views)."""
    import duckdb
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    if memory_limit:
        try:
            con.execute(f"SET memory_limit = {sql_str(memory_limit)}")
        except duckdb.Error as e:
            raise RunError(f"--memory-limit {memory_limit!r} is not a memory size ({str(e).splitlines()[0]}); "
                           f"fix: e.g. --memory-limit 3GB") from None
    if temp_dir:
        con.execute(f"SET temp_directory = {sql_str(temp_dir)}")
    if progress:
        progress.step("loading the views (events, commands, join, stages)", con)
    con.execute(build_script(run_dir, con))
    if interference:
        if progress:
            progress.step("interference (who waited behind whom)", con)
        run_interference(con)
    return con


def run_interference(con):
    for path in interference_files():
        with open(path) as f:
            con.execute(f.read())


def shell(con, stdin=sys.stdin, out=sys.stdout):
    """SQL on the loaded views. On a terminal: a prompt (line editing, .tables). From a
    pipe or file: the statements run in order, results printed, no prompts; the first
    failing statement stops it (exit 2). Uses the same duckdb module as the reports (a
    duckdb CLI of another version may not bind these views)."""
    if not stdin.isatty():
        return run_script(con, stdin.read(), out)
    try:
        import readline  # noqa: F401  (line editing and history)
    except ImportError:
        pass
    print("ntscope SQL shell: end statements with ';', .tables lists views, Ctrl-D quits", file=sys.stderr)
    buf = ""
    while True:
        try:
            line = input("ntscope> " if not buf else "   ...> ")
        except EOFError:
            print(file=sys.stderr)
            return 0
        if not buf and line.strip() == ".tables":
            line = "SELECT table_name, table_type FROM information_schema.tables ORDER BY 1;"
        buf += line + "\n"
        if not buf.rstrip().endswith(";"):
            continue
        try:
            rel = con.sql(buf)
            if rel is not None:
                rel.show(max_rows=100, max_width=200)
        except Exception as e:  # noqa: BLE001 - show the error, keep the session
            print(f"error: {e}", file=sys.stderr)
        buf = ""


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
            print(f"ntscope sql: error in statement {i}: {str(e).strip()}", file=sys.stderr)
            return 2
    return 0


def rows_of(con, sql, params=None):
    """The rows of a query as dicts (column name -> value): what the report models read."""
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]
