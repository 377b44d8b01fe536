#!/usr/bin/env bash
# Time and peak memory of analyze next to `trace-cmd report` of the same data.
# No argument: the benchmark of record, sql/bench/bench_analyze.py (analyze vs
#      `trace-cmd report > /dev/null` of the same events at two sizes of a scaled real
#      capture: events/s, peak RSS, ratios; its docstring lists inputs, outputs and env).
# RUN: a real run with <host>/trace.dat: trace-cmd report and convert of each host, then
#      analyze of the converted run, once each.
# Out: a table on stdout. Env: NTSCOPE_BIN (converter), NTSCOPE_PYTHON, MEMORY_LIMIT (DuckDB's,
#      passed as --memory-limit; default ntscope's own).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ntscope=${NTSCOPE_BIN:?set NTSCOPE_BIN to the ntscope binary (just build)}
# no RUN: the benchmark of record, two sizes of a scaled real capture
[ $# -ge 1 ] || exec "${NTSCOPE_PYTHON:-python3}" "$here/bench_analyze.py"
mem=(); [ -z "${MEMORY_LIMIT:-}" ] || mem=(--memory-limit "$MEMORY_LIMIT")
work=$(mktemp -d "${TMPDIR:-/tmp}/ntscope-bench.XXXXXX"); trap 'rm -rf "$work"' EXIT
measure() { # label, command...: prints "label  seconds  peak_MiB"
	local label=$1; shift
	/usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; echo "bench: '$label' failed" >&2; exit 2; }
	read -r secs kib <"$work/time"
	printf '%-44s %9.2f s %9.0f MiB\n' "$label" "$secs" "$((kib / 1024))"
}
run=$(cd "$1" && pwd)
for t in "$run"/*/trace.dat; do
	h=$(basename "$(dirname "$t")")
	measure "trace-cmd report ($h)" trace-cmd report -i "$t"
	rm -rf "$work/$h"; measure "ntscope convert ($h)" "$ntscope" convert "$t" --out "$work/run/$h/parquet"
done
measure "analyze (all hosts, converted)" "$NTSCOPE_PYTHON" -m ntscope analyze "$work/run" --quiet "${mem[@]}"
