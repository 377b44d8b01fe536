"""What SQL a user types may touch: DuckDB's own guards on the connections of `ntscope sql`
(the shell, -c, stdin) and `ntscope.data.connect`.

In:  a run directory, the files its views read (raw_views.view_files), the connection's
     private spill folder, an optional output folder (--out) and the choice to lift the guards
     (--unrestricted).
Out: the statements that apply the guards, run after the views are loaded: external access
     off (no file, URL, ATTACH, COPY or extension outside what is allowed), extension
     autoinstall and autoload off, community extensions off, the configuration locked (a few
     harmless knobs excepted: ALLOWED_CONFIGS).

What stays reachable: the run's converted files the views read, each by its exact path (DuckDB
writes a COPY through a temporary file beside it, so even those are not overwritten by a plain
COPY; COPY's USE_TMP_FILE false can, and the seal then reports the change: ntscope convert
--verify), the private spill folder, and the --out folder, which SQL may read and write. A
trace.dat or host.json is never among them: --out is refused inside a run or around it.
"""
import os

from ntscope.common import out_folder
from ntscope.common.errors import NtscopeError
from ntscope.sql.quoting import sql_str

# Settings a guarded connection may still change: they bound memory and threads or shape
# output, and reach no file.
ALLOWED_CONFIGS = ("memory_limit", "threads", "enable_progress_bar", "preserve_insertion_order",
                   "errors_as_json", "default_order", "default_null_order", "TimeZone", "Calendar")
OUT_FIX = "pass --out a folder outside every run (it is created when missing), e.g. --out exports"
UNRESTRICTED_NOTE = ("--unrestricted lifts these guards: SQL may then read and write any file this user "
                     "may, a run's trace.dat included")


def out_dir(path, run_dir):
    """The --out folder as an absolute path, created when missing; refused when it is a run's
    part (a host folder, converted files, a run or a folder of runs) or holds RUN_DIR."""
    if path is None:
        return None
    where = os.path.abspath(path)
    inside = out_folder.part_of_a_run(where) or out_folder.part_of_a_run_output(os.path.join(where, "x"))
    if inside:
        raise NtscopeError(f"--out {path}: SQL would be able to write there, and {inside}; fix: {OUT_FIX}")
    real_run = os.path.realpath(run_dir)
    real_out = os.path.realpath(where)
    if real_run == real_out or real_run.startswith(real_out.rstrip(os.sep) + os.sep):
        raise NtscopeError(f"--out {path}: the run {run_dir} lies inside it, so SQL could overwrite its traces; "
                           f"fix: {OUT_FIX}")
    if os.path.lexists(where) and not os.path.isdir(where):
        raise NtscopeError(f"--out {path} exists and is not a folder; fix: {OUT_FIX}")
    try:
        os.makedirs(where, exist_ok=True)
    except OSError as e:
        raise NtscopeError(f"cannot create --out {path}: {e.strerror}; fix: {OUT_FIX}") from None
    return where


# the two statements that close the guards (the DuckDB shell's .safe_mode runs them itself)
LOCKING = ("SET enable_external_access = false", "SET lock_configuration = true")


def guard_sql(read_files, spill, out=None):
    """[statement]: the guards, for a connection whose views read READ_FILES (absolute paths),
    whose tables and spill files live in SPILL, with OUT (or None) open for reading and writing."""
    folders = [spill] + ([out] if out else [])
    listed = lambda xs: "[" + ", ".join(sql_str(x) for x in xs) + "]"   # noqa: E731
    return [
        "SET autoinstall_known_extensions = false",
        "SET autoload_known_extensions = false",
        "SET allow_community_extensions = false",
        f"SET allowed_paths = {listed(read_files)}",
        f"SET allowed_directories = {listed(os.path.join(f, '') for f in folders)}",
        f"SET allowed_configs = {listed(ALLOWED_CONFIGS)}",
        *LOCKING,
    ]


def allowed_files(run_dir):
    """The paths the views read, each as the views name it (a name with * ? [ escaped, which
    DuckDB checks before it globs) and as the file itself."""
    from ntscope.sql.raw_views import view_files
    from ntscope.sql.quoting import duckdb_literal_path
    paths = []
    for f in view_files(run_dir):
        paths += [f] if duckdb_literal_path(f) == f else [f, duckdb_literal_path(f)]
    return paths


def apply(con, run_dir, out=None):
    """Applies guard_sql to a Python connection whose views of RUN_DIR are loaded."""
    spill = con.execute("SELECT current_setting('temp_directory')").fetchall()[0][0]
    for statement in guard_sql(allowed_files(run_dir), spill, out):
        con.execute(statement)
    return con


def refusal_hint(message):
    """The fix to add to a DuckDB error that is one of the guards' refusals, else None."""
    if "disabled by configuration" in message or "disabled through configuration" in message \
            or "configuration has been locked" in message:
        return ("ntscope sql reads only the run's converted files and writes only to --out DIR "
                f"(README: What SQL may touch); {UNRESTRICTED_NOTE}")
    return None
