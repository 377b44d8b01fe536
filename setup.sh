#!/usr/bin/env bash
# Installs what analysis needs, without root when Rust and Python >= 3.11 are there;
# idempotent and quick when done. Usage: bash setup.sh && just demo   (or: && just test)
#   - no Debian package: the tests, the lab and the kernel builds install theirs when their
#     recipe first runs (tools/apt-packages.txt, tools/ensure-packages.sh; root or sudo then)
#   - a Python venv of this checkout's own (tools/checkout-cache.sh: $NTSCOPE_CACHE/checkouts/
#     <folder>-<hash of its path>/venv) holding the ntscope package (editable, from this
#     checkout) with the exact versions of constraints.txt; pip's refusal or failure stops
#     setup with exit 2. Two checkouts on one machine each have their venv and cargo target.
#   - `just` (rust-just, from the venv) and `ntscope` on PATH
# Rust must already be installed (rustup): the converter is built here once.
set -euo pipefail
t0=$(date +%s)
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
checkout_cache=$(bash "$repo/tools/checkout-cache.sh")
venv=$checkout_cache/venv
venv_state=kept
die() { echo "setup: error: $*" >&2; exit 2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }

# 1. Rust (the converter) and Python (>= 3.11: tomllib)
command -v cargo >/dev/null 2>&1 || die "cargo is not on PATH; fix: install Rust with rustup (https://rustup.rs)"
# the oldest Rust that builds the converter (analyzer/Cargo.toml rust-version), said before building
rust_min=$(sed -n 's/^rust-version = "\([0-9.]*\)".*/\1/p' "$repo/analyzer/Cargo.toml")
rust_have=$(rustc --version 2>/dev/null | sed -n 's/^rustc \([0-9][0-9.]*\).*/\1/p')
if [ -z "$rust_have" ] || [ "$(printf '%s\n%s\n' "$rust_min" "$rust_have" | sort -V | head -n 1)" != "$rust_min" ]; then
    die "the installed Rust is ${rust_have:-unknown} (rustc --version), older than the $rust_min the converter needs (analyzer/Cargo.toml rust-version; Debian 12's packaged Rust is 1.63); fix: install a current Rust with rustup (https://rustup.rs), or rustup update stable"
fi
py=${NTSCOPE_SETUP_PYTHON:-python3}
"$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
    || die "$py is older than 3.11 (ntscope needs tomllib); fix: install Python >= 3.11, or set NTSCOPE_SETUP_PYTHON"

# 2. The converter, built once in release (cargo's progress shows): the editable install below,
#    `just demo` and the tests reuse this build. cargo's intermediate files are shared by every
#    checkout (the justfile sets the same build dir), so a second clone builds only the crate.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$checkout_cache/target}
export CARGO_BUILD_BUILD_DIR=${CARGO_BUILD_BUILD_DIR:-${NTSCOPE_CACHE:-$HOME/.cache/ntscope}/cargo-build}
cargo_deps=kept   # for `just test`'s cache state: were the dependencies built before this setup?
[ -d "$CARGO_BUILD_BUILD_DIR/release/deps" ] || cargo_deps=built
echo "setup: building the converter (cargo build --release; minutes the first time, a second after)" >&2
t_build=$(date +%s)
cargo build --release --manifest-path "$repo/analyzer/Cargo.toml" \
    || die "cargo could not build the converter (see its message above); fix: check that Rust is up to date (rustup update)"
build_s=$(( $(date +%s) - t_build ))

# 3. The venv with ntscope installed from this checkout, exact versions. Redone only when
#    pyproject.toml, constraints.txt or the checkout's path changed.
stamp_want=$( { cat "$repo/pyproject.toml" "$repo/constraints.txt"; echo "$repo"; } | sha256sum | cut -c1-16)
if [ "$(cat "$venv/.ntscope-setup" 2>/dev/null)" != "$stamp_want" ] || ! "$venv/bin/python" -c 'import ntscope.cli' 2>/dev/null; then
    echo "setup: installing the ntscope package into $venv" >&2
    venv_state=installed
    if [ ! -x "$venv/bin/python" ] && ! "$py" -m venv "$venv" 2>/dev/null; then
        # Debian's own python3 needs python3-venv (ensurepip) for a venv
        rm -rf "$venv"
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq python3-venv >/dev/null || true
        "$py" -m venv "$venv" || die "cannot create a venv with $py; fix: apt-get install python3-venv"
    fi
    export PIP_CONSTRAINT="$repo/constraints.txt"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -e "$repo[test]" rust-just \
        || die "pip could not install ntscope into $venv (see its message above); fix: check the package index"
    echo "$stamp_want" > "$venv/.ntscope-setup"
fi
"$venv/bin/python" -c 'import duckdb, pyarrow, pytest, ntscope.cli' \
    || die "the venv $venv lacks a module after installation; fix: rm -rf $venv and run setup.sh again"

# 4. just and ntscope on PATH (/usr/local/bin as root, else ~/.local/bin): a `just` found there
#    already is kept; `ntscope` is linked unless another one (not a link setup made) is found.
if [ "$(id -u)" = 0 ]; then d=/usr/local/bin; else d=$HOME/.local/bin; fi
mkdir -p "$d"
command -v just >/dev/null 2>&1 || ln -sf "$venv/bin/just" "$d/just"
found=$(command -v ntscope 2>/dev/null || true)
if [ -z "$found" ] || [ -L "$found" ]; then ln -sf "$venv/bin/ntscope" "$d/ntscope"; fi
case ":$PATH:" in
*":$d:"*) ;;
*) echo "setup: note: just and ntscope are in $d, which is not on your PATH yet; add it: export PATH=\"$d:\$PATH\" (e.g. in ~/.profile), or run $venv/bin/just and $venv/bin/ntscope" >&2 ;;
esac
# How long this took and its release build, for `just test`'s phase table (tools/run_tests.py) and
# `just bench-first-report` (tools/first_report.sh).
printf '{"seconds": %s, "build_seconds": %s, "venv": "%s", "cargo_deps": "%s", "finished_unix": %s}\n' \
    "$(( $(date +%s) - t0 ))" "$build_s" "$venv_state" "$cargo_deps" "$(date +%s)" \
    > "$checkout_cache/setup-last.json.tmp" && mv "$checkout_cache/setup-last.json.tmp" "$checkout_cache/setup-last.json"
echo "setup: ok (python: $venv/bin/python, just: $(command -v just || echo "$d/just"), ntscope: $(command -v ntscope || echo "$d/ntscope"))" >&2
