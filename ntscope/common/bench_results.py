#!/usr/bin/env python3
"""Benchmark results as data: each run of a bench (`just bench-convert`, `just bench-analyze`,
sql/bench/bench_export.py) appends one JSON record, one line, to the results file of its folder
(analyzer/bench/results.jsonl, sql/bench/results.jsonl), or to $BENCH_RESULTS when set (the
tests point it at a temporary file). Standard library only: bench_convert.sh runs it with the
system python3.

A record (keys in this order):
  bench     the bench's name, e.g. "bench-convert", "bench-analyze", "bench-analyze-run"
  date      UTC, ISO 8601 ("2026-11-28T10:15:00Z")
  commit    `git rev-parse HEAD` of the checkout (null outside git); dirty: uncommitted
            changes to tracked files (null when unknown)
  machine   cpu_model, cores, memory_gib, kernel (uname -r)
  params    what the run was asked for (sizes, repetitions, limits, tool versions ...)
  figures   what it printed, as numbers (rows of its tables, ratios against its baseline)
  goals     one entry per goal line it printed: goal (the line's text before the verdict),
            met (true / false), figure (the figure the verdict rests on, as printed)
A record seeded from figures measured before the benches wrote records also has `source`
(where the figures were) and may leave machine fields null.

Read them with DuckDB, e.g. SELECT date, r.events, r.analyze_s FROM read_json('sql/bench/results.jsonl'),
unnest(figures.rows) AS u(r) WHERE bench = 'bench-analyze'.

Command line: `python -m ntscope.common.bench_results append BENCH DEFAULT_PATH < {"params": .., "figures": ..,
"goals": ..}` appends a record and prints the path (for shell benches); `python -m ntscope.common.bench_results table`
prints ARCHITECTURE.md's "Performance" table from the committed results files (tools/check_examples.py
checks that ARCHITECTURE.md holds it)."""
import datetime
import json
import math
import os
import platform
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # the checkout (ntscope/common/..)


def machine():
    """cpu_model (/proc/cpuinfo), cores, memory_gib (/proc/meminfo MemTotal), kernel."""
    cpu = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = round(int(line.split()[1]) / 2**20, 1)
                    break
    except OSError:
        pass
    return {"cpu_model": cpu, "cores": os.cpu_count(), "memory_gib": mem, "kernel": platform.release()}


def checkout(repo=REPO):
    """(commit, dirty) of the checkout at repo; (None, None) outside git."""
    try:
        head = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True)
        if head.returncode != 0:
            return None, None
        status = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True)
        return head.stdout.strip(), (bool(status.stdout.strip()) if status.returncode == 0 else None)
    except OSError:
        return None, None


def finite(x):
    """x with every NaN or infinity replaced by None (JSON has neither)."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite(v) for v in x]
    return x


def goal(line):
    """A bench's goal line ("goal: TEXT: met (FIGURE)" or "...: NOT MET (FIGURE)") as a goals entry."""
    text = line[len("goal: "):] if line.startswith("goal: ") else line
    for word, met in ((": NOT MET", False), (": met", True)):
        if word in text:
            head, tail = text.split(word, 1)
            tail = tail.strip()
            figure = tail[1:-1] if tail.startswith("(") and tail.endswith(")") else (tail or None)
            return {"goal": head, "met": met, "figure": figure}
    raise ValueError(f"not a goal line: {line!r}")


def path_for(default):
    """Where a bench appends: $BENCH_RESULTS, else its folder's results file."""
    return os.environ.get("BENCH_RESULTS") or default


def record(bench, params, figures, goals, repo=REPO):
    commit, dirty = checkout(repo)
    return finite({"bench": bench,
                   "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                   "commit": commit, "dirty": dirty, "machine": machine(),
                   "params": params, "figures": figures, "goals": goals})


def append(default_path, bench, params, figures, goals, repo=REPO):
    """Appends one record (one line) to path_for(default_path); returns that path. The line is
    written with one write() of a file opened for appending, so a crash leaves whole lines."""
    path = path_for(default_path)
    line = json.dumps(record(bench, params, figures, goals, repo), allow_nan=False) + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "a") as f:
        f.write(line)
    return path


