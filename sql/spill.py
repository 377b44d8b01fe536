"""DuckDB's spill folders: one private folder per connection, under --temp-dir /
$NTSCOPE_TEMP_DIR or TMPDIR, never inside a run; the folders of processes that are gone (a
kill -9) are removed by the next ntscope that makes one."""
import os
import re
import shutil
import tempfile

from ntscope.common import out_folder
from ntscope.common.errors import NtscopeError as RunError
from ntscope.common.processes import pid_alive

TEMP_DIR_ENV = "NTSCOPE_TEMP_DIR"
SPILL_PREFIX = "ntscope-spill-"
SPILL_DIR = re.compile(r"^" + SPILL_PREFIX + r"(?P<pid>\d+)-[A-Za-z0-9_]+$")


def clean_stale_spill(parent):
    """Removes ntscope-spill-<pid>-* folders under PARENT whose process is gone (a kill -9)."""
    try:
        entries = os.listdir(parent)
    except OSError:
        return
    for e in entries:
        m = SPILL_DIR.match(e)
        if m and int(m.group("pid")) != os.getpid() and not pid_alive(int(m.group("pid"))):
            shutil.rmtree(os.path.join(parent, e), ignore_errors=True)


def spill_dir(temp_dir=None):
    """A fresh private folder for DuckDB's spill files: under --temp-dir / $NTSCOPE_TEMP_DIR
    when given (created if missing; the folder itself is never removed), else under TMPDIR
    (/tmp). Never inside a run (TMPDIR: never inside a host folder): the inputs stay as they
    were."""
    chosen = temp_dir or os.environ.get(TEMP_DIR_ENV)
    parent = os.path.abspath(chosen or tempfile.gettempdir())
    # TMPDIR, which nobody chose for ntscope, is refused only inside a host folder: a trace.dat
    # in a folder of /tmp (trace-cmd record run there) makes /tmp look like a run folder, and
    # refusing it would stop every command; a fresh private folder there touches no input
    inside = out_folder.inside_a_run(parent, run_folders=bool(chosen))
    if inside:
        given = "--temp-dir" if temp_dir else TEMP_DIR_ENV if os.environ.get(TEMP_DIR_ENV) else "TMPDIR"
        raise RunError(f"{given} {parent}: {inside}; spill files never go inside a run; fix: pass --temp-dir "
                       f"(or set {TEMP_DIR_ENV} to) a folder outside every run, e.g. /tmp or a scratch disk")
    try:
        os.makedirs(parent, exist_ok=True)
        clean_stale_spill(parent)
        return tempfile.mkdtemp(prefix=f"{SPILL_PREFIX}{os.getpid()}-", dir=parent)
    except OSError as e:
        raise RunError(f"cannot make a spill folder under {parent}: {e.strerror}; fix: pass --temp-dir DIR "
                       f"(or set {TEMP_DIR_ENV}) to a writable folder with free space") from None


def private_dir(con, prefix, fallback=None):
    """A fresh folder for a connection's working files: inside its private spill folder
    (new_connection; removed with the connection), else under fallback (TMPDIR when None: a
    plain connection's default spill folder, '.tmp', may not exist)."""
    spill = con.execute("SELECT current_setting('temp_directory')").fetchall()[0][0]
    return tempfile.mkdtemp(prefix=prefix, dir=spill if os.path.isdir(spill or "") else fallback)
