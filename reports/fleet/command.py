"""`ntscope fleet ingest|report|sql`: many runs into the fleet's Iceberg tables, and what the
fleet tells (reports/fleet/README.md). The warehouse: --warehouse DIR, else $NTSCOPE_FLEET_DIR,
else <runs folder>/fleet (an embedded SQLite catalog and the tables' files in that folder);
--catalog names any other pyiceberg catalog."""
import datetime
import os
import sys

from ntscope.common import command_line as cl, runs
from ntscope.common.errors import EXIT_OK, NtscopeError

EXAMPLES = """examples:
  ntscope fleet ingest 'captures/*/run-*'           analyse each run (Ray), into runs/fleet/
  ntscope fleet ingest r1 r2 --ray-address auto     on the Ray cluster this machine belongs to
  ntscope fleet report --by initiator --period day
  ntscope fleet report --baseline-until 2026-11-24 --since 2026-11-24   what regressed since then
  ntscope fleet sql -c 'SELECT target_host, count(*) FROM fleet_io GROUP BY 1'"""   # under --help

SUBJECTS = ("target", "initiator", "tenant", "class")
PERIODS = ("hour", "day")


def add_arguments(p):
    sub = p.add_subparsers(dest="fleet_command", required=True, metavar="ingest|report|sql")
    i = sub.add_parser("ingest", help="analyse runs in parallel (Ray tasks) into the fleet's Iceberg tables; a run "
                                      "ingested again replaces its rows")
    i.add_argument("runs", nargs="+", metavar="RUN_OR_GLOB",
                   help="run folders, or quoted patterns of them ('captures/*/run-*')")
    add_where(i)
    i.add_argument("--ray-address", help="join this Ray cluster (ray.init address, e.g. auto or ray://head:10001); "
                                         "default: a local Ray started for the command")
    i.add_argument("--jobs", type=positive, help="runs analysed at once on the local Ray (default: its CPUs)")
    i.add_argument("--task-memory", type=positive, metavar="MIB",
                   help="memory a run's task may use (MiB): Ray runs no more tasks at once than fit")
    i.add_argument("--report-dir", help="each run's report set in DIR/<run folder name>/ (default RUN/report, as "
                                        "ntscope analyze)")
    i.add_argument("--no-progress", action="store_true", help="no progress bar line per run")
    i.set_defaults(fleet_fn=cmd_ingest)
    r = sub.add_parser("report", help="per target / initiator / tenant / class and hour or day: I/Os, p50, p99 per "
                                      "stage from the histograms, the worst runs, regressions against a baseline")
    add_where(r)
    r.add_argument("--by", choices=SUBJECTS, default="target", help="the subject of each row (default target)")
    r.add_argument("--period", choices=PERIODS, default="hour", help="rows per hour or day (default hour)")
    for name, what in (("since", "the window's start"), ("until", "the window's end (exclusive)"),
                       ("baseline-since", "the baseline window's start"),
                       ("baseline-until", "the baseline window's end (exclusive)")):
        r.add_argument(f"--{name}", type=timestamp, metavar="UTC", help=f"{what}, UTC (2026-11-24 or 2026-11-24T06:00)")
    r.add_argument("--worst", type=positive, default=3, help="worst runs named per subject (default 3)")
    r.add_argument("--out", help="report folder (default the fleet folder's report/)")
    cl.add_common(r, cl.quiet_help("fleet"), memory=False)
    r.set_defaults(fleet_fn=cmd_report)
    s = sub.add_parser("sql", help="DuckDB over the fleet's tables (fleet_runs, fleet_io, fleet_stage_hist, "
                                   "fleet_verdicts): -c SQL, statements on stdin, or the DuckDB shell")
    add_where(s)
    s.add_argument("-c", dest="command", metavar="SQL", help="run these statements, results as CSV")
    s.add_argument("--script", action="store_true", help="print the SQL that opens the tables (for duckdb -init)")
    s.set_defaults(fleet_fn=cmd_sql)


def add_where(p):
    p.add_argument("--warehouse", help="the fleet folder (embedded catalog and tables; default $NTSCOPE_FLEET_DIR, "
                                       "else <runs folder>/fleet)")
    p.add_argument("--catalog", metavar="K=V,...",
                   help="another pyiceberg catalog instead of the embedded one: its properties (type=rest,uri=...,"
                        "warehouse=s3://...), or 'configured': catalog 'ntscope' of ~/.pyiceberg.yaml / "
                        "PYICEBERG_CATALOG__NTSCOPE__* (where credentials belong)")


def positive(text):
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise NtscopeError(f"{text!r} is not a whole number >= 1; fix: e.g. 2")
    return v


def timestamp(text):
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "")).replace(tzinfo=None)
    except ValueError:
        raise NtscopeError(f"{text!r} is not a UTC time; fix: e.g. 2026-11-24 or 2026-11-24T06:00") from None


def fleet_dir(a):
    return os.path.abspath(a.warehouse or os.environ.get("NTSCOPE_FLEET_DIR") or os.path.join(runs.runs_dir(), "fleet"))


