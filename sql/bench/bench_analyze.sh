#!/usr/bin/env bash
# Time and peak memory of convert + analyze, next to `trace-cmd report` of the same data.
# In:  RUN (a run with <host>/trace.dat of >= 5M events per host), or nothing: then a
#      synthetic run is built from fixtures/stock-randread-4k-qd8 repeated until each host
#      has >= EVENTS events (default 5000000) (sql/bench/make_scaled_run.py; its
#      trace-cmd figure is the sample's time x copies, marked as extrapolated).
# Out: a table on stdout. Env: NTSCOPE_BIN (converter), EVENTS, MEMORY_LIMIT (DuckDB).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); repo=$(dirname "$(dirname "$here")")
ntscope=${NTSCOPE_BIN:?set NTSCOPE_BIN to the ntscope binary (just build)}
events=${EVENTS:-5000000}
mem=${MEMORY_LIMIT:-4GB}
work=$(mktemp -d "${TMPDIR:-/tmp}/ntscope-bench.XXXXXX"); trap 'rm -rf "$work"' EXIT
measure() { # label, command...: prints "label  seconds  peak_MiB"
	local label=$1; shift
	/usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; echo "bench: '$label' failed" >&2; exit 2; }
	read -r secs kib <"$work/time"
	printf '%-44s %9.2f s %9.0f MiB\n' "$label" "$secs" "$((kib / 1024))"
}
if [ $# -ge 1 ]; then
	run=$(cd "$1" && pwd)
	for t in "$run"/*/trace.dat; do
		h=$(basename "$(dirname "$t")")
		measure "trace-cmd report ($h)" trace-cmd report -i "$t"
		rm -rf "$work/$h"; measure "ntscope convert ($h)" "$ntscope" convert "$t" --out "$work/run/$h/parquet"
	done
	measure "analyze (all hosts, converted)" "$NTSCOPE_PYTHON" -m ntscope analyze "$work/run" --quiet --memory-limit "$mem"
else
	sample="$repo/fixtures/stock-randread-4k-qd8"
	mkdir -p "$work/sample"; cp -r "$sample/initiator" "$sample/target" "$work/sample/"
	for h in initiator target; do "$ntscope" convert "$work/sample/$h/trace.dat" --out "$work/sample/$h/parquet" >/dev/null 2>&1; done
	per=$(python3 -c "import json;print(json.load(open('$work/sample/initiator/parquet/metadata.json'))['total_events'])")
	copies=$(( (events + per - 1) / per ))
	echo "synthetic run: fixtures/stock-randread-4k-qd8 x $copies copies ($((per * copies)) initiator events)"
	for h in initiator target; do
		/usr/bin/time -f "%e" -o "$work/t" trace-cmd report -i "$work/sample/$h/trace.dat" >/dev/null 2>&1
		awk -v c="$copies" -v h="$h" '{printf "%-44s %9.2f s   (extrapolated: sample x copies)\n", "trace-cmd report (" h ")", $1 * c}' "$work/t"
		/usr/bin/time -f "%e" -o "$work/t" "$ntscope" convert "$work/sample/$h/trace.dat" --out "$work/conv-$h" >/dev/null 2>&1
		awk -v c="$copies" -v h="$h" '{printf "%-44s %9.2f s   (extrapolated: sample x copies)\n", "ntscope convert (" h ")", $1 * c}' "$work/t"
	done
	python3 "$here/make_scaled_run.py" "$work/sample" "$work/big" "$copies"
	cd "$repo/reports"
	measure "analyze ($((per * copies)) initiator events)" "$NTSCOPE_PYTHON" -m ntscope analyze "$work/big" --quiet --memory-limit "$mem"
	grep -E "matched_pct|events:" "$work/big/report/report.txt"
fi
