#!/usr/bin/env bash
# Prints the absolute path of a run given as a path (relative to where the user ran
# `just`) or as a name under runs/. Usage: resolve_run.sh RUN INVOCATION_DIR RUNS_DIR
run=$1 from=$2 runs=$3
for cand in "$run" "$from/$run" "$runs/$run"; do
    case "$cand" in /*) ;; *) continue ;; esac
    [ -d "$cand" ] && { (cd "$cand" && pwd); exit 0; }
done
echo "ntscope: no run directory '$run' (looked in $from and $runs); fix: pass a run name under runs/ or a path to a run directory" >&2
exit 2
