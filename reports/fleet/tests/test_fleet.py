"""The fleet on real engines: a local Ray (2 CPUs) ingesting lab fixtures into Iceberg tables
(pyiceberg, SQLite catalog), DuckDB reading them, Spark SQL (local mode, Iceberg's Spark
runtime) reading the same tables. Known answers: each run's own `ntscope analyze` (report.json,
io.parquet, io_stages.parquet), fio's I/O counts, and the histograms' stated error."""
import json
import math
import multiprocessing
import os
import signal
import subprocess
import sys
import time

import duckdb
import pyarrow.parquet as pq
import pytest

from ntscope.common.json_schema import problems
from ntscope.reports.fleet import scan, tables

RUNS = ("lab-6.1-patched-multipath-delay", "lab-6.1-patched-link-flap")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def sql(catalog, query):
    con = duckdb.connect()
    scan.register(con, catalog)
    return con.execute(query).fetchall()


@pytest.fixture(scope="module")
def fleet(fixture_run, ntscope_cli, tmp_path_factory):
    """Two runs ingested by `ntscope fleet ingest` (a local Ray of 2 CPUs) into a fresh warehouse."""
    wh = str(tmp_path_factory.mktemp("fleet") / "wh")
    runs = [fixture_run(n) for n in RUNS]
    r = ntscope_cli("fleet", "ingest", *runs, "--warehouse", wh, "--jobs", "2")
    assert r.returncode == 0, r.stderr
    return wh, runs, r.stderr


def analyzed(run):
    with open(os.path.join(run, "report", "report.json")) as f:
        return json.load(f)


def test_each_runs_numbers_equal_its_analysis(fleet):
    """Per run: the io table's I/Os are report.json's (and fio's), each I/O's end_to_end is
    io_stages.parquet's, the runs table has one row per host, the outage is a verdict row."""
    wh, runs, stderr = fleet
    assert "[##############################] 2/2 runs" in stderr and "2 run(s) ingested, 0 failed" in stderr
    cat = tables.open_catalog(wh)
    for run in runs:
        doc = analyzed(run)
        (run_id,) = sql(cat, f"SELECT DISTINCT run_id FROM fleet_runs WHERE run_dir = '{run}'")[0]
        n = sum(g["count"] for g in doc["groups"])
        rows = dict(sql(cat, f"SELECT io_id, end_to_end_ns FROM fleet_io WHERE run_id = '{run_id}'"))
        assert len(rows) == n
        stages = pq.read_table(os.path.join(run, "report", "io_stages.parquet")).to_pylist()
        want = {s["io_id"]: s["dur"] for s in stages if s["stage"] == "end_to_end" and s["stage_set"] == doc["stage_sets"][0]}
        assert rows == want
        hosts = sql(cat, f"SELECT host, role, ios FROM fleet_runs WHERE run_id = '{run_id}' ORDER BY host")
        assert hosts == [("initiator", "initiator", n), ("target", "target", None)]
        hist = sql(cat, f"SELECT sum(count) FROM fleet_stage_hist WHERE run_id = '{run_id}' AND stage = 'end_to_end' "
                        f"AND stage_set = '{doc['stage_sets'][0]}'")[0][0]
        assert hist == sum(1 for v in want.values() if v is not None)
    outages = sql(cat, "SELECT subject, value FROM fleet_verdicts WHERE kind = 'outage'")
    assert outages == [("initiator/nvme0", "8.880")]


def test_fleet_percentiles_from_histograms_are_within_the_stated_error(fleet):
    """p50 and p99 of end_to_end per run from the merged histograms against the exact
    nearest-rank percentiles of the io table's durations: within 1% (hist_alpha)."""
    wh, _, _ = fleet
    cat = tables.open_catalog(wh)
    con = duckdb.connect()
    scan.register(con, cat)
    from ntscope.sql import loader
    loader.load(con, ["fleet/report"], inputs={"fleet_params": {"subject": "initiator", "period": "day"}})
    alpha = con.execute("SELECT fleet_hist_alpha()").fetchall()[0][0]
    got = {r[0]: (r[1], r[2]) for r in con.execute(
        "SELECT grp, p50_ns, p99_ns FROM fleet_hist_percentiles WHERE kind = 'run' AND stage_set = 'ntprof'").fetchall()}
    assert len(got) == 2
    for grp, (p50, p99) in got.items():
        run_id = grp.split("|")[0]
        durs = sorted(d for (d,) in con.execute(f"SELECT end_to_end_ns FROM fleet_io WHERE run_id = '{run_id}' "
                                                "AND end_to_end_ns IS NOT NULL").fetchall())
        for p, est in ((0.50, p50), (0.99, p99)):
            exact = durs[math.ceil(p * len(durs)) - 1]
            assert abs(est - exact) <= alpha * exact, (run_id, p, est, exact)


