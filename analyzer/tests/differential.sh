#!/usr/bin/env bash
# Differential test: ntscope's trace.dat -> Parquet converter against
# libtracecmd (the reference reader), event by event, field by field.
#
# Usage: analyzer/tests/differential.sh [--oracle-only] [TRACE.dat ...]
#   no TRACE given: every file named trace.dat under ../shared/samples and
#   ../shared/public-traces (beside the repo; public-traces/README.md says
#   which, each checked by its sha256) and under fixtures/, recursively; plus,
#   for each distinct sample, trace-cmd-converted copies as file version 6 and
#   as uncompressed version 7 (NTSCOPE_DIFF_VARIANTS=0 skips those), and
#   synthetic traces (NTSCOPE_DIFF_SYNTH=0 skips those). NTSCOPE_DIFF_JOBS traces are checked
#   at a time (default 2).
#   --oracle-only: only the oracle's self-check (no converter needed).
#
# Per trace: tracecmd_dump (oracle/, C over libtracecmd) and
# `$NTSCOPE_BIN convert TRACE --out TMP --strict` + parquet_dump.py print
# canonical lines (oracle/README.md); both are sorted (LC_ALL=C) and must be
# identical, and so must the event counts per buffer and event; the converter
# exits 0, or 1 only for events the kernel itself lost (oracle/strict_check.py).
# Self-check: the oracle's line count equals the event lines of
# `trace-cmd report -R` (an independent count), and the field values report -R
# prints, and the text plain `trace-cmd report` prints for ftrace's print,
# bprint and bputs, equal the oracle's (oracle/check_report_fields.py).
# Failing traces keep their dumps under $NTSCOPE_CACHE/differential/.
# Exit 0 when every trace passes; 1 when one fails or none was found;
# 2 on a setup error.
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${NTSCOPE_CACHE:-$HOME/.cache/ntscope}
bin=${NTSCOPE_BIN:-${CARGO_TARGET_DIR:-$(bash "$repo/tools/checkout-cache.sh")/target}/release/ntscope-analyzer}
oracle_src=$here/oracle/tracecmd_dump.c
# Keyed by the source's hash: checkouts of different versions share the cache.
oracle_bin=$cache/oracle/tracecmd_dump-$(sha256sum "$oracle_src" | cut -c1-16)
parquet_dump=$here/oracle/parquet_dump.py
keep_root=$cache/differential

