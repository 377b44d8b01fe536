"""`ntscope sql RUN` opens DuckDB's own shell (ntscope.sql.shell) on the run's views: driven
from a pipe (--shell) and from a terminal (a pty, as a user types), its .tables lists the views
the Python connection has and its numbers equal that connection's; the shell is the pinned
duckdb-cli, of the duckdb Python package's version or the one tested with it here
(shell.TESTED_PAIRS), and one of another version is refused.
Needs the converter (NTSCOPE_BIN)."""
import fcntl
import os
import pty
import re
import select
import shutil
import struct
import sys
import termios
import time

import duckdb

from ntscope.sql import connection, shell, views

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SMALL = "lab-6.1-stock-base-randread"
# a number from a table (io_stages) and one from a view over the raw events (pipeline_stats)
QUERY = ("SELECT 'answer' AS marker, (SELECT count(*) FROM io_stages) AS stage_rows, "
         "(SELECT sum(dur) FROM io_stages) AS stage_ns, "
         "(SELECT value FROM pipeline_stats WHERE name = 'events:target') AS target_events;")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def hostile_copy(fixture_run, tmp_path):
    """The converted fixture under a name a shell or SQL would misread if pasted unquoted."""
    run = str(tmp_path / "it's [1] $(touch x); run")
    shutil.copytree(fixture_run(SMALL), run)
    return run


def python_answer(run):
    con = views.connect(run, interference=True)
    names = {r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = ? UNION "
        "SELECT view_name FROM duckdb_views() WHERE database_name = ? AND NOT internal",
        [connection.DATABASE, connection.DATABASE]).fetchall()}
    row = con.execute(QUERY).fetchone()
    return names, [str(v) for v in row[1:]]


def csv_answer(out):
    """The values of QUERY's row in the shell's CSV output."""
    lines = [ANSI.sub("", line).strip() for line in out.splitlines()]
    rows = [line.split(",") for line in lines if line.startswith("answer,")]
    assert len(rows) == 1, out[-2000:]
    return rows[0][1:]


def table_names(out):
    """The names .tables prints (each in bold above its columns)."""
    return set(re.findall(r"\x1b\[1m([A-Za-z_][A-Za-z0-9_]*)\x1b\[0*m", out))


def test_shell_from_a_pipe_lists_the_real_views_and_agrees_with_python(fixture_run, ntscope_cli, tmp_path):
    run = hostile_copy(fixture_run, tmp_path)
    r = ntscope_cli("sql", run, "--shell", input=".tables\n.mode csv\n" + QUERY + "\n")
    assert r.returncode == 0, r.stderr
    names, values = python_answer(run)
    assert {"io", "io_stages", "pipeline_stats", "raw_nvme", "run_hosts", "intf_streams"} <= names
    assert table_names(r.stdout) == names
    assert csv_answer(r.stdout) == values
    assert int(values[0]) > 0 and int(values[1]) > 0
    # said before the prompt: the shell's version, the run, what it loads
    assert re.search(rf"DuckDB {re.escape(shell.shell_for(duckdb.__version__))} shell( \(the reports: DuckDB "
                     rf"{re.escape(duckdb.__version__)}\))? on the views of {re.escape(run)}\n", r.stderr)
    assert re.search(r"loading \d+ views, \d+ tables \(in memory\), \d+ macros: io, io_stages", r.stderr)
    spill = re.search(r"spill folder (\S+)", r.stderr).group(1)
    assert not os.path.exists(spill)             # the init script and spill folder go with the shell


def test_shell_reports_a_failing_statement_with_exit_2(fixture_run, ntscope_cli):
    r = ntscope_cli("sql", fixture_run(SMALL), "--shell", input="SELECT nope FROM io;\n")
    assert r.returncode == 2
    assert 'column "nope"' in r.stderr