def catalog_props(a):
    """None (the embedded default), {} (pyiceberg's own configuration), or --catalog's properties."""
    if not a.catalog:
        return None
    if a.catalog == "configured":
        return {}
    props = {}
    for part in a.catalog.split(","):
        k, sep, v = part.partition("=")
        if not sep or not k.strip():
            raise NtscopeError(f"--catalog {a.catalog!r}: {part!r} is not KEY=VALUE; fix: e.g. "
                               "--catalog type=rest,uri=http://127.0.0.1:8181")
        props[k.strip()] = v.strip()
    return props


def open_catalog(a):
    from . import tables
    props = catalog_props(a)
    where = fleet_dir(a) if props is None else (props.get("uri") or "the configured catalog 'ntscope'")
    try:
        return tables.open_catalog(fleet_dir(a), props), where
    except NtscopeError:
        raise
    except Exception as e:   # the catalog's own error: which, and what to check
        raise NtscopeError(f"cannot open the fleet's catalog ({where}): {type(e).__name__}: {str(e)[:300]}; fix: "
                           "check --warehouse / --catalog (and the catalog service, when there is one)") from None


def run(a):
    import importlib.util
    missing = [m for m in ("ray", "pyiceberg") if importlib.util.find_spec(m) is None]
    if missing:
        raise NtscopeError(f"ntscope fleet needs {' and '.join(missing)}, which this Python lacks; fix: "
                           "pip install 'ntscope[fleet]' (bash setup.sh installs it)")
    return a.fleet_fn(a)


def cmd_ingest(a):
    from . import ingest
    run_dirs = ingest.expand(a.runs)
    for r in run_dirs:
        runs.require_hosts(r)
    catalog, where = open_catalog(a)
    print(f"ntscope fleet: ingesting {len(run_dirs)} run(s) into {where}", file=sys.stderr)
    out = open(os.devnull, "w") if a.no_progress else sys.stderr
    results = ingest.ingest(run_dirs, catalog, ray_address=a.ray_address, jobs=a.jobs,
                            task_memory=a.task_memory * 2 ** 20 if a.task_memory else None,
                            report_root=os.path.abspath(a.report_dir) if a.report_dir else None, out=out)
    failed = [r for r in results if r[2]]
    for run_dir, _, err, _, _ in failed:
        print(f"ntscope fleet: {run_dir}: {err}", file=sys.stderr)
    print(f"ntscope fleet: {len(results) - len(failed)} run(s) ingested, {len(failed)} failed "
          f"({sum(r[3] for r in results):,} I/Os)", file=sys.stderr)
    return 1 if failed else EXIT_OK


def report_doc(catalog, where, params):
    """fleet.json's document over CATALOG with PARAMS (fleet_params' columns)."""
    import duckdb
    from ntscope.sql import loader
    from . import model, scan
    con = duckdb.connect()
    scan.register(con, catalog)
    loader.load(con, ["fleet/report"], inputs={"fleet_params": params})
    return model.build(con, where)


def cmd_report(a):
    from ntscope.common.output import OutputLock
    from ntscope.common.out_folder import REPORT, check_target
    from ntscope.common.progress import Progress
    from ntscope.common.text import printable
    from . import render_html, render_text
    out = os.path.abspath(a.out) if a.out else os.path.join(fleet_dir(a), "report")
    check_target(out, REPORT)
    catalog, where = open_catalog(a)
    params = {"subject": a.by, "period": a.period, "since_utc": a.since, "until_utc": a.until,
              "baseline_since_utc": a.baseline_since, "baseline_until_utc": a.baseline_until, "worst_runs": a.worst}
    with OutputLock(out, "fleet"), Progress(["tables", "write"], enabled=cl.show_progress(a)) as p:
        p.step("reading the fleet's tables")
        doc = report_doc(catalog, where, params)
        text = printable(render_text.render(doc))
        cl.write_three(out, "fleet", text, doc, render_html.render(doc), p)
    cl.announce_written(out, "fleet", text, a.quiet, as_json=a.json)
    return EXIT_OK


def cmd_sql(a):
    import duckdb
    from ntscope.sql import csv_runner
    from . import scan
    catalog, _ = open_catalog(a)
    if a.script:
        text, arrow = scan.script(catalog)
        if arrow:
            raise NtscopeError("a table has delete files (another engine wrote it merge-on-read): its rows are not "
                               "plain Parquet files; fix: use -c or stdin, which scan it with pyiceberg")
        sys.stdout.write("-- the fleet's Iceberg tables as DuckDB views (ntscope fleet sql --script)\n" + text)
        return EXIT_OK
    con = duckdb.connect()
    scan.register(con, catalog)
    if a.command is None and sys.stdin.isatty():
        raise NtscopeError("fleet sql: give statements with -c 'SQL' or on stdin; fix: for DuckDB's shell, "
                           "ntscope fleet sql --script > fleet.sql; duckdb -init fleet.sql")
    return csv_runner.run_script(con, a.command if a.command is not None else sys.stdin.read())
