#!/usr/bin/env python3
"""Benchmark of record for the fleet (`just bench-fleet`), in two parts.

1. Ingest: `ntscope fleet ingest` (a local Ray of the machine's CPUs, the embedded catalog) of
   a simulated fleet of RUNS_SMALL and RUNS_LARGE runs into fresh warehouses: copies of a lab
   fixture (SAMPLE) with their hosts renamed (ini-NNN, tgt-NN) and their capture times shifted
   by an hour per copy. Wall seconds, seconds per run, I/Os, the peak memory of the command's
   whole process tree (the driver, Ray's processes, its workers), and the ratio of the large
   size's seconds per run to the small's (flat: ~1).
2. Commits at fleet scale: one ingested run's rows (its I/Os REPLICATE times, each copy a
   minute later: a longer run) committed COMMITS times under new run ids (hosts renamed over 200 initiators and 20 targets, times shifted an hour each: the
   io table's partitions spread over days), the commit time of the first and the last
   COMMIT_WINDOW runs (medians) and their ratio (flat: the table's size does not slow a run's
   commit down), then fleet-wide p99 of end_to_end per target from the merged histograms
   against the exact p99 of the io table's durations (nearest rank): the largest relative
   difference, against the histograms' stated 1%.
Out: tables on stdout, goal lines (met / NOT MET), one record appended to
     reports/fleet/bench/results.jsonl (or $BENCH_RESULTS; ntscope/common/bench_results.py).
Env: SAMPLE (default lab-6.1-patched-multipath-ana), RUNS_SMALL / RUNS_LARGE (default 4 / 16),
     COMMITS (default 300), COMMIT_WINDOW (default 20), REPLICATE (default 10: 43 k I/Os a run, 13 M in
     all), BENCH_DIR (default $NTSCOPE_CACHE/bench/fleet).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from ntscope.common import bench_results
from ntscope.reports.fleet import scan, tables

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
RESULTS = os.path.join(HERE, "results.jsonl")


def env_int(name, default):
    return int(os.environ.get(name, default))


def make_fleet(sample, dst, n):
    """N copies of fixtures/SAMPLE under DST: run-NNNN, hosts ini-NNN / tgt-NN, host.json's run,
    host and capture times shifted by i hours."""
    import datetime
    shutil.rmtree(dst, ignore_errors=True)
    src = os.path.join(REPO, "fixtures", sample)
    for i in range(n):
        run = os.path.join(dst, f"run-{i:04d}")
        for host, new in (("initiator", f"ini-{i % 200:03d}"), ("target", f"tgt-{i % 20:02d}")):
            os.makedirs(os.path.join(run, new))
            shutil.copy(os.path.join(src, host, "trace.dat"), os.path.join(run, new, "trace.dat"))
            with open(os.path.join(src, host, "host.json")) as f:
                hj = json.load(f)
            for k in ("start_utc", "end_utc"):
                if hj.get(k):
                    t = datetime.datetime.fromisoformat(hj[k].replace("Z", "")) + datetime.timedelta(hours=i)
                    hj[k] = t.strftime("%Y-%m-%dT%H:%M:%SZ")
            hj.update(run=f"run-{i:04d}", host=new, hostname=new)
            with open(os.path.join(run, new, "host.json"), "w") as f:
                json.dump(hj, f)
    return dst


def tree_rss_mib(pid):
    """RSS of PID and every process below it (MiB), from /proc."""
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    parts = f.read().rsplit(")", 1)[1].split()
                kids.setdefault(int(parts[1]), []).append(int(d))
            except (OSError, IndexError):
                pass
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            pass
        todo.extend(kids.get(p, []))
    return total / 2 ** 20


def timed_ingest(runs_dir, wh):
    """`ntscope fleet ingest RUNS_DIR/*` into WH: (wall s, peak MiB of its process tree, stderr)."""
    shutil.rmtree(wh, ignore_errors=True)
    t0 = time.monotonic()
    p = subprocess.Popen([sys.executable, "-m", "ntscope", "fleet", "ingest", os.path.join(runs_dir, "run-*"),
                          "--warehouse", wh, "--no-progress"], cwd=REPO, stderr=subprocess.PIPE, text=True)
    peak = [0.0]

    def watch():
        while p.poll() is None:
            peak[0] = max(peak[0], tree_rss_mib(p.pid))
            time.sleep(0.5)
    w = threading.Thread(target=watch, daemon=True)
    w.start()
    _, err = p.communicate()
    w.join()
    if p.returncode != 0:
        raise SystemExit(f"bench-fleet: fleet ingest failed:\n{err}")
    return time.monotonic() - t0, peak[0], err


def renamed(rows, i):
    """A run's rows as the i-th run of a simulated fleet: run id, hosts and times moved."""
    rid, ini, tgt = f"sim-{i:05d}", f"ini-{i % 200:03d}", f"tgt-{i % 20:02d}"
    shift = pa.scalar(i * 3600 * 10 ** 6, pa.duration("us"))
    out = {}
    for name, t in rows.items():
        cols = {}
        for f in t.schema:
            c = t.column(f.name)
            if f.name == "run_id":
                c = pa.array([rid] * t.num_rows, pa.string())
            elif f.name == "initiator_host":
                c = pa.array([ini] * t.num_rows, pa.string())
            elif name == "runs" and f.name in ("host", "hostname"):
                c = pa.array([ini if r == "initiator" else tgt for r in t.column("role").to_pylist()], pa.string())
            elif f.name == "target_host":
                c = pa.array([tgt] * t.num_rows, pa.string())
            elif f.type == pa.timestamp("us") and f.name != "ingested_utc":
                c = pc.add(c, shift)
            elif f.name == "day":
                ts = t.column("submit_utc" if name == "io" else "minute")
                c = pc.cast(pc.add(ts, shift), pa.date32())
            cols[f.name] = c
        out[name] = pa.table(cols, schema=t.schema)
    return rid, out


