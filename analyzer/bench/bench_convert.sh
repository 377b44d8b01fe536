#!/usr/bin/env bash
# just bench-convert: throughput and peak memory of `ntscope convert` on a large trace,
# side by side (same script, same file, medians of BENCH_REPS runs) with
# `trace-cmd report > /dev/null` and `cat FILE > /dev/null`.
#
# The large trace is made from a real capture's ring-buffer pages, repeated and shifted
# later in time (ntscope synth replicate): real event mix and sizes, any length.
# Memory must not grow with trace length: the same conversion runs on a trace half as
# long and the two peaks are printed side by side.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=${NTSCOPE_CACHE:-$HOME/.cache/ntscope}/bench
bin=${NTSCOPE_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/ntscope/target}/release/ntscope}
events=${BENCH_EVENTS:-5000000}
reps=${BENCH_REPS:-3}
src=${BENCH_SOURCE:-$repo/fixtures/stock-randread-4k-qd8/initiator/trace.dat}
[ -x "$bin" ] || { echo "bench-convert: $bin not found; fix: just build" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-convert: /usr/bin/time missing; fix: apt-get install time" >&2; exit 2; }
mkdir -p "$cache"

make_trace() { # events -> path
    local f=$cache/replicated-$1-$(sha256sum "$src" | cut -c1-8).dat
    [ -f "$f" ] || "$bin" synth replicate "$src" --events "$1" --codec zstd --out "$f" >&2
    echo "$f"
}
big=$(make_trace "$events")
half=$(make_trace $((events / 2)))
out=$(mktemp -d "${TMPDIR:-/tmp}/ntscope-bench.XXXXXX")
trap 'rm -rf "$out"' EXIT
n_big=$("$bin" convert "$big" --out "$out/check" --quiet && python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['total_events'])" "$out/check/metadata.json")
n_half=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['total_events'])" <("$bin" convert "$half" --out "$out/check2" --quiet && cat "$out/check2/metadata.json"))
size=$(stat -c %s "$big")

# Runs a command BENCH_REPS times; prints "median_seconds median_peak_kb median_cpu_seconds".
measure() {
    local t=() m=() c=()
    for _ in $(seq "$reps"); do
        /usr/bin/time -f "%e %M %U %S" -o "$out/time" "$@" >/dev/null 2>"$out/err" || { cat "$out/err" >&2; exit 2; }
        read -r e k u s < "$out/time"
        t+=("$e"); m+=("$k"); c+=("$(echo "$u + $s" | bc)")
    done
    echo "$(printf '%s\n' "${t[@]}" | sort -g | sed -n "$(( (reps + 1) / 2 ))p") $(printf '%s\n' "${m[@]}" | sort -g | sed -n "$(( (reps + 1) / 2 ))p") $(printf '%s\n' "${c[@]}" | sort -g | sed -n "$(( (reps + 1) / 2 ))p")"
}

echo "bench-convert: $n_big events, $((size / 1000000)) MB (zstd v7) from $(basename "$(dirname "$src")")/$(basename "$src"); medians of $reps runs; $(nproc) cores"
read -r cat_s cat_kb _ <<< "$(measure cat "$big")"
read -r d_s d_kb d_cpu <<< "$(measure "$bin" convert "$big" --decode-only)"
read -r c1_s c1_kb c1_cpu <<< "$(measure "$bin" convert "$big" --out "$out/p1" --threads 1 --quiet)"
read -r c_s c_kb c_cpu <<< "$(measure "$bin" convert "$big" --out "$out/p" --quiet)"
read -r h_s h_kb _ <<< "$(measure "$bin" convert "$half" --out "$out/ph" --quiet)"
read -r r_s r_kb _ <<< "$(measure trace-cmd report -i "$big")"

row() { # label seconds kb
    python3 -c '
import sys
label, s, kb, n, size = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
s = max(s, 0.005)
print(f"  {label:34s} {s:8.2f} s  {n / s / 1e6:8.2f} M events/s  {size / s / 1e6:8.1f} MB/s  {kb / 1024:8.1f} MB peak RSS")
' "$1" "$2" "$3" "$n_big" "$size"
}
row "cat > /dev/null" "$cat_s" "$cat_kb"
row "ntscope --decode-only (no Parquet)" "$d_s" "$d_kb"
row "ntscope convert --threads 1" "$c1_s" "$c1_kb"
row "ntscope convert (all cores)" "$c_s" "$c_kb"
row "trace-cmd report > /dev/null" "$r_s" "$r_kb"
python3 - "$n_big" "$c1_s" "$c1_cpu" "$c_s" "$r_s" "$cat_s" "$c_kb" "$h_kb" "$n_half" "$d_cpu" <<'PY'
import sys
n, c1, c1cpu, c, r, cat, kb, hkb, nh, dcpu = sys.argv[1:]
dcpu = float(dcpu)
n, c1, c1cpu, c, r, cat, kb, hkb, nh = int(n), float(c1), float(c1cpu), float(c), float(r), float(cat), int(kb), int(hkb), int(nh)
c, c1, cat = max(c, 0.005), max(c1, 0.005), max(cat, 0.005)
print(f"  speedup vs trace-cmd report:      {r / c:6.1f}x (all cores)   {r / c1:6.1f}x (one thread)   target >= 20x")
print(f"  events/s per core (one thread):   {n / c1 / 1e6:6.2f} M/s wall, {n / max(c1cpu, 0.005) / 1e6:6.2f} M/s per CPU-second   target >= 10 M/s")
print(f"  CPU time: decode {dcpu:.2f} s, decode + Parquet {c1cpu:.2f} s (Parquet share {100 * (1 - dcpu / max(c1cpu, 0.005)):.0f}%)")
print(f"  convert time / cat time:          {c / cat:6.1f}x")
print(f"  peak RSS: {hkb / 1024:.1f} MB for {nh} events, {kb / 1024:.1f} MB for {n} events (ratio {kb / max(hkb, 1):.2f}; 1.00 = flat)")
PY
