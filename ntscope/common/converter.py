"""The trace.dat -> Parquet converter is the Rust binary `ntscope-analyzer` (analyzer/). One place
finds it: $NTSCOPE_BIN; in a source checkout the cargo build (rebuilt only when a source
file is newer than the binary); else the binary installed beside this Python (the wheel
ships it in its scripts)."""
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig

from .cache import cache_dir
from .errors import NtscopeError

BINARY = "ntscope-analyzer"


def checkout_root():
    """The source checkout this package runs from (it has analyzer/Cargo.toml), or None."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # ntscope/common/
    return root if os.path.isfile(os.path.join(root, "analyzer", "Cargo.toml")) else None


def checkout_cache(root):
    """The checkout's own cache folder (venv, cargo target): tools/checkout-cache.sh's path."""
    real = os.path.realpath(root)
    key = hashlib.sha256(real.encode()).hexdigest()[:12]
    return os.path.join(cache_dir(), "checkouts", f"{os.path.basename(real)}-{key}")


def cargo_binary(root):
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(checkout_cache(root), "target")
    return os.path.join(target, "release", BINARY)


def cargo_build_dir():
    """cargo's intermediate files, shared by every checkout (setup.sh and the justfile use the same
    folder): a second clone builds only the crate itself, not its dependencies."""
    return os.environ.get("CARGO_BUILD_BUILD_DIR") or os.path.join(cache_dir(), "cargo-build")


def newest_source(root):
    """(mtime, path) of the newest file the converter is built from."""
    newest = (0.0, None)
    analyzer = os.path.join(root, "analyzer")
    for name in ("Cargo.toml", "Cargo.lock"):
        p = os.path.join(analyzer, name)
        if os.path.exists(p):
            newest = max(newest, (os.path.getmtime(p), p))
    for dirpath, _, files in os.walk(os.path.join(analyzer, "src")):
        for f in files:
            p = os.path.join(dirpath, f)
            newest = max(newest, (os.path.getmtime(p), p))
    return newest


def build(root, why):
    cargo = shutil.which("cargo")
    if not cargo:
        raise NtscopeError("the converter is not built and cargo is not on PATH; "
                           "fix: install Rust (https://rustup.rs), or set NTSCOPE_BIN to a built ntscope binary")
    # cargo's own progress (stderr) shows: a first build takes minutes on 2 cores
    print(f"ntscope: building the converter ntscope-analyzer ({why}): cargo build --release, "
          "a few minutes the first time, seconds after a small change", file=sys.stderr)
    r = subprocess.run([cargo, "build", "--release", "--manifest-path",
                        os.path.join(root, "analyzer", "Cargo.toml")],
                       env=dict(os.environ, CARGO_TARGET_DIR=os.path.dirname(os.path.dirname(cargo_binary(root))),
                                CARGO_BUILD_BUILD_DIR=cargo_build_dir()))
    if r.returncode != 0:
        raise NtscopeError(f"building the converter failed (cargo exit {r.returncode}); see cargo's message above")
    # cargo leaves the binary as it was when a change does not touch it (a Cargo.toml field such as
    # rust-version, a comment): mark it current, or every later command would build again
    binary = cargo_binary(root)
    if os.path.exists(binary):
        os.utime(binary)


def installed_binary():
    for d in (os.path.dirname(sys.executable), sysconfig.get_path("scripts")):
        p = os.path.join(d, BINARY)
        if os.access(p, os.X_OK) and not os.path.isdir(p):
            return p
    return None


def path(build_if_needed=True):
    """The converter binary to run."""
    env = os.environ.get("NTSCOPE_BIN")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise NtscopeError(f"NTSCOPE_BIN={env} is not an executable file; fix: unset it or point it at a built ntscope")
        return env
    root = checkout_root()
    if root:
        binary = cargo_binary(root)
        newest_t, newest_p = newest_source(root)
        fresh = os.path.exists(binary) and os.path.getmtime(binary) >= newest_t
        if not fresh and build_if_needed and (shutil.which("cargo") or not os.path.exists(binary)):
            build(root, "not built yet in " + os.path.dirname(binary) if not os.path.exists(binary)
                  else f"{os.path.relpath(newest_p, root)} is newer than the binary, e.g. after a git pull")
        if os.path.exists(binary):
            return binary
    found = installed_binary()
    if found:
        return found
    raise NtscopeError("the converter binary `ntscope-analyzer` was not found; fix: `pip install ntscope` from a checkout "
                       "(it builds it), `just build`, or set NTSCOPE_BIN")