RESULTS_FILES = ("analyzer/bench/results.jsonl", "sql/bench/results.jsonl")


def records(repo=REPO):
    """Every record of the committed results files, oldest first within each file."""
    out = []
    for rel in RESULTS_FILES:
        with open(os.path.join(repo, rel)) as f:
            out += [json.loads(line) for line in f if line.strip()]
    return out


def latest(recs, test):
    """The newest record that passes test (None when none does)."""
    found = [r for r in recs if test(r)]
    return max(found, key=lambda r: r["date"]) if found else None


def machine_text(m):
    parts = [f"{m['cores']} cores" if m.get("cores") else None,
             f"{m['memory_gib']:g} GiB" if m.get("memory_gib") else None, m.get("cpu_model")]
    return ", ".join(p for p in parts if p) or "unknown"


def verdict(rec, goal_start):
    """'met' / 'not met' of the record's goal whose text starts with goal_start ('?' without one)."""
    met = [g["met"] for g in rec["goals"] if g["goal"].startswith(goal_start)]
    return ("met" if met[0] else "not met") if met else "?"


def performance_table(repo=REPO):
    """ARCHITECTURE.md's "Performance" table: the latest figures of each kind of bench run, read from the
    results files (bench-convert: a 10 M-event copy and the real capture; bench-analyze: the
    stock and the patched benchmark of record, the 100 M-event run, the 1 M-I/O compare)."""
    recs = records(repo)
    rows = []

    def row(what, time, baseline, memory, rec):
        rows.append(f"| {what} | {time} | {baseline} | {memory} | {rec['date'][:10]} | {machine_text(rec['machine'])} |")

    conv = latest(recs, lambda r: r["bench"] == "bench-convert")
    if conv:
        by = {(x["input"], x["command"]): x for x in conv["figures"]["rows"]}
        ratio = {x["input"]: x for x in conv["figures"]["ratios"]}
        for name, what in (("scaled-big", "a real trace's pages repeated"), ("lab-high-rate", "a real patched capture")):
            if (name, "convert") in by:
                c = by[(name, "convert")]
                row(f"convert, {c['events'] / 1e6:.2f} M events ({what})", f"{c['wall_s']:.2f} s ({c['m_events_per_s']:.2f} M events/s)",
                    f"{ratio[name]['vs_tracecmd_wall']:.1f}x faster than `trace-cmd report`", f"{c['peak_rss_mb']:.0f} MB", conv)

    def analyze(rec, label):
        for x in rec["figures"]["rows"]:
            base = (f"{x['analyze_vs_tracecmd']:.2f}x the time of `trace-cmd report`" if x.get("analyze_vs_tracecmd")
                    else "-")
            row(f"analyze, {label}, {x['events'] / 1e6:.1f} M events ({x['ios']:,} I/Os)", f"{x['analyze_s']:.1f} s",
                base, f"{x['peak_rss_mib']:,} MiB", rec)
        for gr in rec["figures"]["growth"]:
            row(f"analyze, {label}, twice the events", f"x{gr['per_doubling']:.2f} the time",
                f"goal: at most x2.2 ({verdict(rec, 'twice the events')})", "-", rec)
        base = rec["figures"].get("baseline")   # BASELINE=<commit>: the same runs analyzed by that commit
        for x in base["rows"] if base else []:
            judged = verdict(rec, f"analyze no slower than the baseline {base['commit'][:12]} at {x['events']:,} events")
            row(f"analyze, {label}, {x['events'] / 1e6:.1f} M events, beside commit {base['commit'][:12]}",
                f"{x['analyze_s']:.1f} s vs {x['baseline_s']:.1f} s",
                f"x{x['ratio']:.3f} the commit's time (the reps' spread {x['spread']:.1%})"
                + (f"; goal: no slower ({judged})" if judged != "?" else ""),
                f"{x['peak_rss_mib']:,} vs {x['baseline_peak_rss_mib']:,} MiB", rec)

    def analyze_run(test):
        return latest(recs, lambda r: r["bench"] == "bench-analyze" and r["figures"]["rows"] and test(r))
    for test, label in ((lambda r: r["params"]["sample"] == "stock-randread-4k-qd8" and r["params"]["tracecmd"],
                         "stock capture scaled"),
                        (lambda r: r["params"]["sample"] != "stock-randread-4k-qd8" and r["params"]["tracecmd"],
                         "real patched capture scaled"),
                        # without the baseline: the default sample only (a side run on another
                        # sample, e.g. an A/B of one analysis, stays in the results file)
                        (lambda r: not r["params"]["tracecmd"] and r["params"]["sample"] == "stock-randread-4k-qd8",
                         "stock capture scaled")):
        rec = analyze_run(test)
        if rec:
            analyze(rec, label)
    cmp = latest(recs, lambda r: r["bench"] == "bench-analyze" and "compare" in r["figures"])
    if cmp:
        c = cmp["figures"]["compare"]
        row(f"compare, two runs of {c['ios_each'] / 1e6:g} M I/Os", f"{c['build_both_s']:.1f} s "
            f"({c['read_back_s']:.1f} s once both were analyzed)", f"goal: at most 60 s ({verdict(cmp, 'compare of')})", f"{c['build_both_peak_rss_mib']:,} MiB", cmp)
    head = ["| what | time | against the baseline | peak memory | date | machine |", "|---|---|---|---|---|---|"]
    return "\n".join(head + rows)


