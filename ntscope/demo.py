"""`ntscope demo`'s run: the bundled capture's host files placed in runs/demo.

The folder is made once (marked with MARK, written inside it); a later demo puts back the
fixture's files that are missing or differ there and removes nothing: a user's notes, an
extra host folder, the converted parquet/ and the report stay (the analysis that follows
converts again what changed and rewrites only its own report files). A runs/demo that demo
did not make, or that is a symbolic link, is refused."""
import os
import shutil
import stat

from .common.errors import NtscopeError
from .common.output import create_new

FIXTURE = "stock-randread-4k-qd8"
MARK = ".ntscope-demo"
HOSTS = ("initiator", "target")


def fixture_files(src):
    """(host, file name) of every file of the fixture's host folders."""
    out = []
    for host in HOSTS:
        for name in sorted(os.listdir(os.path.join(src, host))):
            if os.path.isfile(os.path.join(src, host, name)):
                out.append((host, name))
    return out


def same_bytes(a, b):
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


def copy_file(src, dst):
    """dst becomes a copy of src: written aside (a new file, never through a link), then
    renamed over it."""
    tmp = os.path.join(os.path.dirname(dst), f".{os.path.basename(dst)}.tmp-{os.getpid()}")
    if os.path.lexists(tmp):
        os.unlink(tmp)
    with open(src, "rb") as fin, os.fdopen(create_new(tmp), "wb") as fout:
        shutil.copyfileobj(fin, fout)
    os.replace(tmp, dst)


def refresh(src, dst):
    """Puts back every fixture file that is missing or differs in the demo folder dst; a host
    folder there that is a symbolic link is refused (its files belong to wherever it points)."""
    for host in HOSTS:
        where = os.path.join(dst, host)
        if os.path.islink(where) or (os.path.lexists(where) and not os.path.isdir(where)):
            what = f"a symbolic link (to {os.readlink(where)})" if os.path.islink(where) else "not a folder"
            raise NtscopeError(f"{where} is {what}; demo writes only into the host folders it made; fix: remove "
                               f"it (what a link points to stays), then run demo again")
    for host, name in fixture_files(src):
        target = os.path.join(dst, host, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        try:
            mode = os.lstat(target).st_mode
        except FileNotFoundError:
            copy_file(os.path.join(src, host, name), target)
            continue
        if not stat.S_ISREG(mode):
            raise NtscopeError(f"{target} is not the demo's file (it is {'a link' if stat.S_ISLNK(mode) else 'not a regular file'}); "
                               f"demo replaces only the files it wrote; fix: move it away")
        if not same_bytes(os.path.join(src, host, name), target):
            copy_file(os.path.join(src, host, name), target)


def place(src, dst):
    """The demo run at dst, made from the fixture folder src or brought back to it."""
    try:
        st = os.lstat(dst)
    except FileNotFoundError:
        st = None
    if st is None:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        tmp = os.path.join(os.path.dirname(dst), f".{os.path.basename(dst)}.tmp-{os.getpid()}")
        for host in HOSTS:
            shutil.copytree(os.path.join(src, host), os.path.join(tmp, host))
        open(os.path.join(tmp, MARK), "w").close()
        os.rename(tmp, dst)
        return
    if stat.S_ISLNK(st.st_mode):
        raise NtscopeError(f"{dst} is a symbolic link (to {os.readlink(dst)}); demo writes only into the folder it made "
                           f"there; fix: remove the link (what it points to stays) or set NTSCOPE_RUNS to another folder")
    if not stat.S_ISDIR(st.st_mode) or not os.path.isfile(os.path.join(dst, MARK)):
        raise NtscopeError(f"{dst} exists and was not made by `demo`; fix: move it away (demo never writes into "
                           "a run it did not make)")
    refresh(src, dst)