def test_ingesting_a_run_again_replaces_it(fleet, ntscope_cli):
    """The same run ingested again: the same rows (not twice), a newer ingest time, a new snapshot."""
    wh, runs, _ = fleet
    cat = tables.open_catalog(wh)
    before = sql(cat, "SELECT run_id, count(*) FROM fleet_io GROUP BY 1 ORDER BY 1")
    ingested = sql(cat, "SELECT max(ingested_utc) FROM fleet_runs")[0][0]
    snaps = len(cat.load_table("ntscope.io").snapshots())
    r = ntscope_cli("fleet", "ingest", runs[0], "--warehouse", wh, "--jobs", "1")
    assert r.returncode == 0, r.stderr
    cat = tables.open_catalog(wh)
    assert sql(cat, "SELECT run_id, count(*) FROM fleet_io GROUP BY 1 ORDER BY 1") == before
    assert sql(cat, "SELECT count(*) FROM fleet_runs")[0][0] == 4
    assert sql(cat, "SELECT max(ingested_utc) FROM fleet_runs")[0][0] > ingested
    assert len(cat.load_table("ntscope.io").snapshots()) > snaps


def commit_copies(wh, rows, prefix, n, out):
    """A writer process: N renamed copies of a run's rows committed one by one (its retries on OUT)."""
    cat = tables.open_catalog(wh)
    retries = 0
    for i in range(n):
        rid = f"{prefix}-{i}"
        retries += tables.commit_run(cat, rid, {k: v.set_column(v.schema.get_field_index("run_id"), "run_id",
                                                                 __import__("pyarrow").array([rid] * v.num_rows))
                                                for k, v in rows.items()})
    out.put(retries)


def run_rows(cat, run_id):
    """A run's committed rows of each table, as Arrow tables (the columns commit_run writes)."""
    out = {}
    for name in tables.COMMIT_ORDER:
        t = cat.load_table(f"ntscope.{name}")
        from pyiceberg.expressions import EqualTo
        out[name] = t.scan(row_filter=EqualTo("run_id", run_id)).to_arrow()
    return out


def test_two_writers_at_once_both_commit(fleet, tmp_path):
    """Two processes commit runs into one warehouse at the same time: every run of both is
    there, each once (Iceberg's optimistic commit, retried on conflict)."""
    wh, _, _ = fleet
    src = tables.open_catalog(wh)
    run_id = sql(src, "SELECT min(run_id) FROM fleet_runs")[0][0]
    rows = run_rows(src, run_id)
    wh2 = str(tmp_path / "wh2")
    tables.open_catalog(wh2)
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=commit_copies, args=(wh2, rows, p, 4, q)) for p in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
        assert p.exitcode == 0
    cat = tables.open_catalog(wh2)
    n = rows["io"].num_rows
    got = sql(cat, "SELECT run_id, count(*) FROM fleet_io GROUP BY 1 ORDER BY 1")
    assert got == [(f"{p}-{i}", n) for p in ("a", "b") for i in range(4)]
    assert sql(cat, "SELECT count(DISTINCT run_id) FROM fleet_runs")[0][0] == 8


def test_a_run_is_not_visible_until_its_runs_rows_commit(fleet, tmp_path):
    """An ingest killed after writing a run's io, stage_hist and verdicts but before its runs
    rows: the run's rows are in the tables' files, yet no reader counts them."""
    wh, _, _ = fleet
    src = tables.open_catalog(wh)
    run_id = sql(src, "SELECT min(run_id) FROM fleet_runs")[0][0]
    rows = run_rows(src, run_id)
    wh2 = str(tmp_path / "wh2")
    cat = tables.open_catalog(wh2)
    for name in tables.COMMIT_ORDER[:-1]:
        tables.replace_run(cat, name, run_id, rows[name])
    assert cat.load_table("ntscope.io").scan().to_arrow().num_rows == rows["io"].num_rows
    assert sql(cat, "SELECT count(*) FROM fleet_io")[0][0] == 0
    assert sql(cat, "SELECT count(*) FROM fleet_stage_hist")[0][0] == 0
    tables.replace_run(cat, "runs", run_id, rows["runs"])
    assert sql(cat, "SELECT count(*) FROM fleet_io")[0][0] == rows["io"].num_rows


