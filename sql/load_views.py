#!/usr/bin/env python3
"""Load every ntscope view for one run into DuckDB.

In:  a run directory (runs/<run>/), each <host>/parquet/ written by `ntscope convert`,
     optional <host>/host.json (capture) and <host>/parquet/metadata.json (convert).
Out: a DuckDB connection (or, with --script, one SQL script for the duckdb CLI) holding
     raw_<system> views over the Parquet files, run_hosts, then sql/[0-9]*.sql in order.

This module only maps files to views; every metric is computed in the SQL files.
"""
import argparse
import glob
import json
import os
import sys

SQL_DIR = os.path.dirname(os.path.abspath(__file__))
SYSTEMS = ("nvme", "nvmet", "block", "nvme_tcp", "nvmet_tcp")
# Layers worth computing once when a report runs many queries over them.
MATERIALIZE = ("hosts", "events", "block_requests", "lba_shift", "host_block_link", "nvme_commands",
               "target_device_link", "target_device", "ctrl_map", "clock_coarse", "clock_candidates",
               "clock_offset_slices", "clock_offset", "command_match", "io", "io_milestones",
               "io_stages", "io_stage_check")


class RunError(Exception):
    """Bad input: the message says what, where, the value, and the fix."""


def sql_str(s):
    return "'" + str(s).replace("'", "''") + "'"


def find_hosts(run_dir):
    hosts = sorted(d for d in os.listdir(run_dir)
                   if os.path.isdir(os.path.join(run_dir, d, "parquet")))
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
        files += sorted(glob.glob(os.path.join(run_dir, h, "parquet", system, "*.parquet")))
    name = f"raw_{system}"
    if not files:
        cols = ", ".join(f"NULL::{t} AS {c}" for c, t in columns)
        return (f"CREATE OR REPLACE VIEW {name} AS SELECT NULL::VARCHAR AS host, "
                f"NULL::VARCHAR AS event, {cols} WHERE false;\n")
    src = ("read_parquet([" + ", ".join(sql_str(os.path.abspath(f)) for f in files) +
           "], union_by_name = true, filename = true)")
    have = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall()}
    sel = []
    for c, t in columns:
        sel.append(f"CAST({c} AS {t}) AS {c}" if c in have else f"NULL::{t} AS {c}")
    extra = sorted(have - {c for c, _ in columns} - {"filename"})
    sel += extra
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
    return sorted(f for f in glob.glob(os.path.join(SQL_DIR, "[0-9]*.sql"))
                  if not os.path.basename(f).startswith("00_"))


def as_tables(sql, names=MATERIALIZE):
    """Create the heavy layers as tables: each is computed once, and later views bind
    against a table instead of re-expanding every view beneath them."""
    for n in names:
        sql = sql.replace(f"CREATE OR REPLACE VIEW {n} AS", f"CREATE OR REPLACE TABLE {n} AS")
    return sql


def build_script(run_dir, con=None, materialized=True):
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
        parts.append(f"-- ==== {os.path.basename(vf)}\n" + (as_tables(text) if materialized else text))
    return "\n".join(parts)


def connect(run_dir, materialized=True, memory_limit=None):
    import duckdb
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    if memory_limit:
        con.execute(f"SET memory_limit = {sql_str(memory_limit)}")
    con.execute(build_script(run_dir, con, materialized))
    return con


def shell(con):
    """A small SQL prompt on the loaded views (the duckdb CLI of a different version may
    not bind these views: this uses the same duckdb module the reports use)."""
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
        except Exception as e:  # show the error, keep the session
            print(f"error: {e}", file=sys.stderr)
        buf = ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir")
    ap.add_argument("--script", help="write the SQL script here instead of running it")
    ap.add_argument("--shell", action="store_true", help="open an SQL prompt on the loaded views")
    a = ap.parse_args()
    try:
        if a.shell:
            return shell(connect(a.run_dir))
        script = build_script(a.run_dir)
    except RunError as e:
        print(f"load_views: {e}", file=sys.stderr)
        return 2
    if a.script:
        tmp = a.script + ".tmp"
        with open(tmp, "w") as f:
            f.write(script)
        os.replace(tmp, a.script)
    else:
        sys.stdout.write(script)
    return 0


if __name__ == "__main__":
    sys.exit(main())
