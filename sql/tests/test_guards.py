"""Typed SQL touches only the run's converted files and --out (sql/guards.py): `ntscope sql -c`,
statements on stdin, the DuckDB shell and ntscope.data.connect, each refusing writes over a
trace, reads outside the run, ATTACH, LOAD and INSTALL, with exit 2, DuckDB's refusal, the fix,
and every byte of the run unchanged."""
import os

import pytest

from ntscope import data
from ntscope.common.errors import NtscopeError
from ntscope.sql import shell

from conftest import tree_digest

SMALL = "lab-6.1-stock-base-randread"          # 328 reads, stock 6.1, two hosts
REFUSED = "file system operations are disabled by configuration"
FIX = "fix: ntscope sql reads only the run's converted files and writes only to --out DIR"


@pytest.fixture(scope="module")
def run(fixture_run):
    return fixture_run(SMALL, fresh=True)


def refused_statement(r, *parts):
    assert r.returncode == 2, (r.returncode, r.stderr)
    for part in parts:
        assert part in r.stderr, (part, r.stderr)
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("statement, what", [
    ("COPY (SELECT 1) TO '{run}/initiator/trace.dat'", "{run}/initiator/trace.dat"),
    ("COPY (SELECT 1) TO '{run}/target/host.json' (FORMAT json)", "{run}/target/host.json"),
    ("COPY (SELECT 1 AS a) TO '{run}/initiator/parquet/nvme/nvme_setup_cmd.parquet' (FORMAT parquet)",
     "{run}/initiator/parquet/nvme/tmp_nvme_setup_cmd.parquet"),
    ("ATTACH '{tmp}/outside.duckdb' AS o", "{tmp}/outside.duckdb"),
    ("SELECT * FROM read_csv('/etc/passwd')", "/etc/passwd"),
    ("SELECT * FROM glob('{run}/*/trace.dat')", "{run}/*/trace.dat"),
])
def test_sql_c_refuses_files_outside_the_views(run, ntscope_cli, tmp_path, statement, what):
    before = tree_digest(run)
    sql = statement.format(run=run, tmp=tmp_path)
    r = ntscope_cli("sql", run, "-c", f"SELECT count(*) FROM io; {sql}")
    refused_statement(r, "error in statement 2", f'Cannot access file "{what.format(run=run, tmp=tmp_path)}"',
                      REFUSED, FIX)
    assert r.stdout == "count_star()\n328\n"        # the first statement ran: the views are there
    assert tree_digest(run) == before
    assert not os.path.exists(tmp_path / "outside.duckdb")


def test_extensions_neither_load_nor_install_nor_autoload(run, ntscope_cli, tmp_path):
    fake = tmp_path / "x.duckdb_extension"
    fake.write_bytes(b"\0" * 64)
    r = ntscope_cli("sql", run, "-c", f"LOAD '{fake}'")
    refused_statement(r, "Loading external extensions is disabled", "fix:")
    r = ntscope_cli("sql", run, "-c", "INSTALL httpfs")
    refused_statement(r, REFUSED, "fix:")
    r = ntscope_cli("sql", run, "-c", "SELECT current_setting('autoinstall_known_extensions') AS i, "
                    "current_setting('autoload_known_extensions') AS l, "
                    "current_setting('allow_community_extensions') AS c, "
                    "current_setting('enable_external_access') AS e, current_setting('lock_configuration') AS k")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "i,l,c,e,k\nFalse,False,False,False,True\n"
    # the guards cannot be lifted from SQL; harmless knobs still can be set
    refused_statement(ntscope_cli("sql", run, "-c", "SET lock_configuration = false"), "the configuration has been locked")
    r = ntscope_cli("sql", run, "-c", "SET threads = 1; SELECT current_setting('threads') AS t")
    assert r.returncode == 0 and r.stdout.endswith("t\n1\n"), r.stderr


def test_out_is_the_one_folder_sql_writes(run, ntscope_cli, tmp_path):
    before = tree_digest(run)
    out = tmp_path / "exports"
    r = ntscope_cli("sql", run, "--out", str(out), "-c", f"COPY (SELECT count(*) AS n FROM io) TO '{out}/n.csv'")
    assert r.returncode == 0, r.stderr
    assert (out / "n.csv").read_text() == "n\n328\n"
    # the same call still refuses anything beside it
    r = ntscope_cli("sql", run, "--out", str(out), "-c", f"COPY (SELECT 1) TO '{tmp_path}/beside.csv'")
    refused_statement(r, f'Cannot access file "{tmp_path}/beside.csv"', REFUSED)
    assert tree_digest(run) == before