def ray_task_pids(root):
    """PIDs of the processes below ROOT (the ingest command: its local Ray's raylet and workers
    are its descendants) whose command line says they run the ingest's task (ray::extract).
    Only ROOT's: another test's Ray may run beside it (pytest-xdist)."""
    parent, cmd = {}, {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    cmd[int(d)] = f.read()
            except (OSError, IndexError, ValueError):
                pass

    def below(pid):
        while pid > 1:
            pid = parent.get(pid, 0)
            if pid == root:
                return True
        return False
    return [p for p, c in cmd.items() if b"ray::extract" in c and below(p)]


def test_a_worker_killed_mid_ingest_fails_its_run_only(fixture_run, ntscope_bin, tmp_path):
    """The Ray worker analysing one run is killed (SIGKILL): that run is reported failed with
    Ray's error, the other run is ingested, the command exits 1."""
    wh = str(tmp_path / "wh")
    runs = [fixture_run("lab-6.1-patched-multipath-ana"), fixture_run("lab-6.1-stock-base-randread")]
    env = dict(os.environ, NTSCOPE_BIN=ntscope_bin)
    p = subprocess.Popen([sys.executable, "-m", "ntscope", "fleet", "ingest", *runs, "--warehouse", wh, "--jobs", "1"],
                         cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not ray_task_pids(p.pid) and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.2)
    pids = ray_task_pids(p.pid)
    assert pids, "no task process seen"
    os.kill(pids[0], signal.SIGKILL)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 1, err
    assert "1 run(s) ingested, 1 failed" in err and "FAILED:" in err
    assert sql(tables.open_catalog(wh), "SELECT count(DISTINCT run_id) FROM fleet_runs")[0][0] == 1


def worst_name(doc):
    return next(w["run_id"] for w in doc["worst_runs"] if w["rank"] == 1)


def test_the_fleet_report(fleet, ntscope_cli, tmp_path):
    """fleet.json valid against its schema; per target and hour the I/Os add up to the runs'; the
    worst run by end_to_end p99 named; a baseline window of the earlier run against the later
    one gives each stage's change."""
    wh, runs, _ = fleet
    out = str(tmp_path / "report")
    r = ntscope_cli("fleet", "report", "--warehouse", wh, "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    doc = json.load(open(os.path.join(out, "fleet.json")))
    schema = json.load(open(os.path.join(REPO, "reports", "schemas", "fleet.schema.json")))
    assert problems(doc, schema) == []
    ios = sum(sum(g["count"] for g in analyzed(run)["groups"]) for run in runs)
    e2e = [p for p in doc["periods"] if p["stage"] == "end_to_end" and p["stage_set"] == "ntprof"]
    assert sum(p["ios"] for p in e2e) == ios and {p["subject_value"] for p in e2e} == {"target"}
    html = open(os.path.join(out, "fleet.html")).read()
    assert "<h2>Worst runs (end_to_end p99)</h2>" in html and worst_name(doc) in html
    worst = [w for w in doc["worst_runs"] if w["stage_set"] == "ntprof"]
    assert [w["rank"] for w in worst] == [1, 2] and worst[0]["p99_ns"] >= worst[1]["p99_ns"]
    # the link flap ran at 00:19, the multipath run at 03:16: baseline before 01:00, window after
    r = ntscope_cli("fleet", "report", "--warehouse", wh, "--out", out, "--json", "--baseline-until", "2026-11-30T01:00",
                    "--since", "2026-11-30T01:00")
    assert r.returncode == 0, r.stderr
    reg = {(x["stage_set"], x["stage"]): x for x in json.loads(r.stdout)["regressions"]}
    x = reg[("ntprof", "end_to_end")]
    assert (x["base_ios"], x["run_ios"]) == (2208, 1686)
    assert x["p99_lad"] == pytest.approx(x["run_p99_ns"] / x["base_p99_ns"])
    assert x["p99_change"] == ("slower" if x["p99_lad"] >= 1.1 else "faster" if x["p99_lad"] <= 0.9 else "no change")


def test_spark_sql_reads_the_same_tables(fleet):
    """Spark SQL (local mode, Iceberg's JdbcCatalog on the same SQLite catalog) gives the
    DuckDB query's answer on the same tables."""
    wh, _, _ = fleet
    from ntscope.reports.fleet import spark
    query = ("SELECT run_id, path, count(*) AS n, sum(end_to_end_ns) AS e2e FROM {io} "
             "GROUP BY run_id, path ORDER BY run_id, path")
    want = sql(tables.open_catalog(wh), query.format(io="fleet_io"))
    s = spark.session(wh)
    try:
        got = [tuple(r) for r in s.sql(query.format(io="ntscope.ntscope.io")).collect()]
    finally:
        s.stop()
    assert got == want and len(want) == 3
