"""The run layout (ARCHITECTURE.md, "Run layout": a contract): runs/<run>/<host>/trace.dat, host.json,
parquet/ (convert), runs/<run>/report/ (analyze). Names and paths given by users are
data: taken literally (no globbing, no shell), checked before they become paths."""
import json
import os
import stat
import subprocess
import sys

from . import converter
from .errors import NtscopeError

REPORT_DIR = "report"


def runs_dir():
    """Where run names are looked up: $NTSCOPE_RUNS, else ./runs."""
    return os.path.abspath(os.environ.get("NTSCOPE_RUNS") or "runs")


def resolve(run):
    """A run given as a path (relative to the current directory) or as a name under
    runs_dir(). Returns its absolute path."""
    if not run:
        raise NtscopeError("no run given; fix: pass a run name under runs/ or a path to a run directory")
    if os.path.isdir(run):
        return os.path.abspath(run)
    plain_name = os.sep not in run and run not in (".", "..")
    cand = os.path.join(runs_dir(), run)
    if plain_name and os.path.isdir(cand):
        return cand
    where = f"{os.getcwd()}" + (f" and {runs_dir()}" if plain_name else "")
    raise NtscopeError(f"no run directory {run!r} (looked in {where}); "
                       f"fix: pass a run name under runs/ or a path to a run directory")


def resolve_list(arg):
    """One side of a comparison: a run, or repeats of one condition as a comma-separated
    list ('base1,base2,base3'). An existing run whose name holds a comma is one run.
    Returns absolute paths, each run once."""
    if arg and (os.path.isdir(arg) or "," not in arg):
        return [resolve(arg)]
    parts = (arg or "").split(",")
    if any(not p for p in parts):
        raise NtscopeError(f"run list {arg!r} has an empty item; fix: name the runs separated by single commas "
                           f"(e.g. base1,base2,base3)")
    dirs = [resolve(p) for p in parts]
    seen = set()
    for p, d in zip(parts, dirs):
        if d in seen:
            raise NtscopeError(f"run list {arg!r} names {d} twice; fix: give each repeat once")
        seen.add(d)
    return dirs


def host_dirs(run_dir):
    """Host directories of a run: subdirectories holding trace.dat or a converted parquet/."""
    try:
        names = sorted(os.listdir(run_dir))
    except OSError as e:
        raise NtscopeError(f"cannot list run directory {run_dir}: {e.strerror}; fix: check its permissions")
    hosts = []
    for name in names:
        d = os.path.join(run_dir, name)
        if name.startswith(".") or name == REPORT_DIR or not os.path.isdir(d):
            continue
        if os.path.lexists(os.path.join(d, "trace.dat")) or os.path.isdir(os.path.join(d, "parquet")):
            hosts.append(name)
    return hosts


def is_converted(host_dir):
    """parquet/metadata.json exists and was made from this trace.dat (same size, not older)."""
    meta = os.path.join(host_dir, "parquet", "metadata.json")
    trace = os.path.join(host_dir, "trace.dat")
    if not os.path.isfile(meta):
        return False
    if not os.path.lexists(trace):
        return True  # a run shipped converted (no trace.dat): nothing to redo
    try:
        with open(meta) as f:
            size = json.load(f).get("source", {}).get("size_bytes")
    except (OSError, ValueError, AttributeError):
        return False
    return size == os.path.getsize(trace) and os.path.getmtime(meta) >= os.path.getmtime(trace)


def check_trace_file(trace):
    """A trace.dat must be a regular file: a FIFO or device would block or never end."""
    mode = os.stat(trace).st_mode
    if not stat.S_ISREG(mode):
        kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
        raise NtscopeError(f"{trace} is {kind}; fix: copy the host's trace.dat file itself into the run")


def convert_missing(run_dir, progress=None, quiet=False):
    """Converts every host of the run whose trace.dat has no up-to-date parquet/ (the one
    place that decides what needs converting). Returns the hosts converted."""
    hosts = host_dirs(run_dir)
    if not hosts:
        raise NtscopeError(f"no host under {run_dir} (expected <host>/trace.dat); "
                           f"fix: copy each host's trace.dat to {run_dir}/<host>/trace.dat")
    todo = [h for h in hosts if os.path.lexists(os.path.join(run_dir, h, "trace.dat"))
            and not is_converted(os.path.join(run_dir, h))]
    if not todo:
        return []
    binary = converter.path()
    for i, host in enumerate(todo):
        trace = os.path.join(run_dir, host, "trace.dat")
        check_trace_file(trace)
        if progress:
            progress.note(f"converting {host}/trace.dat ({i + 1}/{len(todo)})")
        elif not quiet:
            print(f"ntscope: converting {trace}", file=sys.stderr)
        cmd = [binary, "convert", trace, "--out", os.path.join(run_dir, host, "parquet")]
        if progress is None or not progress.enabled:
            cmd.append("--no-progress")
        if quiet:
            cmd.append("--quiet")
        r = subprocess.run(cmd)
        if r.returncode == 1:
            continue  # converted; losses are recorded in metadata.json and in pipeline_stats
        if r.returncode != 0:
            raise NtscopeError(f"converting {trace} failed (exit {r.returncode}); see the converter's message above")
    return todo