def replicated(rows, k):
    """A run's rows as a run K times as long: its io and stage_hist rows K times, copy j moved
    j minutes later (io ids suffixed #j), runs and verdicts as they are."""
    if k <= 1:
        return rows
    out = dict(rows)
    for name, ts in (("io", "submit_utc"), ("stage_hist", "minute")):
        t, parts = rows[name], []
        for j in range(k):
            shift = pa.scalar(j * 60 * 10 ** 6, pa.duration("us"))
            moved = pc.add(t.column(ts), shift)
            c = t.set_column(t.schema.get_field_index(ts), ts, moved)
            c = c.set_column(c.schema.get_field_index("day"), "day", pc.cast(moved, pa.date32()))
            if name == "io":
                c = c.set_column(c.schema.get_field_index("io_id"), "io_id",
                                 pc.binary_join_element_wise(c.column("io_id"), pa.scalar(f"#{j}"), ""))
            parts.append(c)
        out[name] = pa.concat_tables(parts)
    return out


def commit_scale(wh_src, wh, commits, window, k=1):
    """Part 2: (first window's median commit s, last window's, the per-target p99 rows)."""
    src = tables.open_catalog(wh_src)
    con = duckdb.connect()
    scan.register(con, src)
    run_id = con.execute("SELECT min(run_id) FROM fleet_runs").fetchall()[0][0]
    from pyiceberg.expressions import EqualTo
    rows = replicated({n: src.load_table(f"ntscope.{n}").scan(row_filter=EqualTo("run_id", run_id)).to_arrow()
                       for n in tables.COMMIT_ORDER}, k)
    shutil.rmtree(wh, ignore_errors=True)
    cat = tables.open_catalog(wh)
    secs = []
    for i in range(commits):
        rid, r = renamed(rows, i)
        t0 = time.monotonic()
        tables.commit_run(cat, rid, r)
        if (i + 1) % tables.EXPIRE_EVERY == 0:   # as an ingest does (reports/fleet/ingest.py)
            tables.expire(cat)
        secs.append(time.monotonic() - t0)
    con = duckdb.connect()
    scan.register(con, cat)
    from ntscope.sql import loader
    loader.load(con, ["fleet/report"], inputs={"fleet_params": {"subject": "target", "period": "day"}})
    # the fleet-wide p99 per target: histograms merged over every run and day, against the exact one
    con.execute("""CREATE TEMP TABLE hist_p99 AS
        WITH b AS (SELECT target_host AS t, bucket, sum(count) AS n FROM fleet_stage_hist
                   WHERE stage = 'end_to_end' AND stage_set = 'ntprof' GROUP BY ALL),
             c AS (SELECT *, sum(n) OVER (PARTITION BY t ORDER BY bucket) AS cum, sum(n) OVER (PARTITION BY t) AS total FROM b)
        SELECT t, any_value(total) AS ios, fleet_bucket_ns(min(bucket) FILTER (WHERE cum >= ceil(0.99 * total))) AS p99 FROM c GROUP BY t""")
    exact = con.execute("""
        WITH r AS (SELECT target_host AS t, end_to_end_ns AS d,
                          row_number() OVER (PARTITION BY target_host ORDER BY end_to_end_ns) AS k,
                          count(*) OVER (PARTITION BY target_host) AS n
                   FROM fleet_io WHERE end_to_end_ns IS NOT NULL)
        SELECT h.t, h.ios, h.p99, min(r.d) FILTER (WHERE r.k = ceil(0.99 * r.n)) AS exact
        FROM hist_p99 h JOIN r USING (t) GROUP BY ALL ORDER BY h.t""").fetchall()
    total_ios = con.execute("SELECT count(*) FROM fleet_io").fetchall()[0][0]
    files = len(list(cat.load_table("ntscope.io").scan().plan_files()))
    return secs, exact, total_ios, files


