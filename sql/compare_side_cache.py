"""A run's compare input, kept in the run for the next compare of the same run.

Building one side of a comparison (the run's views, its interference tables, then its
per-I/O stages) is most of `ntscope compare`: about 50-80 s a side at 1 M I/Os, while a
compare reading both sides back took 22-33 s in all. Users compare many runs against one
base, so compare keeps what it read of each side in <run>/.ntscope/compare-side/ and reads
it back while it is fresh:

  stages.parquet  the rows of load.STAGE_QUERY (run and rep left out: a side's role is
                  the comparison's, not the run's), the stage names of its def_no values in
                  its key-value metadata (load.STAGE_NAMES_KEY)
  ios.parquet     the rows of load.IO_QUERY (one per io), likewise
  info.parquet    the row of load.INFO_QUERY (run, rep, run_dir likewise left out)
  side.json       the key (below) and, when the run was compared as the RUN side, what
                  compare shows of it: its interference document and plot rows

Kept means whole and ours: side.json holds each Parquet file's size and sha256, and a seal
(HMAC-SHA256 with this user's secret, SEAL_KEY_FILE in NTSCOPE_CACHE, made once) over the key,
those checksums and the run side's documents. A file swapped in from another run, a truncated
file, a side.json edited or copied from elsewhere (another run's, or one a forger wrote with
the right key: the key is no secret) does not match, and the side is built again with a note.
The checks read the kept files once (sha256, about 0.5 GB/s here: 0.2 s for a 1 M-I/O side).

Fresh means the key written with it equals the key of now: ntscope's version, DuckDB's
version, the text of every SQL file and of the Python modules that make these rows, and what
the views read: the hosts and every file under each host's folder (relative path, size,
inode, mtime; links followed). Any change, a new host or a re-converted trace, makes the next
compare build the side again and replace the folder. The folder is written as one set
(output.ReportSet: a private folder renamed into place, under an exclusive lock that readers
share while they pin the files), so a crash leaves the old set or none. A run folder that
cannot be written (read-only) is compared without keeping anything: a note on stderr.
"""
import errno
import fcntl
import glob
import hashlib
import hmac
import json
import os
import shutil
import sys
import tempfile

import duckdb

import ntscope
from ntscope.common import derived, inputs, out_folder
from ntscope.common import seal as seal_mod
from ntscope.common.output import OutputLock, ReportSet
from ntscope.common.errors import NtscopeError
from ntscope.sql import raw_views, views

SCHEMA = "ntscope.compare-side/5"   # 2: io_rank instead of io_id; 3: def_no instead of the stage names; 4: ios.parquet; 5: checksums and seal
SEAL_KEY_FILE = seal_mod.KEY_FILE
CACHE_DIR = os.path.join(".ntscope", "compare-side")
FILES = ("stages.parquet", "ios.parquet", "info.parquet")   # in load.export_side's order


def folder(run_dir):
    return os.path.join(os.path.abspath(run_dir), CACHE_DIR)


