"""A run's compare input, kept in the run for the next compare of the same run.

Building one side of a comparison (the run's views, its interference tables, then its
per-I/O stages) is most of `ntscope compare`: about 80 s a side at 1 M I/Os, while a compare
reading both sides back took 33 s in all. Users compare many runs against one base, so compare keeps what it
read of each side in <run>/.ntscope/compare-side/ and reads it back while it is fresh:

  stages.parquet  the rows of load.SOURCE_QUERY (run and rep left out: a side's role is
                  the comparison's, not the run's)
  info.parquet    the row of load.INFO_QUERY (run, rep, run_dir likewise left out)
  side.json       the key (below) and, when the run was compared as the RUN side, what
                  compare shows of it: its interference document and plot rows

Fresh means the key written with it equals the key of now: ntscope's version, DuckDB's
version, the text of every SQL file and of the Python modules that make these rows, and
every file of the run outside report/ and dot folders (relative path, size, mtime). Any
change, a new host or a re-converted trace, makes the next compare build the side again
and replace the folder. The folder is written as one set (output.ReportSet: a private
folder renamed into place), so a crash leaves the old set or none. A run folder that
cannot be written (read-only) is compared without keeping anything: a note on stderr.
"""
import glob
import hashlib
import json
import os
import shutil
import sys

import duckdb

import ntscope
from ntscope.output import OutputLock, ReportSet
from ntscope.errors import NtscopeError
from ntscope.sql import views

SCHEMA = "ntscope.compare-side/1"
CACHE_DIR = os.path.join(".ntscope", "compare-side")
REPORT_DIR = "report"   # ntscope.runs.REPORT_DIR: written by analyze and compare, not an input


def folder(run_dir):
    return os.path.join(os.path.abspath(run_dir), CACHE_DIR)


def code_digest():
    """What makes the cached rows: every SQL file, this package's and interference's modules."""
    here = os.path.dirname(os.path.abspath(__file__))
    interference = os.path.join(os.path.dirname(here), "interference")
    paths = sorted(glob.glob(os.path.join(glob.escape(views.SQL_DIR), "**", "*.sql"), recursive=True))
    paths += sorted(glob.glob(os.path.join(glob.escape(here), "*.py")))
    paths += sorted(glob.glob(os.path.join(glob.escape(interference), "*.py")))
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            h.update(os.path.basename(p).encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


def inputs_digest(run_dir):
    """Every file of the run the views could read: all but report/ and dot entries (this
    cache, lock files), by relative path, size and modification time."""
    run_dir = os.path.abspath(run_dir)
    h = hashlib.sha256()
    count = 0
    for root, dirs, files in os.walk(run_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not (root == run_dir and d == REPORT_DIR))
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = os.path.join(root, name)
            st = os.stat(path)
            h.update(f"{os.path.relpath(path, run_dir)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
            count += 1
    return f"{count}:{h.hexdigest()}"


def key(run_dir):
    return {"schema": SCHEMA, "ntscope": ntscope.__version__, "duckdb": duckdb.__version__,
            "code": code_digest(), "inputs": inputs_digest(run_dir)}


class Side:
    """A side read from the cache: its files and the run side's documents (None when the
    side was built as a base)."""

    def __init__(self, stages, info, first_run):
        self.stages, self.info, self.first_run = stages, info, first_run


def load(run_dir):
    """The cached side of run_dir when fresh, else None."""
    d = folder(run_dir)
    try:
        with open(os.path.join(d, "side.json")) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("key") != key(run_dir):
        return None
    stages, info = os.path.join(d, "stages.parquet"), os.path.join(d, "info.parquet")
    if not (os.path.isfile(stages) and os.path.isfile(info)):
        return None
    first_run = doc.get("first_run")
    return Side(stages, info, first_run if isinstance(first_run, dict) else None)


def link_or_copy(src):
    def write(dst):
        try:
            os.link(src, dst)
        except OSError:
            shutil.copyfile(src, dst)
    return write


def store(run_dir, run_key, stages, info, first_run):
    """Keeps a side built by compare (its stages and info Parquet files, the run side's
    documents or None) under the key computed before the side was built, so that a file
    changed meanwhile is not taken for what was read. Returns True, or False with a note on
    stderr when the run folder cannot be written."""
    d = folder(run_dir)
    doc = {"key": run_key, "first_run": first_run}
    try:
        os.makedirs(os.path.dirname(d), exist_ok=True)
        with OutputLock(d, "compare"):
            files = ReportSet(d)
            files.add("stages.parquet", link_or_copy(stages))
            files.add("info.parquet", link_or_copy(info))
            files.add("side.json", json.dumps(doc, default=str) + "\n")
            files.commit()
        return True
    except (OSError, NtscopeError) as e:
        print(f"ntscope: note: compare did not keep its input for {run_dir} in {d} ({e}); "
              f"the next compare of this run builds it again", file=sys.stderr)
        return False
