# ntscope front door. `just --list` shows every recipe.
set shell := ["bash", "-euo", "pipefail", "-c"]
set positional-arguments := false

# Build outputs and kernel trees live outside git (2-core machines: cache them).
export NTSCOPE_CACHE := env_var_or_default("NTSCOPE_CACHE", env_var("HOME") / ".cache/ntscope")
export CARGO_TARGET_DIR := env_var_or_default("CARGO_TARGET_DIR", NTSCOPE_CACHE / "target")
ntscope := CARGO_TARGET_DIR / "release/ntscope"
runs := env_var_or_default("NTSCOPE_RUNS", justfile_directory() / "runs")

import? 'kernel-patches/kernel.just'
import? 'capture/capture.just'
import? 'sql/sql.just'
import? 'reports/reports.just'
import? 'reports/compare.just'

default:
    @just --list

# Build the Rust analyzer (release).
build:
    cargo build --quiet --release --manifest-path analyzer/Cargo.toml

# Convert every host of a run (a name under runs/ or a path): <host>/trace.dat -> <host>/parquet/
convert RUN: build
    #!/usr/bin/env bash
    set -euo pipefail
    dir=$(bash tools/resolve_run.sh "{{RUN}}" "{{invocation_directory()}}" "{{runs}}")
    n=0
    for t in "$dir"/*/trace.dat; do
        [ -e "$t" ] || continue
        "{{ntscope}}" convert "$t" --out "$(dirname "$t")/parquet"
        n=$((n+1))
    done
    [ "$n" -gt 0 ] || { echo "convert: no <host>/trace.dat under $dir; fix: copy each host's trace.dat to $dir/<host>/trace.dat" >&2; exit 2; }

# Main job on a bundled real capture.
demo: build
    #!/usr/bin/env bash
    set -euo pipefail
    run="{{runs}}/demo"
    rm -rf "$run"; mkdir -p "$run"
    cp -r fixtures/stock-randread-4k-qd8/initiator fixtures/stock-randread-4k-qd8/target "$run"/
    just convert "$run"
    if just --summary | tr ' ' '\n' | grep -qx analyze; then just analyze "$run"; else
        for h in initiator target; do echo "== $h"; "{{ntscope}}" summary "$run/$h/parquet"; done
    fi

# Everything CI runs: converter, fuzzing, SQL, reports, diagnosis, kernel patches, lab.
test: build test-analyzer (fuzz-analyzer "60") test-sql test-reports test-compare test-examples test-kernel lab-test (kernel-loopback-check "6.1")

# The shipped example reports equal a fresh `just analyze` of their fixtures; README quotes them.
test-examples: build
    python3 tools/check_examples.py

# Analyzer: unit tests, bad-input tests, the differential test against libtracecmd.
test-analyzer:
    cargo test --quiet --release --manifest-path analyzer/Cargo.toml
    bash analyzer/tests/differential.sh

# Throughput and memory of convert vs `trace-cmd report` and `cat`.
bench-convert: build
    bash analyzer/bench/bench_convert.sh

# Fuzz the trace.dat reader for SECONDS (cargo-fuzz, nightly toolchain).
fuzz-analyzer SECONDS="60": build
    #!/usr/bin/env bash
    set -euo pipefail
    if ! rustup run nightly rustc --version >/dev/null 2>&1; then
        echo "fuzz-analyzer: no nightly Rust toolchain (cargo-fuzz needs it); fix: rustup toolchain install nightly" >&2; exit 2
    fi
    command -v cargo-fuzz >/dev/null 2>&1 || cargo install --quiet --locked cargo-fuzz
    bash analyzer/fuzz/seed_corpus.sh
    cd analyzer/fuzz
    cargo +nightly fuzz run --release decode corpus/decode -- -max_total_time={{SECONDS}} -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 > "$NTSCOPE_CACHE/fuzz.log" 2>&1 || { tail -40 "$NTSCOPE_CACHE/fuzz.log"; echo "fuzz-analyzer: the decoder crashed, hung or leaked; the input is under analyzer/fuzz/artifacts/" >&2; exit 1; }
    grep -E "^Done [0-9]+ runs|stat::(number_of_executed_units|peak_rss_mb)" "$NTSCOPE_CACHE/fuzz.log"