TEST_TIMES = "tools/test_times.jsonl"


def test_time_table(repo=REPO):
    """ARCHITECTURE.md's "Test time" table: the newest passing `just test` record of each cache state (a
    fresh machine, a partial cache, a warm cache) from tools/test_times.jsonl (tools/run_tests.py writes them),
    with its slowest phases."""
    with open(os.path.join(repo, TEST_TIMES)) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    whole = [r for r in recs if r["bench"] == "test-time" and r["params"].get("complete") and not r["figures"]["failed"]]
    head = ["| cache | `bash setup.sh && just test` | slowest phases | date | commit | machine |",
            "|---|---|---|---|---|---|"]
    rows = []
    for state in ("fresh", "partial", "warm"):
        rec = latest(whole, lambda r, state=state: r["params"]["cache"] == state)
        if not rec:
            continue
        phases = sorted((x for x in rec["figures"]["rows"] if not x["phase"].startswith(" ")), key=lambda x: -x["s"])
        slowest = ", ".join(f"{x['phase']} {x['s'] / 60:.1f}" for x in phases[:4])
        label = state
        if state == "partial":   # which of the three it found, e.g. the packages on a new home folder
            label += " (found: " + ", ".join(k.replace("_", " ") for k, v in rec["params"]["found"].items() if v) + ")"
        rows.append(f"| {label}{', CI=true' if rec['params'].get('ci') else ''} | {rec['figures']['total_s'] / 60:.1f} min "
                    f"| {slowest} (min) | {rec['date'][:10]} | {(rec['commit'] or '?')[:10]} | {machine_text(rec['machine'])} |")
    return "\n".join(head + rows)


def main(argv):
    if argv == ["table"]:
        print(performance_table())
        return 0
    if argv == ["test-times"]:
        print(test_time_table())
        return 0
    if len(argv) != 3 or argv[0] != "append":
        print("usage: python -m ntscope.common.bench_results append BENCH DEFAULT_PATH < {params, figures, goals} (JSON)\n"
              "       python -m ntscope.common.bench_results table   (ARCHITECTURE.md's Performance table, from the results files)\n"
              "       python -m ntscope.common.bench_results test-times   (ARCHITECTURE.md's Test time table, from tools/test_times.jsonl)", file=sys.stderr)
        return 2
    doc = json.load(sys.stdin)
    print(append(argv[2], argv[1], doc.get("params", {}), doc.get("figures", {}), doc.get("goals", [])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
