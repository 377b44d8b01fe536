#!/usr/bin/env bash
# Time and peak memory of analyze next to `trace-cmd report` of the same data.
# No argument: the benchmark of record, sql/bench/bench_analyze.py (analyze vs
#      `trace-cmd report > /dev/null` of the same events at two sizes of a scaled real
#      capture: events/s, peak RSS, ratios; its docstring lists inputs, outputs and env).
# RUN: a real run with <host>/trace.dat: trace-cmd report and convert of each host, then
#      analyze of the converted run, once each.
# Out: a table on stdout, the ratio of analyze to trace-cmd report of every host, and the run's
#      record appended to sql/bench/results.jsonl (or $BENCH_RESULTS; ntscope/common/bench_results.py).
#      Env: NTSCOPE_BIN (converter), NTSCOPE_PYTHON, MEMORY_LIMIT (DuckDB's, passed as
#      --memory-limit; default ntscope's own).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ntscope=${NTSCOPE_BIN:?set NTSCOPE_BIN to the ntscope binary (just build)}
# no RUN: the benchmark of record, two sizes of a scaled real capture
[ $# -ge 1 ] || exec "${NTSCOPE_PYTHON:-python3}" "$here/bench_analyze.py"
mem=(); [ -z "${MEMORY_LIMIT:-}" ] || mem=(--memory-limit "$MEMORY_LIMIT")
work=$(mktemp -d "${TMPDIR:-/tmp}/ntscope-bench.XXXXXX"); trap 'rm -rf "$work"' EXIT
measure() { # kind, host, label, command...: prints "label  seconds  peak_MiB", keeps "kind host seconds kib"
	local kind=$1 host=$2 label=$3; shift 3
	/usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; echo "bench: '$label' failed" >&2; exit 2; }
	read -r secs kib <"$work/time"
	printf '%-44s %9.2f s %9.0f MiB\n' "$label" "$secs" "$((kib / 1024))"
	echo "$kind $host $secs $kib" >>"$work/figures"
}
run=$(cd "$1" && pwd)
for t in "$run"/*/trace.dat; do
	h=$(basename "$(dirname "$t")")
	measure tracecmd "$h" "trace-cmd report ($h)" trace-cmd report -i "$t"
	rm -rf "$work/$h"; measure convert "$h" "ntscope convert ($h)" "$ntscope" convert "$t" --out "$work/run/$h/parquet"
done
measure analyze all "analyze (all hosts, converted)" "$NTSCOPE_PYTHON" -m ntscope analyze "$work/run" --quiet "${mem[@]}"
"${NTSCOPE_PYTHON:-python3}" - "$work/figures" "$run" "${MEMORY_LIMIT:-default}" "$here/results.jsonl" <<'PY'
import os, sys
from ntscope.common import bench_results
rows = [l.split() for l in open(sys.argv[1])]   # kind host seconds KiB
hosts = {h: {"host": h} for kind, h, _, _ in rows if kind != "analyze"}
for kind, h, secs, kib in rows:
    if kind != "analyze":
        hosts[h].update({f"{kind}_s": float(secs), f"{kind}_peak_rss_mib": round(int(kib) / 1024)})
hosts = list(hosts.values())
[secs, kib] = [r[2:] for r in rows if r[0] == "analyze"][0]
tc = sum(x["tracecmd_s"] for x in hosts)
ratio = float(secs) / tc if tc > 0 else float("nan")
print(f"analyze / trace-cmd report of every host: {float(secs):.2f} s / {tc:.2f} s = {ratio:.2f}x")
where = bench_results.append(sys.argv[4], "bench-analyze-run", {"run": os.path.basename(sys.argv[2]), "memory_limit": sys.argv[3]},
                             {"hosts": hosts, "analyze_s": float(secs), "analyze_peak_rss_mib": round(int(kib) / 1024),
                              "tracecmd_total_s": tc, "analyze_vs_tracecmd": round(ratio, 2)}, [])
print(f"bench: record appended to {where}", file=sys.stderr)
PY
