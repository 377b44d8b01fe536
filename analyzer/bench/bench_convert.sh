#!/usr/bin/env bash
# just bench-convert: `ntscope-analyzer convert` against `trace-cmd report > /dev/null` on the
# same trace files, side by side in one script: wall time, events/s, events per
# CPU-second, peak RSS, the speed ratio; medians of BENCH_REPS runs, the commands
# interleaved (A B C A B C ...) so a noisy machine slows them alike.
#
# Inputs:
#  - scaled copies of a real capture (`ntscope-analyzer synth replicate`: its ring-buffer pages
#    repeated and shifted in time), at BENCH_EVENTS/4 and BENCH_EVENTS events: time
#    must grow linearly, peak memory must not grow. zstd-compressed, as trace-cmd 3.x
#    records by default; the BENCH_EVENTS copy also uncompressed (scaled-big-raw): trace-cmd
#    report slows down per event on long compressed traces, not on uncompressed ones, so
#    the two show how much of the ratio is that slowdown;
#  - a real high-rate lab capture (capture/scenarios/high-rate.sh, patched 6.1 kernel),
#    recorded once into the cache when missing; skipped, saying why, when the lab
#    cannot run (no kernel built, no QEMU).
#
# Environment: BENCH_EVENTS (default 10000000), BENCH_REPS (3), BENCH_SOURCE (the real
# trace to scale), BENCH_LAB=0 (skip the lab capture), NTSCOPE_BIN, NTSCOPE_CACHE.
# Ends with one line per goal: met / not met, with the figures; under the per-CPU goal its
# ceiling here (decoding alone, nothing written). Appends the run's record (date, commit,
# machine, parameters, every figure and goal) to analyzer/bench/results.jsonl, or to
# $BENCH_RESULTS (ntscope/common/bench_results.py).
set -euo pipefail
export LC_ALL=C
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=${NTSCOPE_CACHE:-$HOME/.cache/ntscope}
bench=$cache/bench
bin=${NTSCOPE_BIN:-${CARGO_TARGET_DIR:-$(bash "$repo/tools/checkout-cache.sh")/target}/release/ntscope-analyzer}
events=${BENCH_EVENTS:-10000000}
reps=${BENCH_REPS:-3}
src=${BENCH_SOURCE:-$repo/fixtures/stock-randread-4k-qd8/initiator/trace.dat}
die() { echo "bench-convert: $*" >&2; exit 2; }
[ -x "$bin" ] || die "$bin not found; fix: just build (or set NTSCOPE_BIN)"
[ -x /usr/bin/time ] || die "/usr/bin/time missing; fix: apt-get install time"
command -v trace-cmd >/dev/null || die "trace-cmd not found; fix: just bench-convert installs it (or apt-get install trace-cmd)"
[ -f "$src" ] || die "no source trace $src; fix: set BENCH_SOURCE to a real trace.dat"
mkdir -p "$bench"
work=$(mktemp -d "${TMPDIR:-/tmp}/ntscope-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

scaled() { # events [codec, default zstd] -> path of a replicated trace (made once, cached)
    local f codec=${2:-zstd}
    f=$bench/replicated-$1-$(sha256sum "$src" | cut -c1-8)$([ "$codec" = zstd ] || echo "-$codec").dat
    if [ ! -f "$f" ]; then
        "$bin" synth replicate "$src" --events "$1" --codec "$codec" --out "$f.tmp" >&2 && mv "$f.tmp" "$f"
    fi
    echo "$f"
}

# The real high-rate capture: made once with the lab, kept in the cache.
lab_trace() {
    local run=high-rate-6.1 runs=$bench/runs t
    t=$runs/$run/initiator/trace.dat
    if [ -f "$t" ]; then echo "$t"; return; fi
    [ "${BENCH_LAB:-1}" != 0 ] || { echo "real capture: skipped (BENCH_LAB=0)" >&2; return; }
    if ! ls "$cache"/kernels/6.1-*/bzImage >/dev/null 2>&1; then
        echo "real capture: skipped: no lab kernel in $cache/kernels; fix: just kernel 6.1 patched, then run this again" >&2
        return
    fi
    command -v qemu-system-x86_64 >/dev/null || { echo "real capture: skipped: qemu-system-x86_64 not found; fix: apt-get install qemu-system-x86 (or run just lab-initramfs once)" >&2; return; }
    echo "real capture: recording $run once (two VMs, 60 s of fio, ~3 min) into $runs ..." >&2
    mkdir -p "$runs"
    if NTSCOPE_RUNS=$runs bash "$repo/capture/lab/lab.sh" "$run" high-rate timeout=900 > "$work/lab.log" 2>&1 && [ -f "$t" ]; then
        echo "$t"
    else
        echo "real capture: skipped: the lab run failed (last lines below); the scaled copies are still measured" >&2
        tail -5 "$work/lab.log" | sed 's/^/    /' >&2
    fi
}

# measure LABEL CMD...: one run; appends "label wall cpu rss_kb" to $work/runs. The wall time
# is taken in ns around the command (time's %e counts in 10 ms: 4% of a 0.25 s run).
measure() {
    local label=$1 t0 t1; shift
    t0=$(date +%s%N)
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" > /dev/null 2> "$work/err" || { cat "$work/err" >&2; die "'$*' failed"; }
    t1=$(date +%s%N)
    read -r _ u s k < "$work/time"
    echo "$label $(echo "scale=4; ($t1 - $t0) / 1000000000" | bc) $(echo "$u + $s" | bc) $k" >> "$work/runs"
}

events_of() { # trace -> events, from a conversion's metadata.json
    rm -rf "$work/count"
    "$bin" convert "$1" --out "$work/count" --quiet
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total_events"])' "$work/count/metadata.json"
}

small=$(scaled $((events / 4)))
big=$(scaled "$events")
big_raw=$(scaled "$events" none)
inputs=("scaled-small|$small" "scaled-big|$big" "scaled-big-raw|$big_raw")
real=$(lab_trace)
[ -n "$real" ] && inputs+=("lab-high-rate|$real")
: > "$work/runs"
: > "$work/inputs"
for entry in "${inputs[@]}"; do
    name=${entry%%|*} t=${entry#*|}
    echo "$name $t $(events_of "$t") $(stat -c %s "$t")" >> "$work/inputs"
done
ntscope_version=$("$bin" --version | cut -d' ' -f2)
# (trace-cmd --version exits non-zero after printing it)
tracecmd_version=$(trace-cmd --version 2>&1 | grep -o 'version [0-9.]*' | head -1 | cut -d' ' -f2 || true)
echo "bench-convert: $(nproc) cores, medians of $reps runs, commands interleaved; ntscope $ntscope_version, trace-cmd $tracecmd_version" >&2
for rep in $(seq "$reps"); do
    while read -r name t _ _; do
        echo "  run $rep/$reps: $name" >&2
        measure "$name/convert" "$bin" convert "$t" --out "$work/out" --quiet --no-progress
        measure "$name/convert-j1" "$bin" convert "$t" --out "$work/out" --quiet --no-progress --threads 1
        measure "$name/decode-only" "$bin" convert "$t" --decode-only
        measure "$name/report" trace-cmd report -i "$t"
    done < "$work/inputs"
done

"${NTSCOPE_PYTHON:-python3}" - "$work/inputs" "$work/runs" "$src" "$repo" "$events" "$reps" "${BENCH_LAB:-1}" "$ntscope_version" "$tracecmd_version" <<'PY'
import os, statistics, sys
inputs = [l.split() for l in open(sys.argv[1])]
repo = sys.argv[4]
from ntscope.common import bench_results
rows, ratios, goal_lines = [], [], []
def goal(line):
    print(line)
    goal_lines.append(line)
runs = {}
for l in open(sys.argv[2]):
    label, wall, cpu, kb = l.split()
    runs.setdefault(label, []).append((float(wall), float(cpu), int(kb)))
med = lambda xs: statistics.median(xs)
def fig(label):
    r = runs[label]
    return med([x[0] for x in r]), med([x[1] for x in r]), med([x[2] for x in r])
tools = [("convert", "ntscope convert (all cores)"), ("convert-j1", "ntscope convert --threads 1"),
         ("decode-only", "ntscope --decode-only (no Parquet)"), ("report", "trace-cmd report > /dev/null")]
print(f"{'input':14s} {'events':>11s} {'MB':>6s}  {'command':36s} {'wall s':>7s} {'M ev/s':>7s} {'M ev/CPU-s':>10s} {'peak RSS MB':>11s}")
res = {}
for name, path, n, size in inputs:
    n, size = int(n), int(size)
    for key, title in tools:
        wall, cpu, kb = fig(f"{name}/{key}")
        res[(name, key)] = (wall, cpu, kb, n)
        print(f"{name:14s} {n:11d} {size / 1e6:6.1f}  {title:36s} {wall:7.3f} {n / max(wall, 1e-3) / 1e6:7.2f} {n / max(cpu, 1e-3) / 1e6:10.2f} {kb / 1024:11.1f}")
        rows.append({"input": name, "events": n, "mb": round(size / 1e6, 1), "command": key, "wall_s": round(wall, 4),
                     "cpu_s": round(cpu, 3), "m_events_per_s": round(n / max(wall, 1e-3) / 1e6, 2),
                     "m_events_per_cpu_s": round(n / max(cpu, 1e-3) / 1e6, 2), "peak_rss_mb": round(kb / 1024, 1)})
    c, r = res[(name, "convert")], res[(name, "report")]
    d, j1 = res[(name, "decode-only")], res[(name, "convert-j1")]
    print(f"{name:14s} speed ratio vs trace-cmd report: {r[0] / max(c[0], 1e-3):.1f}x wall (all cores), "
          f"{r[0] / max(j1[0], 1e-3):.1f}x (one thread); Parquet share of CPU: {100 * (1 - d[1] / max(j1[1], 1e-3)):.0f}%")
    ratios.append({"input": name, "vs_tracecmd_wall": round(r[0] / max(c[0], 1e-3), 1),
                   "vs_tracecmd_wall_one_thread": round(r[0] / max(j1[0], 1e-3), 1),
                   "vs_tracecmd_cpu": round(r[1] / max(c[1], 1e-3), 1),
                   "parquet_cpu_share_pct": round(100 * (1 - d[1] / max(j1[1], 1e-3)))})
print(f"(scaled inputs: {sys.argv[3]} repeated and shifted in time; scaled-big-raw: the same events as "
      f"scaled-big, stored uncompressed)")
names = [i[0] for i in inputs]
ok = lambda x: "met" if x else "NOT MET"
# The speed goals on the large scaled trace and on the real capture; the ratio in CPU
# time too (trace-cmd is single-threaded: on a busy machine wall time hides ours).
for name in [n for n in ("scaled-big", "scaled-big-raw", "lab-high-rate") if n in names]:
    c, j1, r = res[(name, "convert")], res[(name, "convert-j1")], res[(name, "report")]
    ratio, cpu_ratio = r[0] / max(c[0], 1e-3), r[1] / max(c[1], 1e-3)
    goal(f"goal: convert >= 20x faster than trace-cmd report ({name}, {c[3]} events): {ok(ratio >= 20)} "
         f"({ratio:.1f}x wall: {c[0]:.3f} s vs {r[0]:.2f} s; {cpu_ratio:.1f}x in CPU time)")
    per_cpu, per_cpu1 = c[3] / max(c[1], 1e-3) / 1e6, c[3] / max(j1[1], 1e-3) / 1e6
    goal(f"goal: >= 10 M events per CPU-second ({name}): {ok(per_cpu >= 10)} ({per_cpu:.2f} M all cores, {per_cpu1:.2f} M one thread)")
    # A conversion decodes every event and then writes it: decoding alone is its ceiling.
    ceiling = c[3] / max(res[(name, "decode-only")][1], 1e-3) / 1e6
    print(f"      ceiling on this machine ({name}): decoding alone, nothing written, {ceiling:.2f} M events per CPU-second"
          + ("" if ceiling >= 10 else ": below the goal before any Parquet is written"))
    [x for x in ratios if x["input"] == name][0]["decode_only_m_events_per_cpu_s"] = round(ceiling, 2)
s, b = res[("scaled-small", "convert")], res[("scaled-big", "convert")]
grow_events, grow_time, grow_rss = b[3] / s[3], b[0] / max(s[0], 1e-3), b[2] / max(s[2], 1)
goal(f"goal: time linear in trace length (scaled): {ok(grow_time <= 1.25 * grow_events)} ({grow_events:.1f}x the events took {grow_time:.2f}x the time)")
goal(f"goal: memory flat in trace length (scaled): {ok(grow_rss <= 1.25)} ({s[2] / 1024:.0f} MB for {s[3]} events, {b[2] / 1024:.0f} MB for {b[3]}: {grow_rss:.2f}x)")
src = os.path.relpath(sys.argv[3], repo) if sys.argv[3].startswith(repo + os.sep) else sys.argv[3]
params = {"bench_events": int(sys.argv[5]), "reps": int(sys.argv[6]), "source": src, "lab": sys.argv[7] != "0",
          "inputs": names, "ntscope_version": sys.argv[8], "tracecmd_version": sys.argv[9]}
figures = {"rows": rows, "ratios": ratios, "growth": {"events_x": round(grow_events, 2), "time_x": round(grow_time, 2),
                                                      "peak_rss_x": round(grow_rss, 2)}}
where = bench_results.append(os.path.join(repo, "analyzer", "bench", "results.jsonl"), "bench-convert", params,
                             figures, [bench_results.goal(g) for g in goal_lines], repo)
print(f"bench-convert: record appended to {where}", file=sys.stderr)
PY