@pytest.mark.parametrize("where, message", [
    ("{run}/initiator", "it is the host folder {run}/initiator of a run"),
    ("{run}/report/exports", "it lies inside {run}/report, where ntscope writes the run's reports"),
    ("{run}", "it is the run folder {run}"),
    ("{parent}", "it holds runs (1: lab-6.1-stock-base-randread)"),
    ("{grandparent}", "the run {run} lies inside it"),
])
def test_out_inside_or_around_the_run_is_refused(run, ntscope_cli, where, message):
    before = tree_digest(run)
    parent = os.path.dirname(run)
    path = where.format(run=run, parent=parent, grandparent=os.path.dirname(parent))
    r = ntscope_cli("sql", run, "--out", path, "-c", "SELECT 1")
    assert r.returncode == 2, r.stderr
    assert f"--out {path}: " in r.stderr and message.format(run=run) in r.stderr, r.stderr
    assert "fix: pass --out a folder outside every run" in r.stderr
    assert tree_digest(run) == before
    assert not os.path.exists(os.path.join(run, "report", "exports"))


def test_unrestricted_lifts_the_guards_on_purpose(run, ntscope_cli, tmp_path):
    mine = tmp_path / "labels.csv"
    mine.write_text("tenant\nalpha\n")
    r = ntscope_cli("sql", run, "--unrestricted", "-c", f"SELECT tenant FROM read_csv('{mine}')")
    assert r.returncode == 0 and r.stdout == "tenant\nalpha\n", r.stderr
    refused_statement(ntscope_cli("sql", run, "-c", f"SELECT tenant FROM read_csv('{mine}')"), REFUSED)


def test_a_typo_gets_the_syntax_fix(run, ntscope_cli):
    r = ntscope_cli("sql", run, "-c", "SELEC 1")
    refused_statement(r, 'syntax error at or near "SELEC"', "fix: correct the statement's syntax")
    r = ntscope_cli("sql", run, "-c", "SELECT * FROM no_such_view")
    refused_statement(r, "no_such_view", "fix: SHOW TABLES lists the run's views")


def shell_available():
    try:
        shell.checked_binary()
        return True
    except NtscopeError:
        return False


@pytest.mark.skipif(not shell_available(), reason="the DuckDB shell (duckdb-cli) is not installed")
def test_the_shell_refuses_copy_and_the_dot_commands_that_reach_files(run, ntscope_cli, tmp_path):
    before = tree_digest(run)
    marker = tmp_path / "ran"
    statements = (f"COPY (SELECT 1) TO '{run}/initiator/trace.dat';\n"
                  f".output {run}/initiator/trace.dat\n"
                  f".shell touch {marker}\n"
                  f".read /etc/passwd\n"
                  f".open {tmp_path}/other.duckdb\n"
                  "SELECT count(*) AS n FROM io;\n")
    r = ntscope_cli("sql", run, "--shell", input=statements)
    assert f'Cannot access file "{run}/initiator/trace.dat"' in r.stderr, r.stderr
    for dot in (".output/.once/.excel", ".sh/.system", ".read", ".open"):
        assert f"{dot} cannot be used in -safe mode" in r.stderr, (dot, r.stderr)
    assert "328" in r.stdout                         # the views are there and answer
    assert "writes no file (--out DIR to export)" in r.stderr
    assert not marker.exists() and not (tmp_path / "other.duckdb").exists()
    assert tree_digest(run) == before


def test_data_connect_is_guarded_the_same_way(run, tmp_path):
    import duckdb
    before = tree_digest(run)
    con = data.connect(run)
    assert con.execute("SELECT count(*) FROM io").fetchall() == [(328,)]
    for statement in (f"COPY (SELECT 1) TO '{run}/initiator/trace.dat'", "SELECT * FROM read_csv('/etc/passwd')"):
        with pytest.raises(duckdb.PermissionException, match=REFUSED):
            con.execute(statement)
    con.close()
    out = tmp_path / "mine"
    con = data.connect(run, out=str(out))
    con.execute(f"COPY (SELECT count(*) AS n FROM io) TO '{out}/n.csv'")
    assert (out / "n.csv").read_text() == "n\n328\n"
    con.close()
    with pytest.raises(NtscopeError, match="(SQL would be able to write there|lies inside it).* fix: pass --out a folder outside every run"):
        data.connect(run, out=os.path.dirname(os.path.dirname(run)))
    assert tree_digest(run) == before
