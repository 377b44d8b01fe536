# ntscope front door. `just --list` shows every recipe. Recipes pass their arguments on as
# arguments ("$@"): run names, paths and flags are data, never pasted into shell text.
set shell := ["bash", "-euo", "pipefail", "-c"]
set positional-arguments := true

# Build outputs, the Python venv and kernel trees live outside git (2-core machines: cache them).
export NTSCOPE_REPO := justfile_directory()
export NTSCOPE_CACHE := env_var_or_default("NTSCOPE_CACHE", env_var("HOME") / ".cache/ntscope")
# This checkout's own venv and cargo target (tools/checkout-cache.sh computes the same path).
checkout_cache := NTSCOPE_CACHE / "checkouts" / file_name(canonicalize(justfile_directory())) + "-" + replace_regex(sha256(canonicalize(justfile_directory())), '^(.{12}).*$', '$1')
export CARGO_TARGET_DIR := env_var_or_default("CARGO_TARGET_DIR", checkout_cache / "target")
# cargo's intermediate files are shared by every checkout (each crate's own path keys them), so a
# second clone reuses the dependencies' build; the binaries stay in each checkout's target.
export CARGO_BUILD_BUILD_DIR := env_var_or_default("CARGO_BUILD_BUILD_DIR", NTSCOPE_CACHE / "cargo-build")
export NTSCOPE_RUNS := env_var_or_default("NTSCOPE_RUNS", justfile_directory() / "runs")
export NTSCOPE_PYTHON := env_var_or_default("NTSCOPE_PYTHON", checkout_cache / "venv/bin/python")

import? 'kernel-patches/kernel.just'
import? 'capture/capture.just'
import? 'sql/sql.just'
import? 'reports/reports.just'

default:
    @just --list

# Set up analysis (setup.sh): the venv with ntscope, the converter, just; no root needed
setup:
    bash setup.sh

# Debian packages of the groups of tools/apt-packages.txt (test, lab, kernel), when missing (root or sudo).
[private]
_packages +GROUPS:
    bash tools/ensure-packages.sh $(printf '@%s ' "$@")

[private]
_python:
    @[ -x "$NTSCOPE_PYTHON" ] || { echo "ntscope: $NTSCOPE_PYTHON is missing; fix: bash setup.sh" >&2; exit 2; }

# Build the Rust converter (release) into $CARGO_TARGET_DIR.
build:
    cargo build --release --manifest-path analyzer/Cargo.toml

# Convert every host of a run (a name under runs/ or a path) not converted yet: <host>/trace.dat -> <host>/parquet/
[no-cd]
[no-exit-message]
convert RUN *FLAGS: _python
    @"$NTSCOPE_PYTHON" -m ntscope convert "$@"

# Main job on a bundled real capture: fixtures/stock-randread-4k-qd8 -> runs/demo -> report.
[no-exit-message]
demo *FLAGS: _python
    @"$NTSCOPE_PYTHON" -m ntscope demo "$@"

# Everything CI runs, phase by phase (tools/run_tests.py): converter, fuzzing, Python (SQL diff tests, reports, verdicts), examples, kernel patches, lab; prints a table of each phase's seconds and appends it to tools/test_times.jsonl.
test *ARGS: _python
    "$NTSCOPE_PYTHON" tools/run_tests.py "$@"

# The shipped example reports equal a fresh `just analyze` of their fixtures; README quotes them.
test-examples: _python
    "$NTSCOPE_PYTHON" tools/check_examples.py

# Analyzer: unit tests, bad-input tests, the differential test against libtracecmd.
test-analyzer: test-analyzer-unit test-differential

# Analyzer's cargo tests (unit and bad-input tests).
test-analyzer-unit: (_packages "test")
    cargo test --quiet --release --manifest-path analyzer/Cargo.toml

# The differential test: the converter against libtracecmd, event by event, on every real trace.
test-differential: (_packages "test") build _python
    NTSCOPE_BIN="$CARGO_TARGET_DIR/release/ntscope-analyzer" bash analyzer/tests/differential.sh

# Python tests: SQL diff tests, real captures, reports, verdicts, hostile inputs, packaging (pytest args pass on), one worker per core (NTSCOPE_TEST_WORKERS=N, 0: in this process).
test-python *ARGS: (_packages "test") build _python
    "$NTSCOPE_PYTHON" -m pytest -q -n "${NTSCOPE_TEST_WORKERS:-auto}" --durations=15 "$@"

# Throughput and memory of convert vs `trace-cmd report` and `cat`.
bench-convert: (_packages "test") build
    NTSCOPE_BIN="$CARGO_TARGET_DIR/release/ntscope-analyzer" bash analyzer/bench/bench_convert.sh

# A new user's time to a first report (`bash setup.sh && just demo` on a clean clone with an empty home: cargo, pip and ntscope caches new), beside its one release build; appends to tools/first_report_times.jsonl. Minutes; run it on a quiet machine.
bench-first-report: _python
    NTSCOPE_PYTHON="$NTSCOPE_PYTHON" bash tools/first_report.sh

# Build the fuzz target (cargo-fuzz, nightly toolchain, sanitizer build; its intermediate files are shared by checkouts).
fuzz-build:
    #!/usr/bin/env bash
    set -euo pipefail
    if ! rustup run nightly rustc --version >/dev/null 2>&1; then
        echo "fuzz-build: no nightly Rust toolchain (cargo-fuzz needs it); fix: rustup toolchain install nightly" >&2; exit 2
    fi
    command -v cargo-fuzz >/dev/null 2>&1 || cargo install --quiet --locked cargo-fuzz
    cd analyzer/fuzz
    cargo +nightly fuzz build --release decode

# Fuzz the trace.dat reader for SECONDS (cargo-fuzz, nightly toolchain).
fuzz-analyzer SECONDS="60": build fuzz-build
    #!/usr/bin/env bash
    set -euo pipefail
    bash analyzer/fuzz/seed_corpus.sh
    cd analyzer/fuzz
    cargo +nightly fuzz run --release decode corpus/decode -- -max_total_time="$1" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 > "$NTSCOPE_CACHE/fuzz.log" 2>&1 || { tail -40 "$NTSCOPE_CACHE/fuzz.log"; echo "fuzz-analyzer: the decoder crashed, hung or leaked; the input is under analyzer/fuzz/artifacts/" >&2; exit 1; }
    grep -E "^Done [0-9]+ runs|stat::(number_of_executed_units|peak_rss_mb)" "$NTSCOPE_CACHE/fuzz.log"
