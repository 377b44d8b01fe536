"""One run of an ingest (a Ray task, reports/fleet/ingest.py): the run analysed exactly as
`ntscope analyze RUN` does (its report set in RUN/report, or REPORT_DIR), then its rows of the
fleet tables read from the same connection (sql/fleet/run_rows.sql), returned as Arrow tables."""
import datetime
import os

VIEWS = {"runs": "fleet_runs_rows", "io": "fleet_io_rows", "stage_hist": "fleet_stage_hist_rows",
         "verdicts": "fleet_verdict_rows"}


def analyze_args(run_dir, report_dir):
    """The arguments `ntscope analyze` gets, parsed by its own flags (reports/report/command.py:
    its parts' flags included), so the defaults are analyze's."""
    import argparse
    from ntscope.reports.report import command as analyze
    p = argparse.ArgumentParser(prog="ntscope analyze")
    analyze.add_arguments(p)
    return p.parse_args([run_dir, "--quiet", "--no-interference"] + (["--out", report_dir] if report_dir else []))


def extract(run_dir, report_dir=None):
    """{'run_id': ..., 'tables': {name: pyarrow.Table}, 'ios': n, 'seconds': s} of RUN_DIR."""
    from ntscope.reports.report import command as analyze
    from ntscope.sql import views
    t0 = datetime.datetime.now()
    got = {}

    def rows_from(ctx):
        views.load_modules(ctx.con, ["fleet/run_rows"])
        got["run_id"] = ctx.con.execute("SELECT run_id FROM fleet_run").fetchall()[0][0]
        got["tables"] = {name: ctx.con.sql(f"SELECT * FROM {view}").to_arrow_table()
                         for name, view in VIEWS.items()}

    a = analyze_args(run_dir, report_dir)
    a.after_report = rows_from
    status = analyze.run(a)
    if "tables" not in got:
        raise RuntimeError(f"analyze {run_dir} ended with status {status} before its rows were read")
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    runs = got["tables"]["runs"]
    import pyarrow as pa
    runs = runs.append_column("ingested_utc", pa.array([now] * runs.num_rows, pa.timestamp("us")))
    runs = runs.append_column("run_dir", pa.array([os.path.abspath(run_dir)] * runs.num_rows))
    got["tables"]["runs"] = runs
    got["ios"] = got["tables"]["io"].num_rows
    got["seconds"] = (datetime.datetime.now() - t0).total_seconds()
    got["status"] = status
    return got
