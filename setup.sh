#!/usr/bin/env bash
# Installs what ntscope needs on a fresh Debian machine (idempotent, quick when done):
# trace-cmd + libtracecmd (the differential-test oracle), DuckDB, pyarrow, pytest,
# just, Chromium (the HTML report test).
# Rust must already be installed (rustup). Usage: bash setup.sh && just demo
set -euo pipefail
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_pkgs="trace-cmd libtracecmd-dev libtraceevent-dev libtracefs-dev pkg-config gcc time bc chromium"
missing=""
for p in $apt_pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "setup: installing Debian packages:$missing" >&2
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq $missing >/dev/null
fi

py_mods="duckdb pyarrow pytest"
need_pip=""
for m in $py_mods; do python3 -c "import $m" 2>/dev/null || need_pip=1; done
command -v just >/dev/null 2>&1 || need_pip=1
if [ -n "$need_pip" ]; then
  echo "setup: installing Python packages: duckdb pyarrow pytest rust-just" >&2
  python3 -m pip install -q --disable-pip-version-check duckdb pyarrow pytest rust-just 2>&1 | grep -v "Running pip as the 'root'" || true
  command -v pyenv >/dev/null 2>&1 && pyenv rehash || true
fi
command -v just >/dev/null 2>&1 || { echo "setup: 'just' is not on PATH after pip install; add $(python3 -m site --user-base)/bin to PATH" >&2; exit 2; }