die() { echo "differential: $*" >&2; exit 2; }
display_name() { # path relative to the repo's parent when possible
    local p=$1
    case $p in "$repo"/*) echo "${p#"$repo/"}" ;; "$(dirname "$repo")"/*) echo "../${p#"$(dirname "$repo")/"}" ;; *) echo "$p" ;; esac
}

oracle_only=0
traces=()
for arg in "$@"; do
    case $arg in
        --oracle-only) oracle_only=1 ;;
        -h|--help) sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option '$arg'; usage: differential.sh [--oracle-only] [TRACE.dat ...]" ;;
        *) [ -f "$arg" ] || die "no such trace file '$arg'"; traces+=("$(cd "$(dirname "$arg")" && pwd)/$(basename "$arg")") ;;
    esac
done
explicit=${#traces[@]}

# --- tools ---------------------------------------------------------------
command -v trace-cmd >/dev/null || die "trace-cmd not found; fix: just test-analyzer installs it (or apt-get install trace-cmd)"
# the project's Python (setup.sh's venv, which has pyarrow): a fresh machine's python3 has not
py=${NTSCOPE_PYTHON:-python3}
command -v "$py" >/dev/null || die "$py not found; fix: run ./setup.sh (or apt-get install python3)"
"$py" -c 'import pyarrow' 2>/dev/null || die "$py cannot import pyarrow; fix: run ./setup.sh (or set NTSCOPE_PYTHON to a Python with pyarrow)"
if [ ! -x "$oracle_bin" ]; then
    pkg-config --exists libtracecmd libtraceevent 2>/dev/null ||
        die "libtracecmd/libtraceevent development files not found; fix: just test-analyzer installs them (or apt-get install libtracecmd-dev libtraceevent-dev pkg-config gcc)"
    mkdir -p "$(dirname "$oracle_bin")"
    # shellcheck disable=SC2046  # pkg-config prints several words on purpose
    gcc -O2 -Wall -Wextra -o "$oracle_bin.tmp.$$" "$oracle_src" $(pkg-config --cflags --libs libtracecmd libtraceevent) ||
        die "building the oracle $oracle_src failed (compiler output above)"
    mv -f "$oracle_bin.tmp.$$" "$oracle_bin"
fi
if [ "$oracle_only" = 0 ] && [ ! -x "$bin" ]; then
    die "converter binary $bin not found; fix: build it (just build), set NTSCOPE_BIN, or pass --oracle-only"
fi

# --- traces --------------------------------------------------------------
public=${NTSCOPE_PUBLIC_TRACES:-$repo/../shared/public-traces}
if [ "$explicit" = 0 ]; then
    for dir in "$repo/../shared/samples" "$public" "$repo/fixtures"; do
        [ -d "$dir" ] || continue
        dir=$(cd "$dir" && pwd)
        while IFS= read -r -d '' t; do traces+=("$t"); done \
            < <(find "$dir" -type f -name trace.dat -print0 | sort -z)
    done
    # Traces recorded by other people (public-traces/README.md): each the file it names.
    "$py" "$here/public-traces/check_manifest.py" "$public" || exit 1
fi
if [ ${#traces[@]} = 0 ]; then
    echo "differential: no trace.dat found under $repo/../shared/samples, $public or $repo/fixtures" >&2
    echo "0 passed, 0 failed"
    exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ntscope-differential.XXXXXX")
trap 'rm -rf "$work"' EXIT

# File versions/compressions trace-cmd can rewrite a trace into: each copy
# must decode to exactly the same events.
variants=()
if [ "$explicit" = 0 ] && [ "${NTSCOPE_DIFF_VARIANTS:-1}" != 0 ]; then
    declare -A seen_variant=()
    for t in "${traces[@]}"; do
        # Rewrites of every real sample and of one patched-kernel capture cover the
        # v6 / plain v7 paths; rewriting all fixtures would only repeat them slowly.
        case "$t" in */samples/*|*/lab-6.1-patched-write-128k/*) ;; *) continue ;; esac
        sum=$(sha256sum "$t" | cut -c1-16)
        [ -z "${seen_variant[$sum]:-}" ] || continue
        seen_variant[$sum]=1
        for v in "6 none" "7 none"; do
            set -- $v
            out=$work/variants/$sum/v$1-$2/trace.dat
            mkdir -p "$(dirname "$out")"
            if trace-cmd convert -i "$t" -o "$out" --file-version "$1" --compression "$2" >"$work/convert.log" 2>&1; then
                variants+=("$out|$(display_name "$t") rewritten by trace-cmd convert as v$1, compression $2")
            else
                echo "differential: note: trace-cmd convert to v$1/$2 failed for $t, variant skipped:" >&2
                tail -3 "$work/convert.log" >&2
            fi
        done
    done
fi

# Synthetic traces with what the real ones lack: an instance buffer, DATE and
# OFFSET options, every field kind (__rel_loc, signed arrays ...), v6 instances.
if [ "$explicit" = 0 ] && [ "$oracle_only" = 0 ] && [ "${NTSCOPE_DIFF_SYNTH:-1}" != 0 ]; then
    for v in "6 none" "7 none" "7 zstd"; do
        set -- $v
        out=$work/synth/v$1-$2/trace.dat
        mkdir -p "$(dirname "$out")"
        "$bin" synth known --version "$1" --codec "$2" --cpus 2 --events 3001 --instance \
            --date 0x10 --offset -500 --out "$out" ||
            die "ntscope-analyzer synth failed for v$1/$2"
        variants+=("$out|synthetic v$1 $2 trace (instance, DATE, OFFSET, every field kind)")
    done
    # Big-endian and 32-bit kernels' layouts.
    for v in "7 zstd big 4" "6 none big 8" "7 none little 4"; do
        set -- $v
        out=$work/synth/known-v$1-$2-$3-$4/trace.dat
        mkdir -p "$(dirname "$out")"
        "$bin" synth known --version "$1" --codec "$2" --endian "$3" --long-size "$4" --cpus 2 \
            --events 2001 --instance --out "$out" || die "ntscope-analyzer synth failed for v$1/$2 $3-endian long $4"
        variants+=("$out|synthetic v$1 $2 trace, $3-endian, $4-byte long (every field kind)")
    done
    # The classes recordings by others bring (src/synth_classes.rs): ftrace print,
    # bprint and bputs with kallsyms and printk formats, xhci-hcd, field names used
    # twice, byte arrays, invalid UTF-8, fields of size 0.
    for v in "7 zstd little 8" "6 none little 4" "7 none big 8" "7 zstd big 4"; do
        set -- $v
        out=$work/synth/classes-v$1-$2-$3-$4/trace.dat
        mkdir -p "$(dirname "$out")"
        "$bin" synth classes --version "$1" --codec "$2" --endian "$3" --long-size "$4" --out "$out" ||
            die "ntscope-analyzer synth classes failed for v$1/$2 $3-endian long $4"
        variants+=("$out|synthetic event classes v$1 $2, $3-endian, $4-byte long")
    done
fi

# Per buffer and event, sorted: "<event>\t<count>", <event> being
# system:event for the top buffer and <instance>/system:event otherwise.
event_counts() { awk -F'\t' '{ n[($1 == "" ? "" : $1 "/") $6]++ } END { for (k in n) print k "\t" n[k] }' "$1" | sort; }

passed=0
failed=0

check_trace() { # trace path, label, scratch folder of its own
    local t=$1 label=$2 d=$3
    rm -rf "$d"; mkdir -p "$d"

    if ! "$oracle_bin" "$t" > "$d/oracle.txt" 2> "$d/oracle.err"; then
        echo "FAIL $label: the oracle (libtracecmd) cannot decode it:"; sed 's/^/    /' "$d/oracle.err" | head -5
        return 1
    fi
    local n_oracle n_report
    n_oracle=$(wc -l < "$d/oracle.txt")
    # Independent count: event lines of trace-cmd's own report ("comm-pid [cpu] ts: event:").
    n_report=$(trace-cmd report -R -i "$t" 2>/dev/null | grep -cE '\[[0-9]+\] +[0-9]+\.[0-9]+: +[^ ]+:' || true)
    if [ "$n_oracle" != "$n_report" ]; then
        echo "FAIL $label: oracle self-check: tracecmd_dump printed $n_oracle events, trace-cmd report -R shows $n_report"
        return 1
    fi
    # And every value report -R prints (through libtraceevent's printer) must match.
    if ! "$py" "$here/oracle/check_report_fields.py" "$oracle_bin" "$t" > "$d/report_check.txt" 2>&1; then
        echo "FAIL $label: oracle self-check: its field values disagree with trace-cmd report -R:"
        sed 's/^/    /' "$d/report_check.txt" | head -12
        return 1
    fi
    if [ "$oracle_only" = 1 ]; then
        echo "OK   $label: $n_oracle events (oracle self-check only)"
        return 0
    fi

    local rc=0
    "$bin" convert "$t" --out "$d/out" --strict > "$d/convert.log" 2>&1 || rc=$?
    if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
        echo "FAIL $label: ntscope-analyzer convert failed (exit $rc):"; tail -5 "$d/convert.log" | sed 's/^/    /'
        return 1
    fi
    if [ ! -d "$d/out" ]; then
        echo "FAIL $label: ntscope convert exited 0 but wrote no $d/out directory"
        return 1
    fi
    if ! "$py" "$here/oracle/strict_check.py" "$d/out" "$rc" > "$d/strict.txt" 2>&1; then
        echo "FAIL $label: convert --strict exited $rc:"; sed 's/^/    /' "$d/strict.txt" | head -8
        return 1
    fi
    if ! "$py" "$parquet_dump" "$d/out" > "$d/converter.txt" 2> "$d/parquet_dump.err"; then
        echo "FAIL $label: parquet_dump.py cannot read the converter output:"; sed 's/^/    /' "$d/parquet_dump.err" | head -5
        return 1
    fi
    sort -S 256M "$d/oracle.txt" > "$d/oracle.sorted"
    sort -S 256M "$d/converter.txt" > "$d/converter.sorted"
    event_counts "$d/oracle.txt" > "$d/oracle.counts"
    event_counts "$d/converter.txt" > "$d/converter.counts"

    if cmp -s "$d/oracle.sorted" "$d/converter.sorted" && cmp -s "$d/oracle.counts" "$d/converter.counts"; then
        echo "OK   $label: $n_oracle events compared, identical ($(wc -l < "$d/oracle.counts") event types)"
        return 0
    fi

    local n_conv only_o only_c keep
    n_conv=$(wc -l < "$d/converter.txt")
    comm -23 "$d/oracle.sorted" "$d/converter.sorted" > "$d/only_oracle"
    comm -13 "$d/oracle.sorted" "$d/converter.sorted" > "$d/only_converter"
    only_o=$(wc -l < "$d/only_oracle")
    only_c=$(wc -l < "$d/only_converter")
    echo "FAIL $label: oracle $n_oracle events, converter $n_conv; $only_o lines only in the oracle, $only_c only in the converter"
    echo "  first differing lines ('-' oracle/libtracecmd, '+' converter):"
    diff -U0 "$d/oracle.sorted" "$d/converter.sorted" | grep -E '^[-+][^-+]' | head -20 | sed 's/^/    /' || true
    echo "  events per buffer/event (oracle | converter):"
    join -t $'\t' -a1 -a2 -e 0 -o 0,1.2,2.2 "$d/oracle.counts" "$d/converter.counts" |
        awk -F'\t' '{ printf "    %-45s %9s | %-9s%s\n", $1, $2, $3, ($2 == $3 ? "" : "  <-- differs") }'
    echo "  differences per buffer/event (first differing fields of lines paired by buffer, cpu, ts):"
    "$py" "$here/oracle/diff_summary.py" "$d/only_oracle" "$d/only_converter" || true
    keep=$keep_root/$(echo "$label" | tr -c 'A-Za-z0-9._-' '_' | cut -c1-120)
    rm -rf "$keep"; mkdir -p "$keep"
    mv "$d/oracle.sorted" "$d/converter.sorted" "$d/oracle.counts" "$d/converter.counts" "$keep/"
    echo "  full sorted dumps kept in $keep/"
    return 1
}

# Every distinct trace (by content: samples are copied to fixtures/) is checked once, NTSCOPE_DIFF_JOBS
# at a time (default 2: each check is one process after another, so two use both cores); the
# results print in list order, a copy's line naming the trace whose result it reuses.
jobs=${NTSCOPE_DIFF_JOBS:-2}
[[ "$jobs" =~ ^[1-9][0-9]?$ ]] || die "NTSCOPE_DIFF_JOBS '$jobs' is not a number from 1 to 99"
items=()
for t in "${traces[@]}"; do items+=("$t|$(display_name "$t")"); done
items+=(${variants[@]+"${variants[@]}"})
first_of=()   # item index -> index of the first item with the same bytes
declare -A index_by_sum=()
running=0
for i in "${!items[@]}"; do
    sum=$(sha256sum "${items[$i]%%|*}" | cut -c1-64)
    if [ -n "${index_by_sum[$sum]:-}" ]; then first_of[$i]=${index_by_sum[$sum]}; continue; fi
    index_by_sum[$sum]=$i first_of[$i]=$i
    if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
    ( check_trace "${items[$i]%%|*}" "${items[$i]#*|}" "$work/job-$i" >"$work/job-$i.log" 2>&1
      echo $? >"$work/job-$i.rc"; rm -rf "$work/job-$i" ) &
    running=$((running + 1))
done
wait
for i in "${!items[@]}"; do
    f=${first_of[$i]} label=${items[$i]#*|}
    st=FAIL
    [ "$(cat "$work/job-$f.rc" 2>/dev/null)" = 0 ] && st=OK
    if [ "$f" = "$i" ]; then cat "$work/job-$i.log"
    else printf '%-4s %s\n' "$st" "$label: same bytes as ${items[$f]#*|}, result reused"; fi
    if [ "$st" = OK ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
