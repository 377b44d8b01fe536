"""The DuckDB shell on a run's views (ntscope.sql.shell): what `ntscope sql RUN` opens.

In:  a run directory, ntscope's memory limit and spill settings (connection.limited_connection).
Out: DuckDB's own command-line shell (PyPI package duckdb-cli, the DuckDB version of the duckdb
     Python package the reports use, or the one tested with it: TESTED_PAIRS) on an in-memory database, started with an init
     script that loads every view of the run as views.connect() does, then applies the guards
     of guards.py and the shell's safe mode (.read, .output, .import, .open and .shell are
     refused; --unrestricted: neither): completion, .mode and .tables are DuckDB's. Its exit
     status is the shell's (0 or 2).

The init script is written to a private folder (the shell's spill folder, mode 0700) and
removed with it when the shell exits. Paths from the run reach the script only as quoted SQL
literals (quoting.sql_str) and the shell only as argument vectors, never a shell line.
"""
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys

from ntscope.sql import connection, guards, memory_policy, quoting, raw_views, views
from ntscope.sql.spill import spill_dir
from ntscope.common.errors import NtscopeError

PACKAGE = "duckdb-cli"          # the PyPI package that ships the shell binary
INIT_NAME = "views.sql"         # the init script, inside the shell's private spill folder
# the names the script creates, for the summary printed before the prompt
CREATED = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?(TABLE|VIEW|MACRO)\s+"
                     r"(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_][A-Za-z0-9_]*)", re.I | re.M)
# views the summary names first: where most questions start (sql/README.md)
FIRST_VIEWS = ("io", "io_stages", "stage_summary", "pipeline_stats", "run_hosts")


def binary():
    """The shell binary the installed duckdb-cli package ships, or a RunError with the fix."""
    import duckdb
    fix = (f"install the shell: pip install {PACKAGE}=={shell_for(duckdb.__version__)} (bash setup.sh "
           "does), or run statements without it: -c 'SQL' or SQL on stdin")
    spec = importlib.util.find_spec("duckdb_cli")
    folders = list(spec.submodule_search_locations or []) if spec else []
    path = os.path.join(folders[0], "duckdb") if folders else None
    if not path or not os.access(path, os.X_OK):
        raise NtscopeError(f"the DuckDB shell (PyPI package {PACKAGE}) is not installed"
                           f"{'' if not folders else f' or has no executable {path}'}; fix: {fix}")
    return path