def read_until(fd, pattern, timeout=120):
    out, end = b"", time.monotonic() + timeout
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:       # the pty closed: the shell is gone
                break
            if not chunk:
                break
            out += chunk
            if b"\x1b[6n" in chunk:       # the shell asks where the cursor is, as terminals answer
                os.write(fd, b"\x1b[1;1R" * chunk.count(b"\x1b[6n"))
            if pattern and re.search(pattern, ANSI.sub("", out.decode(errors="replace"))):
                break
    return out.decode(errors="replace")


def test_terminal_opens_the_duckdb_shell(fixture_run, ntscope_bin):
    """On a terminal `ntscope sql RUN` (no flag) is DuckDB's interactive shell: its prompt,
    .mode, the same numbers as the Python connection."""
    run = fixture_run(SMALL)
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(REPO)
        os.execve(sys.executable, [sys.executable, "-m", "ntscope", "sql", run],
                  dict(os.environ, NTSCOPE_BIN=ntscope_bin, TERM="xterm"))
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))   # a 200-column terminal
    try:
        banner = read_until(fd, r"D $")
        assert "shell" in banner and "on the views of" in banner and ".quit or Ctrl-D leaves" in banner, banner[-2000:]
        os.write(fd, b".mode csv\r")
        read_until(fd, r"D $", timeout=20)
        os.write(fd, QUERY.encode() + b"\r")
        out = read_until(fd, r"answer,[^\r\n]*\r*\n")
        os.write(fd, b".quit\r")
        read_until(fd, None, timeout=30)          # to the end: the shell and ntscope exit
    finally:
        end = time.monotonic() + 30
        done, status = os.waitpid(pid, os.WNOHANG)
        while not done and time.monotonic() < end:
            time.sleep(0.1)
            done, status = os.waitpid(pid, os.WNOHANG)
        if not done:
            os.kill(pid, 9)
            _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert csv_answer(out) == python_answer(run)[1]


def pins():
    with open(os.path.join(REPO, "constraints.txt")) as f:
        return dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", f.read(), re.M))


def test_the_shell_is_the_pinned_duckdb_cli_of_the_reports_duckdb():
    pinned = pins()
    assert pinned["duckdb"] == duckdb.__version__
    assert pinned["duckdb-cli"] == shell.shell_for(pinned["duckdb"])   # the same, or the pair tested here
    path = shell.binary()
    assert shell.version(path) == pinned["duckdb-cli"]
    assert shell.checked_binary() == (path, pinned["duckdb-cli"])
    with open(os.path.join(REPO, "pyproject.toml")) as f:
        assert re.search(r'"duckdb-cli[<>=]', f.read())   # a pip install brings the shell too


def test_a_shell_of_another_duckdb_is_refused(fixture_run, ntscope_cli, tmp_path):
    """A duckdb-cli of another version than the duckdb package (a stand-in binary printing
    another version) is refused before anything runs, with the fix."""
    pkg = tmp_path / "duckdb_cli"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    fake = pkg / "duckdb"
    fake.write_text("#!/bin/sh\necho 'v0.9.2 (Other) 0123456789'\n")
    fake.chmod(0o755)
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    r = ntscope_cli("sql", fixture_run(SMALL), "--shell", input="SELECT 1;\n", env={"PYTHONPATH": path})
    assert r.returncode == 2
    assert f"is DuckDB 0.9.2, the reports use DuckDB {duckdb.__version__}" in r.stderr
    assert f"fix: pip install duckdb-cli=={shell.shell_for(duckdb.__version__)}" in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_statements_on_stdin_and_c_stay_csv_from_the_python_connection(fixture_run, ntscope_cli):
    run = fixture_run(SMALL)
    values = python_answer(run)[1]
    for r in (ntscope_cli("sql", run, input=QUERY), ntscope_cli("sql", run, "-c", QUERY)):
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines()[0] == "marker,stage_rows,stage_ns,target_events"
        assert csv_answer(r.stdout) == values
        assert "on the views of" not in r.stderr
