"""Lab fixtures for the compare tests: copy fixtures/<name>/ to a scratch folder and
convert its traces with the ntscope binary (NTSCOPE_BIN), so fixtures stay untouched."""
import os
import shutil
import subprocess

from .load import REPO

FIXTURES = os.path.join(REPO, "fixtures")


def ntscope_bin():
    b = os.environ.get("NTSCOPE_BIN") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(os.environ.get("NTSCOPE_CACHE", os.path.expanduser("~/.cache/ntscope")), "target")),
        "release", "ntscope")
    if not os.access(b, os.X_OK):
        raise RuntimeError(f"ntscope binary {b} not found; fix: `just build` (or set NTSCOPE_BIN)")
    return b


def prepare(name, scratch):
    """fixtures/<name> converted under scratch/<name>; returns that path (cached per scratch)."""
    src = os.path.join(FIXTURES, name)
    dst = os.path.join(scratch, name)
    if os.path.isdir(dst):
        return dst
    if not os.path.isdir(src):
        raise RuntimeError(f"fixture {src} is missing; fix: restore it from git or `just lab-fixture`")
    tmp = dst + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src, tmp)
    for host in sorted(os.listdir(tmp)):
        trace = os.path.join(tmp, host, "trace.dat")
        if os.path.exists(trace):
            subprocess.run([ntscope_bin(), "convert", trace, "--out", os.path.join(tmp, host, "parquet")],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.replace(tmp, dst)
    return dst