def code_digest():
    """What makes the cached rows: the SQL modules a side's connection loads (a run's, the
    interference and the side's modules, with what they require: loader.resolve), the Python that loads them
    (sql/*.py), this package's and interference's modules."""
    from ntscope.sql import loader
    reports = os.path.join(os.path.dirname(views.SQL_DIR), "reports")   # beside sql/, in a checkout and installed
    here, interference = os.path.join(reports, "compare"), os.path.join(reports, "interference")
    mods = loader.modules()
    from ntscope.sql.compare_sides import SIDE_MODULES
    wanted = ("core/raw_contract",) + views.RUN_MODULES + views.INTERFERENCE_MODULES + SIDE_MODULES
    paths = [mods[n].path for n in loader.resolve(wanted, mods)]
    paths += sorted(glob.glob(os.path.join(glob.escape(views.SQL_DIR), "*.py")))
    paths += sorted(glob.glob(os.path.join(glob.escape(here), "*.py")))
    paths += sorted(glob.glob(os.path.join(glob.escape(interference), "*.py")))
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            h.update(os.path.relpath(p, os.path.dirname(views.SQL_DIR)).encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


def inputs_digest(run_dir):
    """What the views read: the hosts (raw_views.find_hosts: <host>/parquet/) and every file under
    each host's folder, symbolic links followed as the views follow them, by relative path,
    size, inode and modification time; a file that cannot be stat'ed counts by its error.
    None when the run has no converted host."""
    run_dir = os.path.abspath(run_dir)
    try:
        hosts = raw_views.find_hosts(run_dir)
    except (OSError, views.RunError):
        return None
    h = hashlib.sha256()
    count = 0
    for host in hosts:
        top = os.path.join(run_dir, host)
        for root, dirs, files in os.walk(top, followlinks=True):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(root, name)
                try:
                    st = os.stat(path)
                    what = f"{st.st_size}\0{st.st_ino}\0{st.st_mtime_ns}"
                except OSError as e:
                    what = f"error {e.errno}"
                h.update(f"{os.path.relpath(path, run_dir)}\0{what}\n".encode("utf-8", "surrogateescape"))
                count += 1
    return f"{len(hosts)}:{count}:{h.hexdigest()}"


def key(run_dir):
    return {"schema": SCHEMA, "ntscope": ntscope.__version__, "duckdb": duckdb.__version__,
            "code": code_digest(), "inputs": inputs_digest(run_dir)}


class Side:
    """A side read from the cache, its files pinned in a private folder: the stages, ios and
    info Parquet files and the run side's documents (None when the side was built as a base)."""

    def __init__(self, stages, ios, info, first_run):
        self.stages, self.ios, self.info, self.first_run = stages, ios, info, first_run


def pin(src, dst):
    """dst becomes src's file: a hard link, or a copy across file systems."""
    try:
        os.link(src, dst)
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
        shutil.copyfile(src, dst)


def seal_key():
    """This user's secret that seals kept sides (ntscope.common.seal)."""
    return seal_mod.key()


def seal(doc, secret):
    """The seal of a side.json document (every field but the seal itself)."""
    return seal_mod.sign(doc, secret)


def checksums(paths):
    """{name: {"bytes", "sha256"}} of the kept files (FILES' names, in order)."""
    out = {}
    for name, path in zip(FILES, paths):
        digest, st = derived.sha256_of(path, "kept compare file")
        out[name] = {"bytes": st.st_size, "sha256": digest}
    return out


def damaged(d, what, state="is damaged"):
    print(f"ntscope: note: the compare input kept in {d} {state}; building it again ({what})", file=sys.stderr)


def load(run_dir, into):
    """The cached side of run_dir when fresh and whole, its files pinned into the folder into (so
    that a compare or analyze keeping the side meanwhile cannot change what this compare reads),
    else None. The files are pinned under a shared lock on the folder's lock file (store holds
    it exclusively while it swaps a new set in), then the key, the seal and the checksums are
    checked on the pinned copies."""
    d = folder(run_dir)
    try:
        fd = os.open(OutputLock(d).path, os.O_RDONLY)   # the lock file store's OutputLock uses
    except OSError:
        return None   # never kept (store makes the lock file first)
    names = ("side.json",) + FILES
    pinned = [os.path.join(tempfile.mkdtemp(prefix="side-", dir=into), n) for n in names]
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        for n, dst in zip(names, pinned):
            pin(os.path.join(d, n), dst)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        doc = json.loads(inputs.read_text(pinned[0], "side.json", inputs.SIDE_JSON_MAX, "none: it is built again"))
    except (NtscopeError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("key") != key(run_dir):
        return None   # made from other inputs or by other code: stale, not damaged
    secret = seal_key()
    if secret is None or not hmac.compare_digest(str(doc.get("seal")), seal(doc, secret)):
        # not "damaged": most often another user's (or another NTSCOPE_CACHE's) kept side
        damaged(d, "side.json is not sealed by this user's ntscope: kept by another user or with another "
                   "NTSCOPE_CACHE, or edited", state="is not this user's")
        return None
    try:
        sums = checksums(pinned[1:])
    except NtscopeError as e:
        damaged(d, str(e))
        return None
    if sums != doc.get("files"):
        bad = sorted(n for n in FILES if sums.get(n) != (doc.get("files") or {}).get(n))
        damaged(d, f"{', '.join(bad)} not the file{'s' if len(bad) > 1 else ''} kept (size or sha256 differs)")
        return None
    first_run = doc.get("first_run")
    if not (isinstance(first_run, dict) and isinstance(first_run.get("interference"), dict)
            and "plots" in first_run):
        first_run = None
    return Side(*pinned[1:], first_run)


def store(run_dir, run_key, files, first_run):
    """Keeps a side built by compare (its stages, ios and info Parquet files as
    load.export_side returns them, the run side's documents or None) under the key computed
    before the side was built, so that a file changed meanwhile is not taken for what was read,
    with the files' checksums and the seal. Returns True, or False with a note on stderr when
    the run folder cannot be written (or this user's seal key cannot be had)."""
    d = folder(run_dir)
    try:
        secret = seal_key()
        if secret is None:
            raise NtscopeError(f"no seal key in {seal_mod.key_path()} (NTSCOPE_CACHE)")
        # the documents as side.json will give them back (JSON types), then sealed
        doc = json.loads(json.dumps({"key": run_key, "first_run": first_run, "files": checksums(files)}, default=str))
        doc["seal"] = seal(doc, secret)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        with OutputLock(d, "compare"):
            kept = ReportSet(d, out_folder.COMPARE_SIDE)
            for name, src in zip(FILES, files):
                kept.add(name, lambda dst, src=src: pin(src, dst))
            kept.add("side.json", json.dumps(doc, default=str) + "\n")
            kept.commit()
        return True
    except (OSError, NtscopeError) as e:
        print(f"ntscope: note: compare did not keep its input for {run_dir} in {d} ({e}); "
              f"the next compare of this run builds it again", file=sys.stderr)
        return False
