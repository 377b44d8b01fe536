#!/usr/bin/env python3
"""Time and peak memory of the per-I/O outputs of analyze: report/io.parquet +
io_stages.parquet (DuckDB COPY) and report/timeline.perfetto-trace (DuckDB sorts the io rows,
spans and counters into Parquet, `ntscope-analyzer timeline-encode` lays out, merges and encodes them),
at two (or more) sizes of a synthetic run: fixtures/stock-randread-4k-qd8 (6389 I/Os) repeated
N times (make_scaled_run.py), copy k stretched in time by STRETCH * k / N (--stretch, as
bench_analyze.py: durations that vary from copy to copy, as a real run's do). Prints figures
and the ratios between the sizes; asserts nothing (speed and memory are not test verdicts on a shared machine).

Each size runs in a child process, in phases: load (views, selection), export (the two
Parquet files), timeline; wall and CPU seconds (user + system, every thread and the encoder
process: on a shared machine wall time mostly measures the others). Peak RSS is measured per
phase (the kernel's high-water mark, reset between phases through /proc/self/clear_refs), as
is the peak of Python's own heap (tracemalloc; DuckDB's buffers not: those are bounded by
--memory-limit, MEMORY_LIMIT here); the encoder's own peak RSS is printed apart (it runs
beside this process: add the two).

Usage: NTSCOPE_BIN=.../ntscope python sql/bench/bench_export.py [N1 N2 ...]   (default 20 160:
       128 k and 1.02 M I/Os).  Env: MEMORY_LIMIT (default 2GB), STRETCH (default 0.02; 0:
       exact copies), TMPDIR (scratch; the 1 M-I/O run needs ~3 GB), BENCH_RESULTS (where the
       run's record goes; default sql/bench/results.jsonl, ntscope/common/bench_results.py)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SAMPLE = os.path.join(REPO, "fixtures", "stock-randread-4k-qd8")
PHASES = ("load views", "io.parquet + io_stages.parquet", "timeline.perfetto-trace")


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")          # resets VmHWM (peak RSS) to the current RSS
    except OSError:
        pass


def child(run, memory_limit):
    import tracemalloc
    from ntscope.common import converter
    from ntscope.reports.report import export, selection, spec
    from ntscope.reports.timeline import perfetto_trace as timeline
    from ntscope.sql import views
    out = {}

    def phase(name, fn):
        reset_peak()
        tracemalloc.start()
        t, c = time.perf_counter(), os.times()
        result = fn()
        secs, c2 = time.perf_counter() - t, os.times()
        _, py_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        cpu = lambda t: t.user + t.system + t.children_user + t.children_system   # noqa: E731
        out[name] = {"s": secs, "cpu_s": cpu(c2) - cpu(c),
                     "peak_rss_mib": status_kib("VmHWM") / 1024, "py_heap_peak_mib": py_peak / 2**20}
        return result

    # The encoder's own peak RSS, from /usr/bin/time around it (the children's ru_maxrss would
    # count the pages a fork of this process shares with it: this process's RSS, not the encoder's)
    work = tempfile.mkdtemp(prefix="bench-export-encoder.")
    wrapper, rss_file = os.path.join(work, "ntscope"), os.path.join(work, "encoder-rss-kib")
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\nexec /usr/bin/time -f %M -a -o "$BENCH_ENCODER_RSS" "$BENCH_ENCODER_BIN" "$@"\n')
    os.chmod(wrapper, 0o755)
    os.environ.update(BENCH_ENCODER_RSS=rss_file, BENCH_ENCODER_BIN=converter.path(), NTSCOPE_BIN=wrapper)

    def load():
        c = views.connect(run, memory_limit=memory_limit)
        selection.apply(c, spec.Spec())
        return c
    con = phase("load views", load)
    out["ios"] = con.execute("SELECT count(*) FROM io_selected").fetchall()[0][0]
    rep = os.path.join(run, "bench-out")
    os.makedirs(rep, exist_ok=True)
    io_p, st_p, tl_p = (os.path.join(rep, f) for f in ("io.parquet", "io_stages.parquet", "timeline.perfetto-trace"))
    phase("io.parquet + io_stages.parquet", lambda: (export.write_io(con, io_p), export.write_stages(con, st_p, ["stock"])))
    out["io.parquet + io_stages.parquet"]["mb"] = (os.path.getsize(io_p) + os.path.getsize(st_p)) / 1e6
    timeline.stage_set_of(con, {"stage_sets": ["stock"], "primary_stage_set": "stock"})
    phase("timeline.perfetto-trace", lambda: timeline.write(con, tl_p))
    out["timeline.perfetto-trace"]["mb"] = os.path.getsize(tl_p) / 1e6
    with open(rss_file) as f:
        out["timeline.perfetto-trace"]["encoder_peak_rss_mib"] = max(int(x) for x in f.read().split()) / 1024
    shutil.rmtree(work)
    print(json.dumps(out))


def main(sizes):
    ntscope = os.environ.get("NTSCOPE_BIN")
    if not ntscope:
        print("bench_export: set NTSCOPE_BIN to the ntscope converter binary", file=sys.stderr)
        return 2
    mem = os.environ.get("MEMORY_LIMIT", "2GB")
    stretch = os.environ.get("STRETCH", "0.02")
    results = {}
    with tempfile.TemporaryDirectory(prefix="ntscope-bench-export.") as work:
        sample = os.path.join(work, "sample")
        for host in ("initiator", "target"):
            shutil.copytree(os.path.join(SAMPLE, host), os.path.join(sample, host))
            subprocess.run([ntscope, "convert", os.path.join(sample, host, "trace.dat"), "--out",
                            os.path.join(sample, host, "parquet"), "--quiet"], check=True)
        for n in sizes:
            big = os.path.join(work, f"x{n}")
            subprocess.run([sys.executable, os.path.join(HERE, "make_scaled_run.py"), sample, big, str(n),
                            "--stretch", stretch], check=True)
            r = subprocess.run([sys.executable, __file__, "--child", big, mem], capture_output=True, text=True)
            if r.returncode != 0:
                print(f"bench_export: the x{n} child failed (exit {r.returncode}):\n{r.stderr[-3000:]}", file=sys.stderr)
                return 2
            results[n] = json.loads(r.stdout.strip().splitlines()[-1])
            shutil.rmtree(big)
            print_table(results, mem, stretch)
    from ntscope.common import bench_results
    rows = [{"copies": n, "ios": r["ios"], "phase": ph, **{k: round(v, 3) for k, v in r[ph].items()}}
            for n, r in results.items() for ph in PHASES]
    where = bench_results.append(os.path.join(HERE, "results.jsonl"), "bench-export",
                                 {"sizes": sizes, "memory_limit": mem, "stretch": float(stretch)}, {"rows": rows}, [], REPO)
    print(f"bench_export: record appended to {where}", file=sys.stderr)
    return 0


def print_table(results, mem, stretch):
    print(f"\nbench_export (DuckDB memory_limit {mem}; copies stretched by {stretch}; this machine: {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f})")
    print(f"{'I/Os':>9}  {'phase':<32} {'wall s':>8} {'CPU s':>8} {'peak RSS MiB':>13} {'py heap MiB':>12} "
          f"{'MB out':>8} {'encoder RSS MiB':>16}")
    for n, r in results.items():
        for ph in PHASES:
            x = r[ph]
            print(f"{r['ios']:>9}  {ph:<32} {x['s']:>8.1f} {x.get('cpu_s', float('nan')):>8.1f} "
                  f"{x['peak_rss_mib']:>13.0f} {x['py_heap_peak_mib']:>12.1f} {x.get('mb', float('nan')):>8.1f} "
                  f"{x.get('encoder_peak_rss_mib', 0) if ph.startswith('timeline') else float('nan'):>16.0f}")
    if len(results) >= 2:
        (n1, a), (n2, b) = list(results.items())[0], list(results.items())[-1]
        print(f"ratios {b['ios']} / {a['ios']} I/Os (x{b['ios'] / a['ios']:.1f}):")
        for ph in ("io.parquet + io_stages.parquet", "timeline.perfetto-trace"):
            x, y = a[ph], b[ph]
            print(f"  {ph:<32} time x{y['s'] / x['s']:.2f}  peak RSS x{y['peak_rss_mib'] / x['peak_rss_mib']:.2f}  "
                  f"py heap x{y['py_heap_peak_mib'] / max(x['py_heap_peak_mib'], 1e-9):.2f}  size x{y['mb'] / x['mb']:.2f}  "
                  f"({y['mb'] * 1e6 / b['ios']:.0f} bytes per I/O)")
    sys.stdout.flush()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main([int(a) for a in sys.argv[1:]] or [20, 160]))
