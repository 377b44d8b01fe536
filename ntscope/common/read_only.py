"""Runs in folders this user cannot write (a shared capture archive, a read-only mount): their
hosts are converted into a stand-in run in the cache instead, and the commands read that.

The stand-in ($NTSCOPE_CACHE/read-only-runs/<name>-<hash of the run's real path>/) holds, per
host, symbolic links to the run's trace.dat and host.json and its own converted parquet/;
truth.json and the other files beside the hosts are linked too. The run itself is only read;
the stand-in is made again whenever a link is missing or points elsewhere, and its parquet/ is
checked like any run's (derived.check) before it is read."""
import hashlib
import os
import sys

from . import cache
from .errors import NtscopeError

FOLDER = "read-only-runs"


def writable(run_dir, hosts):
    """True when every host folder (and the run folder) can be written by this user."""
    return all(os.access(d, os.W_OK) for d in [run_dir] + [os.path.join(run_dir, h) for h in hosts])


def stand_in(run_dir, hosts):
    """The stand-in run of RUN_DIR (made or brought up to date): its path."""
    real = os.path.realpath(run_dir)
    key = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    where = os.path.join(cache.cache_dir(), FOLDER, f"{os.path.basename(real)}-{key}")
    try:
        for host in hosts:
            os.makedirs(os.path.join(where, host), exist_ok=True)
            for name in sorted(os.listdir(os.path.join(real, host))):
                if name != "parquet" and os.path.isfile(os.path.join(real, host, name)):
                    link(os.path.join(real, host, name), os.path.join(where, host, name))
        for name in sorted(os.listdir(real)):
            if os.path.isfile(os.path.join(real, name)):
                link(os.path.join(real, name), os.path.join(where, name))
    except OSError as e:
        raise NtscopeError(f"{run_dir} cannot be written, and its stand-in in the cache cannot be made ({where}: "
                           f"{e.strerror}); fix: copy the run to a folder you can write, or set NTSCOPE_CACHE to "
                           "one") from None
    return where


def link(target, path):
    """PATH becomes a symbolic link to TARGET (replaced when it points elsewhere)."""
    if os.path.islink(path) and os.readlink(path) == target:
        return
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(target, path)


def note(run_dir, where, quiet):
    if not quiet:
        print(f"ntscope: note: {run_dir} cannot be written: its hosts are converted into {where} (the run itself "
              "is only read)", file=sys.stderr)