def version(path):
    """The DuckDB version of a shell binary ('1.5.6'), from its --version."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        raise NtscopeError(f"cannot run the DuckDB shell {path} --version: {e}; fix: pip install --force-reinstall "
                           f"{PACKAGE}") from None
    m = re.match(r"v?(\d+(?:\.\d+)+)", out.strip())
    if not m:
        raise NtscopeError(f"the DuckDB shell {path} --version printed {out.strip()[:80]!r}, not a version; "
                           f"fix: pip install --force-reinstall {PACKAGE}")
    return m.group(1)


# duckdb (the reports' DuckDB) -> the other shell version tested with it, where PyPI has no
# duckdb-cli of the same version (none for DuckDB 2.x): sql/tests/test_shell.py loads every view
# in that shell and gets the Python connection's views and numbers.
TESTED_PAIRS = {"2.0.0": "1.5.6"}


def shell_for(duckdb_version):
    """The shell version ntscope accepts beside the duckdb package of DUCKDB_VERSION."""
    return TESTED_PAIRS.get(duckdb_version, duckdb_version)


def checked_binary():
    """binary() and its DuckDB version, refused unless that is the duckdb Python package's
    version or the one tested with it (TESTED_PAIRS): the reports' SQL must bind and compute
    the same in the shell."""
    import duckdb
    path = binary()
    have, want = version(path), shell_for(duckdb.__version__)
    if have != want:
        raise NtscopeError(f"the DuckDB shell {path} is DuckDB {have}, the reports use DuckDB {duckdb.__version__} (the "
                           f"duckdb Python package), whose shell is DuckDB {want}: the same SQL may bind or compute "
                           f"differently; fix: pip install {PACKAGE}=={want} (bash setup.sh installs the pair "
                           "constraints.txt pins), or run statements with the reports' DuckDB: -c 'SQL' or SQL on stdin")
    return path, have


def init_script(run_dir, spill, memory_limit=None, temp_dir=None, milestones=None, out=None, unrestricted=False):
    """The shell's init script: ntscope's settings (memory limit, SPILL as its spill folder,
    planner settings), the tables' database (in memory or a file by the run's size, as
    views.connect), then every view part and the interference views, each file's tables
    compressed after it when they live in a file. Returns (text, summary facts)."""
    scratch = connection.limited_connection(memory_limit, temp_dir)   # checks the limit; reads the files' columns
    try:
        limit = memory_policy.memory_limit_setting(memory_limit)
        tables = memory_policy.tables_by_size(scratch, [run_dir], memory_policy.READ_AGAIN_SHARE)
        events = raw_views.run_events(scratch, run_dir)
        parts = views.build_parts(run_dir, scratch, milestones, views.RUN_MODULES + views.INTERFERENCE_MODULES)
    finally:
        scratch.close()
    settings = ([] if limit is None else [f"SET memory_limit = {quoting.sql_str(limit)}"]) + [
        f"SET temp_directory = {quoting.sql_str(spill)}", *connection.PLANNER_SETTINGS, *connection.attach_sql(spill, tables)]
    checkpoint = f"CHECKPOINT {connection.DATABASE};\n" if tables == memory_policy.TABLES_IN_FILE else ""
    # the guards (guards.py) after the views, then the shell's safe mode: no .read, .output,
    # .import, .open or .shell (they reach files outside DuckDB's guards)
    # (safe mode turns external access off and locks the configuration itself: SQL doing either
    # first would fail there)
    guarded = "" if unrestricted else "".join(
        s + ";\n" for s in guards.guard_sql(guards.allowed_files(run_dir), spill, out)
        if s not in guards.LOCKING) + ".safe_mode\n"
    # .bail: a statement that fails ends the shell (no prompt over half the views); .output:
    # the statements' own results (CHECKPOINT's) are not shown.
    text = ("-- ntscope: the views of one run for the DuckDB shell (ntscope sql RUN)\n"
            ".bail on\n.output /dev/null\n" + "".join(s + ";\n" for s in settings) +
            "".join(p.rstrip() + "\n" + checkpoint for p in parts) + ".output\n.bail off\n" + guarded)
    created = {}
    for kind, name in CREATED.findall("\n".join(parts)):
        created.setdefault(name, kind.upper())
    return text, {"limit": limit, "tables": tables, "events": events, "created": created}


def summary(run_dir, shell_version, facts, spill):
    """What the shell loads, said before its prompt."""
    created = facts["created"]
    count = {k: sum(1 for v in created.values() if v == k) for k in ("VIEW", "TABLE", "MACRO")}
    first = [n for n in FIRST_VIEWS if n in created]
    hosts = raw_views.find_hosts(run_dir)
    limit = facts["limit"] or "DuckDB's default (80% of RAM)"
    where = "in a file" if facts["tables"] == memory_policy.TABLES_IN_FILE else "in memory"
    import duckdb
    other = "" if shell_version == duckdb.__version__ else f" (the reports: DuckDB {duckdb.__version__})"
    return (f"ntscope sql: DuckDB {shell_version} shell{other} on the views of {run_dir}\n"
            f"  hosts {', '.join(hosts)}; {facts['events']} events\n"
            f"  loading {count['VIEW']} views, {count['TABLE']} tables ({where}), {count['MACRO']} macros: "
            f"{', '.join(first)} ... (SHOW TABLES lists them by name, DESCRIBE io shows one's columns; .tables draws them all with their columns)\n"
            f"  memory limit {limit}, spill folder {spill}\n"
            f"  SQL {facts.get('access', '')}\n"
            "  .help lists the dot commands; .quit or Ctrl-D leaves\n")


def run(run_dir, memory_limit=None, temp_dir=None, milestones=None, stdin=None, out=None, unrestricted=False):
    """Opens the DuckDB shell on the run's views (stdin: the shell's standard input, None: ours)
    and returns ntscope's exit status: 0, or 2 when the shell ends in an error (a failing
    statement read from a pipe, or the views failing to load)."""
    path, shell_version = checked_binary()
    run_dir = os.path.abspath(run_dir)
    spill = spill_dir(temp_dir)
    try:
        text, facts = init_script(run_dir, spill, memory_limit, temp_dir, milestones, out, unrestricted)
        facts["access"] = ("unrestricted (--unrestricted): any file this user may read or write" if unrestricted else
                           "reads the run's converted files; " + (f"writes only in {out}" if out else
                                                                  "writes no file (--out DIR to export)"))
        init = os.path.join(spill, INIT_NAME)
        fd = os.open(init, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        sys.stderr.write(summary(run_dir, shell_version, facts, spill))
        sys.stderr.flush()
        # no database argument: the shell's database is in memory (the tables' one is attached
        # by the init script)
        proc = subprocess.Popen([path, "-init", init], stdin=stdin)
        # Ctrl-C belongs to the shell (it stops the running query); this process only waits
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            code = proc.wait()
        finally:
            signal.signal(signal.SIGINT, old)
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    return 0 if code == 0 else 2
