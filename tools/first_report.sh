#!/usr/bin/env bash
# A new user's time to a first report: README's first command, `bash setup.sh && just demo`, on
# a clean clone of this checkout's commit with a home folder of its own (no cargo registry or
# build folder, no venv, no pip or ntscope cache), the machine's toolchains kept (rustup's
# toolchains, python3, the apt packages). The baseline beside it is what cannot be avoided:
# setup's one release build of the converter.
#   tools/first_report.sh            (just bench-first-report; minutes: the build is most of it)
# Prints the figures and appends one record to tools/first_report_times.jsonl ($BENCH_RESULTS
# replaces the file): setup's and its build's seconds, demo's, the first report's, what it
# took beyond the build, and the goal "one release build plus under a minute".
# Run it on a quiet machine: the build's time is the machine's, the rest is ours.
# setup.sh links `ntscope` (and `just` when missing) into /usr/local/bin or ~/.local/bin; the
# links found before are put back at the end.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
py=${NTSCOPE_PYTHON:-$(bash "$repo/tools/checkout-cache.sh")/venv/bin/python}   # this checkout's venv (setup.sh)
die() { echo "first_report: $*" >&2; exit 2; }
command -v git >/dev/null || die "git is not on PATH; fix: apt-get install git"
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ] \
    || die "$repo has uncommitted changes: the clone would measure another tree; fix: commit or stash them"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/ntscope-first-report.XXXXXX")
if [ "$(id -u)" = 0 ]; then bindir=/usr/local/bin; else bindir=$HOME/.local/bin; fi
declare -A link_before=()
for name in just ntscope; do
    [ -L "$bindir/$name" ] && link_before[$name]=$(readlink "$bindir/$name")
done
restore() {
    local name
    for name in just ntscope; do
        if [ -n "${link_before[$name]:-}" ]; then ln -sfn "${link_before[$name]}" "$bindir/$name"
        elif [ -L "$bindir/$name" ] && [[ "$(readlink "$bindir/$name")" == "$scratch"/* ]]; then rm -f "$bindir/$name"; fi
    done
    rm -rf "$scratch"
}
trap restore EXIT

git clone -q "$repo" "$scratch/ntscope"
mkdir -p "$scratch/home"
# the toolchains stay where they are installed; everything setup and demo make or download is new
fresh_env=(HOME="$scratch/home" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="$scratch/home/.cargo"
    PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH")   # the toolchains' commands (rustup's proxies)
[ -d "${PYENV_ROOT:-$HOME/.pyenv}" ] && fresh_env+=(PYENV_ROOT="${PYENV_ROOT:-$HOME/.pyenv}")
# and none of this checkout's settings (the justfile exports NTSCOPE_RUNS, NTSCOPE_CACHE, CARGO_*:
# inherited, they would send the new user's build and demo run into this checkout's folders)
unset_ours=()
for v in $(compgen -e); do case "$v" in NTSCOPE_* | CARGO_*) unset_ours+=(-u "$v") ;; esac; done
t0=$(date +%s.%N)
(cd "$scratch/ntscope" && env "${unset_ours[@]}" "${fresh_env[@]}" bash setup.sh) >"$scratch/setup.log" 2>&1 \
    || { tail -n 20 "$scratch/setup.log" >&2; die "setup.sh failed (above)"; }
t1=$(date +%s.%N)
(cd "$scratch/ntscope" && env "${unset_ours[@]}" "${fresh_env[@]}" just demo) >"$scratch/demo.log" 2>&1 \
    || { tail -n 20 "$scratch/demo.log" >&2; die "just demo failed (above)"; }
t2=$(date +%s.%N)
[ -s "$scratch/ntscope/runs/demo/report/report.txt" ] || die "just demo wrote no runs/demo/report/report.txt"
setup_last=$(ls "$scratch"/home/.cache/ntscope/checkouts/*/setup-last.json)

"$py" - "$repo" "$t0" "$t1" "$t2" "$setup_last" <<'EOF'
import json, sys
from ntscope.common import bench_results
repo, t0, t1, t2, setup_last = sys.argv[1], *map(float, sys.argv[2:5]), sys.argv[5]
with open(setup_last) as f:
    build = json.load(f)["build_seconds"]
setup_s, demo_s = t1 - t0, t2 - t1
first = setup_s + demo_s
beyond = first - build
met = beyond < 60
print(f"first report: {first:.0f} s (setup {setup_s:.0f} s, of it the release build {build:.0f} s; demo {demo_s:.0f} s)")
print(f"baseline, the release build alone: {build:.0f} s; first report / build: {first / build:.2f}x; "
      f"beyond the build: {beyond:.0f} s")
line = f"goal: one release build plus under a minute: {'met' if met else 'NOT MET'} ({beyond:.0f} s beyond the build)"
print(line)
path = bench_results.append(f"{repo}/tools/first_report_times.jsonl", "first-report", {"cache": "fresh home"},
                            {"first_report_s": round(first, 1), "setup_s": round(setup_s, 1), "build_s": build,
                             "demo_s": round(demo_s, 1), "beyond_build_s": round(beyond, 1),
                             "ratio_to_build": round(first / build, 2)},
                            [bench_results.goal(line)], repo=repo)
print(f"appended to {path}")
EOF