def main():
    sample = os.environ.get("SAMPLE", "lab-6.1-patched-multipath-ana")
    small, large = env_int("RUNS_SMALL", 4), env_int("RUNS_LARGE", 16)
    commits, window = env_int("COMMITS", 300), env_int("COMMIT_WINDOW", 20)
    k = env_int("REPLICATE", 10)
    work = os.environ.get("BENCH_DIR") or os.path.join(
        os.environ.get("NTSCOPE_CACHE") or os.path.expanduser("~/.cache/ntscope"), "bench", "fleet")
    os.makedirs(work, exist_ok=True)
    rows, goals = [], []
    print(f"bench-fleet: {sample} copies, local Ray of {os.cpu_count()} CPUs, embedded catalog")
    print(f"{'runs':>6} {'I/Os':>10} {'wall s':>8} {'s/run':>7} {'peak MiB':>9}")
    for n in (small, large):
        runs_dir = make_fleet(sample, os.path.join(work, f"runs-{n}"), n)
        wall, peak, err = timed_ingest(runs_dir, os.path.join(work, f"wh-{n}"))
        ios = int(err.rsplit("(", 1)[1].split(" I/Os")[0].replace(",", ""))
        rows.append({"runs": n, "ios": ios, "wall_s": round(wall, 2), "s_per_run": round(wall / n, 3),
                     "peak_mib": round(peak)})
        print(f"{n:>6} {ios:>10,} {wall:>8.1f} {wall / n:>7.2f} {peak:>9.0f}")
    ratio = rows[1]["s_per_run"] / rows[0]["s_per_run"]
    goals.append(f"goal: ingest seconds per run flat as the fleet grows ({large} / {small} runs <= x1.3): "
                 f"{'met' if ratio <= 1.3 else 'NOT MET'} (x{ratio:.2f})")
    secs, exact, total_ios, files = commit_scale(os.path.join(work, f"wh-{small}"), os.path.join(work, "wh-commits"),
                                                 commits, window, k)
    first, last = statistics.median(secs[:window]), statistics.median(secs[-window:])
    print(f"\ncommits: {commits} runs, {total_ios:,} I/Os in the io table ({files} data files); a run's commit "
          f"(4 tables): first {window} median {first:.3f} s, last {window} {last:.3f} s (x{last / first:.2f})")
    print(f"{'target':>8} {'I/Os':>11} {'hist p99 us':>12} {'exact us':>10} {'rel diff':>9}")
    worst = 0.0
    p99 = []
    for t, ios, h, e in exact:
        rel = abs(h - e) / e
        worst = max(worst, rel)
        p99.append({"target": t, "ios": ios, "hist_p99_ns": round(h), "exact_p99_ns": e, "rel_diff": round(rel, 5)})
        print(f"{t:>8} {ios:>11,} {h / 1e3:>12.1f} {e / 1e3:>10.1f} {rel:>9.4f}")
    goals.append(f"goal: a run's commit time flat over {commits} runs (last {window} / first {window} <= x1.5): "
                 f"{'met' if last / first <= 1.5 else 'NOT MET'} (x{last / first:.2f})")
    goals.append(f"goal: fleet p99 from the histograms within their stated 1% of the exact p99: "
                 f"{'met' if worst <= 0.01 else 'NOT MET'} ({100 * worst:.2f}% at most)")
    print()
    for g in goals:
        print(g)
    figures = {"ingest": rows, "ingest_ratio": round(ratio, 3),
               "commits": {"runs": commits, "ios": total_ios, "data_files": files, "first_median_s": round(first, 4),
                           "last_median_s": round(last, 4), "ratio": round(last / first, 3)},
               "p99": p99}
    params = {"sample": sample, "runs_small": small, "runs_large": large, "commits": commits, "window": window,
              "replicate": k, "cpus": os.cpu_count()}
    where = bench_results.append(RESULTS, "bench-fleet", params, figures, [bench_results.goal(g) for g in goals], REPO)
    print(f"bench-fleet: record appended to {where}")


if __name__ == "__main__":
    main()
