"""Bounded memory (the goal: peak RSS <= 3 GB whatever the run's size): every DuckDB
connection ntscope opens (connection.new_connection) gets a memory limit by default, the override
(--memory-limit, NTSCOPE_MEMORY_LIMIT, `none`) is what DuckDB reads back, a bad value is an
error that says where it came from, DuckDB spills into a private folder under --temp-dir /
TMPDIR that is gone afterwards, an analysis or compare forced to spill (a tiny limit on a
scaled run) gives the same report.json or compare.json as one that is not, and tables kept in
memory (memory_policy.tables_by_size) are evicted under the limit. Needs the converter (NTSCOPE_BIN)."""
import gc
import json
import os
import re
import subprocess
import sys

import duckdb
import pytest

from ntscope.sql import connection, memory_policy, quoting, raw_views, views

HERE = os.path.dirname(os.path.abspath(__file__))
SQL = os.path.dirname(HERE)
SMALL = "lab-6.1-stock-base-randread"
# a run that needs more than TINY to compute its views: 20 time-shifted copies of a real
# capture (sql/bench/make_scaled_run.py; 1.66 M events, 127,780 reads). Below ~150 MB DuckDB
# fails on it (what operators need before they spill); TINY is a round size above that, and
# below what the views need (at 300 MB they compute without spilling; 10 copies fit in
# 200 MB).
SCALED, COPIES = "stock-randread-4k-qd8", 20
IOS = 6_389 * COPIES   # the fixture's reads, in every copy
TINY = "250MB"


def setting(con, name):
    return con.execute(f"SELECT current_setting('{name}')").fetchone()[0]


def duckdb_reads(size):
    """How DuckDB prints SIZE back (e.g. '2000MB' -> '1.8 GiB')."""
    c = duckdb.connect()
    c.execute(f"SET memory_limit = '{size}'")
    return setting(c, "memory_limit")


@pytest.fixture
def no_env(monkeypatch):
    monkeypatch.delenv("NTSCOPE_MEMORY_LIMIT", raising=False)
    monkeypatch.delenv("NTSCOPE_TEMP_DIR", raising=False)


def test_default_limit_is_2gb_or_half_a_small_machine(no_env, monkeypatch):
    monkeypatch.setattr(memory_policy, "machine_memory_bytes", lambda: 64 * 2**30)
    assert memory_policy.default_memory_limit() == "2000MB"
    monkeypatch.setattr(memory_policy, "machine_memory_bytes", lambda: 3 * 2**30)   # half of 3 GiB
    assert memory_policy.default_memory_limit() == "1610MB"
    con = connection.new_connection()
    assert setting(con, "memory_limit") == duckdb_reads("1610MB") == "1.4 GiB"


def test_every_connection_gets_the_limit(no_env, fixture_run):
    con = views.connect(fixture_run(SMALL))
    limit = memory_policy.default_memory_limit()
    assert setting(con, "memory_limit") == duckdb_reads(limit)
    # bounded: below DuckDB's own default (80% of RAM) on any machine with more than 2.5 GB
    if memory_policy.machine_memory_bytes() > 2.5e9:
        assert setting(con, "memory_limit") != setting(duckdb.connect(), "memory_limit")


@pytest.mark.parametrize("given, env, reads", [
    ("500MB", None, "476.8 MiB"),
    ("3GB", "500MB", "2.7 GiB"),          # the flag wins over the environment
    (None, "300MB", "286.1 MiB"),         # NTSCOPE_MEMORY_LIMIT when no flag
    ("1GiB", None, "1.0 GiB"),
])
def test_override(no_env, monkeypatch, given, env, reads):
    if env:
        monkeypatch.setenv("NTSCOPE_MEMORY_LIMIT", env)
    assert setting(connection.new_connection(given), "memory_limit") == reads


@pytest.mark.parametrize("given, env", [("none", None), ("NONE", None), (None, "none"), ("default", None)])
def test_none_is_duckdbs_own_default(no_env, monkeypatch, given, env):
    if env:
        monkeypatch.setenv("NTSCOPE_MEMORY_LIMIT", env)
    assert setting(connection.new_connection(given), "memory_limit") == setting(duckdb.connect(), "memory_limit")


def test_bad_value_says_where_it_came_from(no_env, monkeypatch):
    with pytest.raises(views.RunError, match=r"--memory-limit 'lots' is not a memory size .*fix: e\.g\. "
                                             r"--memory-limit 3GB, or none"):
        connection.new_connection("lots")
    monkeypatch.setenv("NTSCOPE_MEMORY_LIMIT", "12 parsecs")
    with pytest.raises(views.RunError, match=r"--memory-limit '12 parsecs' \(from NTSCOPE_MEMORY_LIMIT\) is not"):
        connection.new_connection()


def test_bad_value_from_the_environment_exits_2(fixture_run, ntscope_cli):
    r = ntscope_cli("sql", fixture_run(SMALL), "-c", "SELECT 1", env={"NTSCOPE_MEMORY_LIMIT": "lots"})
    assert r.returncode == 2 and r.stdout == ""
    assert "--memory-limit 'lots' (from NTSCOPE_MEMORY_LIMIT) is not a memory size" in r.stderr
    assert "Traceback" not in r.stderr


def test_asof_joins_are_never_nested_loops(no_env, tmp_path):
    """DuckDB runs an ASOF join whose left side it estimates at <= 64 rows as a nested loop over
    the right side: quadratic when the estimate is wrong (a statement of millions of rows on both
    sides did not finish in 10 minutes). ntscope's connections turn that off: a 3-row left side
    gets the sorted ASOF join too, where a plain connection loops."""
    q = ("EXPLAIN SELECT * FROM (VALUES (1, 10), (1, 20), (2, 5)) l(k, ts) "
         "ASOF JOIN (SELECT i % 3 AS k, i AS ts FROM range(100000) t(i)) r ON r.k = l.k AND r.ts <= l.ts")
    def plan(con):
        return con.execute(q).fetchall()[0][1]
    assert "Nested Loop Join" in plan(duckdb.connect())       # DuckDB's default, the premise
    ours = plan(connection.new_connection("200MB", str(tmp_path)))
    assert "Asof Join" in ours and "Nested Loop Join" not in ours


def test_spill_folder_is_private_and_removed(no_env, tmp_path):
    parent = tmp_path / "spill parent"            # created when missing; a space is data
    con = connection.new_connection("200MB", str(parent))
    spill = setting(con, "temp_directory")
    assert os.path.dirname(spill) == str(parent)
    assert os.path.basename(spill).startswith(f"ntscope-spill-{os.getpid()}-") and os.path.isdir(spill)
    # a second connection gets its own folder: two analyses never share spill files
    other = connection.new_connection("200MB", str(parent))
    assert setting(other, "temp_directory") != spill
    con.close()
    del con, other
    gc.collect()
    assert os.listdir(parent) == []               # both folders gone, the parent stays


def test_stale_spill_folder_of_a_dead_process_is_removed(no_env, tmp_path):
    p = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = tmp_path / f"ntscope-spill-{int(p.stdout)}-abc123"
    (dead / "duckdb_temp_storage_S32K-0.tmp").parent.mkdir()
    (dead / "duckdb_temp_storage_S32K-0.tmp").write_bytes(b"x" * 4096)
    alive = tmp_path / f"ntscope-spill-{os.getppid()}-def456"   # our parent is alive: kept
    alive.mkdir()
    mine = tmp_path / "not-ours"
    mine.mkdir()
    con = connection.new_connection(None, str(tmp_path))
    assert not dead.exists() and alive.exists() and mine.exists()
    assert os.path.isdir(setting(con, "temp_directory"))


def test_cli_spills_under_temp_dir_and_cleans_up(fixture_run, ntscope_cli, tmp_path):
    parent = tmp_path / "spill"
    parent.mkdir()
    r = ntscope_cli("sql", fixture_run(SMALL), "--memory-limit", "300MB", "--temp-dir", str(parent), "-c",
                    "SELECT current_setting('memory_limit') AS m, current_setting('temp_directory') AS t",
                    env={"NTSCOPE_MEMORY_LIMIT": "9GB"})
    assert r.returncode == 0, r.stderr
    m, t = r.stdout.splitlines()[1].split(",")
    assert m == "286.1 MiB" and os.path.dirname(t) == str(parent)
    assert not os.path.exists(t) and os.listdir(parent) == []
    # no flag, no environment: the default limit, a folder under TMPDIR
    env = {"TMPDIR": str(parent)}
    r = ntscope_cli("sql", fixture_run(SMALL), "-c", "SELECT current_setting('memory_limit') AS m, "
                    "current_setting('temp_directory') AS t", env=env)
    m, t = r.stdout.splitlines()[1].split(",")
    assert m == duckdb_reads(memory_policy.default_memory_limit()) and os.path.dirname(t) == str(parent)
    assert os.listdir(parent) == []


@pytest.fixture(scope="module")
def scaled(fixture_run, tmp_path_factory):
    big = str(tmp_path_factory.mktemp("scaled") / f"x{COPIES}")
    subprocess.run([sys.executable, os.path.join(SQL, "bench", "make_scaled_run.py"), fixture_run(SCALED), big,
                    str(COPIES)], check=True, capture_output=True)
    return big


def create_statement(text, table):
    """The CREATE TABLE statement of TABLE in the SQL TEXT (up to its closing semicolon)."""
    m = re.search(rf"^CREATE OR REPLACE TABLE {table} AS\n.*?;\n", text, re.S | re.M)
    assert m, f"no CREATE OR REPLACE TABLE {table}"
    return m.group(0)


def operators(node):
    """Every operator of a JSON plan: (name, extra_info), depth first."""
    yield node["name"].strip(), node.get("extra_info", {})
    for child in node.get("children", []):
        yield from operators(child)


def test_io_joined_builds_its_hash_tables_on_the_lookup_tables(no_env, scaled):
    """io_joined joins each initiator io command to ten lookup tables, and DuckDB builds every
    join's hash table before the probe runs. Built on the lookup tables (LEFT joins) that is one
    table of each; turned around (RIGHT: built on the command side, which DuckDB did when it
    estimated the commands at a sixth of their number) each table holds the chain of joined wide
    rows, and at 40 M events (3 M I/Os) the statement ran out of the 2 GB limit in every run.
    DuckDB decides from row counts, so the scaled run shows it (the fixture alone is too small to
    be turned around); the statements are sql/core/join.sql's as written."""
    con = views.connect(scaled)
    with open(os.path.join(SQL, "core/join.sql")) as f:
        text = f.read()
    con.execute(create_statement(text, "io_initiator_commands"))   # dropped after io_joined
    select = create_statement(text, "io_joined").split(" AS\n", 1)[1].rstrip().rstrip(";")
    plan = json.loads(con.execute("EXPLAIN (FORMAT json) " + select).fetchall()[0][1])
    ops = [op for root in plan for op in operators(root)]
    # ctrl_map, initiator_clock, clock_offset, lba_shift, the block link and request, the match,
    # the target command and device, the target's window, the request's owner and file, the namespace,
    # the cgroup's tenant, the controller's path, the path's ANA state (an equality join on host
    # and path disk, its time range a condition on the matched rows)
    assert [info.get("Join Type") for name, info in ops if name == "HASH_JOIN"] == ["LEFT"] * 16
    # no correlated subquery: DuckDB evaluates one over a materialized copy of its whole input
    assert [name for name, _ in ops if "DELIM" in name or name.startswith("CTE")] == []
    assert con.execute("SELECT count(*) FROM io").fetchone()[0] == IOS


def test_io_n_numbers_the_ios_in_initiator_and_submit_order(no_env, scaled):
    """io_n numbers the ios 1..n in (initiator host, submit time) order, every number once, as
    sql/core/join.sql documents it, on a run whose sort spans many row groups (its two threads
    each sort a share)."""
    con = views.connect(scaled)
    got = con.execute("""
        SELECT count(*), count(*) FILTER (WHERE io_n <> r), min(io_n), max(io_n), count(DISTINCT io_n)
        FROM (SELECT io_n, row_number() OVER (ORDER BY initiator_host, coalesce(i_setup_ts, i_complete_rq_ts),
                                              ctrl_id, qid, cid) AS r
              FROM io)""").fetchone()
    assert got == (IOS, 0, 1, IOS, IOS)


def test_tiny_limit_cannot_compute_the_views_without_spilling(no_env, scaled, tmp_path):
    """What makes the next test meaningful: at TINY the views need the disk (no room for
    spill files: DuckDB runs out of memory)."""
    con = connection.new_connection(TINY, str(tmp_path))
    con.execute("SET max_temp_directory_size = '0KB'")
    with pytest.raises(duckdb.Error, match="(?i)temp|memory"):
        con.execute(views.build_script(scaled, con))
        views.load_modules(con, views.INTERFERENCE_MODULES)


def test_tiny_limit_gives_the_same_report(scaled, ntscope_cli, tmp_path):
    """analyze at TINY (spilling, its tables in a file) and at the default (its tables in memory:
    memory_policy.tables_by_size): the same report.json, interference.json and per-I/O Parquet, and no
    spill folder left behind."""
    spill = tmp_path / "spill"
    spill.mkdir()
    outs = {}
    for limit in (TINY, None):
        out = tmp_path / f"out-{limit}"
        flags = ["--memory-limit", limit] if limit else []
        r = ntscope_cli("analyze", scaled, "--quiet", "--no-progress", "--out", str(out), "--temp-dir", str(spill),
                        *flags, env={"NTSCOPE_MEMORY_LIMIT": ""})
        assert r.returncode == 0, r.stderr
        assert os.listdir(spill) == []
        outs[limit] = out
    a, b = (json.load(open(outs[k] / "report.json")) for k in (TINY, None))
    assert sum(g["count"] for g in a["groups"]) == IOS
    # every copy joined: the clock offset's tie between copies resolves alike (sql/core/join.sql)
    assert {s["name"]: s["value"] for s in a["pipeline_stats"]}["matched_commands"] in (IOS, str(IOS))
    assert a == b
    assert json.load(open(outs[TINY] / "interference.json")) == json.load(open(outs[None] / "interference.json"))
    # the per-I/O files hold the same rows (their row order is not a contract: no ORDER BY)
    c = duckdb.connect()
    for f in ("io.parquet", "io_stages.parquet"):
        x, y = quoting.sql_str(str(outs[TINY] / f)), quoting.sql_str(str(outs[None] / f))
        n = c.execute(f"SELECT count(*) FROM read_parquet({x})").fetchone()[0]
        assert n >= IOS and n == c.execute(f"SELECT count(*) FROM read_parquet({y})").fetchone()[0], f
        assert c.execute(f"SELECT count(*) FROM (FROM read_parquet({x}) EXCEPT ALL FROM read_parquet({y}))"
                         ).fetchone()[0] == 0, f


@pytest.mark.parametrize("given, size", [("300MB", 300e6), ("1GiB", 2**30), ("20GB", 20e9), ("1TB", 1e12)])
def test_memory_limit_in_bytes(no_env, given, size):
    """DuckDB reads a limit back rounded to a tenth of a binary unit ('18.6 GiB'): within 0.3%
    of what was given, not off by the 1000/1024 of a unit (2.4-10%)."""
    assert memory_policy.memory_limit_bytes(connection.limited_connection(given)) == pytest.approx(size, rel=0.003)


def in_memory_table_bytes(con):
    """What the tables of an in-memory database hold, in memory and evicted to spill."""
    return con.execute("SELECT sum(memory_usage_bytes + temporary_storage_bytes) FROM duckdb_memory() "
                       "WHERE tag = 'IN_MEMORY_TABLE'").fetchone()[0]


def test_tables_in_memory_are_evicted_under_the_limit_and_estimated_from_the_events(no_env, scaled, tmp_path):
    """memory_policy.tables_by_size puts the views' tables in memory when their estimate (bytes per event
    x the events) takes at most a share of the limit: at the default limit for analyze, at TINY
    only for a compare or sweep side. Such a side's tables then outgrow TINY, and DuckDB evicts
    them to the spill folder: the views and interference are computed at TINY (with no room to
    spill they are not), and the estimate holds the tables within a factor 1.5."""
    share = memory_policy.READ_AGAIN_SHARE, memory_policy.READ_ONCE_SHARE
    con = connection.limited_connection(None, str(tmp_path))
    assert [memory_policy.tables_by_size(con, [scaled], s) for s in share] == [memory_policy.TABLES_IN_MEMORY] * 2
    con = connection.limited_connection(TINY, str(tmp_path))
    assert [memory_policy.tables_by_size(con, [scaled], s) for s in share] == [memory_policy.TABLES_IN_FILE, memory_policy.TABLES_IN_MEMORY]
    con = views.connect(scaled, TINY, str(tmp_path), interference=True, memory_share=memory_policy.READ_ONCE_SHARE)
    assert not connection.tables_in_file(con)
    held = in_memory_table_bytes(con)
    assert held > memory_policy.memory_limit_bytes(con)
    estimate = memory_policy.TABLE_BYTES_PER_EVENT * raw_views.run_events(con, scaled)
    assert estimate / 1.5 <= held <= estimate * 1.5, (held, estimate)
    assert con.execute("SELECT count(*) FROM io").fetchone()[0] == IOS
    con = connection.new_connection(TINY, str(tmp_path), memory_policy.TABLES_IN_MEMORY)
    con.execute("SET max_temp_directory_size = '0KB'")
    with pytest.raises(duckdb.Error, match="(?i)temp|memory"):
        con.execute(views.build_script(scaled, con))
        views.load_modules(con, views.INTERFERENCE_MODULES)


def test_compare_at_a_tiny_limit_gives_the_same_comparison(no_env, fixture_run, scaled, ntscope_cli, tmp_path):
    """compare at TINY (the scaled side's tables in memory, evicted: the test above) and at the
    default: the same compare.json."""
    docs = []
    for limit in (TINY, None):
        out = tmp_path / f"out-{limit}"
        flags = ["--memory-limit", limit] if limit else []
        r = ntscope_cli("compare", fixture_run(SCALED), scaled, "--quiet", "--no-progress", "--no-cache", "--out",
                        str(out), "--temp-dir", str(tmp_path), *flags, env={"NTSCOPE_MEMORY_LIMIT": ""})
        assert r.returncode == 0, r.stderr
        docs.append(json.load(open(out / "compare.json")))
    assert docs[0] == docs[1]
    # exact copies of the base: every I/O of the run side counted, the same mean end to end
    e2e, = [r for r in docs[0]["lad"] if r["stage"] == "end_to_end" and r["statistic"] == "mean"]
    assert (e2e["n_base"], e2e["n_run"]) == (IOS // COPIES, IOS)
    assert e2e["run_ns"] == pytest.approx(e2e["base_ns"], rel=1e-9)


def test_the_comparisons_tables_live_in_memory_while_small(no_env, fixture_run, scaled, tmp_path, monkeypatch):
    """compare_connection puts the comparison's own tables (sample values, rank points,
    bootstrap) in memory when their estimate (CMP_BYTES_PER_EVENT x both runs' events) is small
    beside the limit, else in the file; the estimate errs on the large side within a factor 2,
    and both places give the same comparison."""
    from ntscope.sql import compare_sides as load
    base = fixture_run(SCALED)
    con = load.compare_connection(base, scaled, memory_limit=TINY, temp_dir=str(tmp_path))
    assert not connection.tables_in_file(con)
    held = in_memory_table_bytes(con)
    estimate = load.CMP_BYTES_PER_EVENT * (raw_views.run_events(con, base) + raw_views.run_events(con, scaled))
    assert estimate / 2 <= held <= estimate, (held, estimate)
    monkeypatch.setattr(load, "CMP_BYTES_PER_EVENT", 10**6)
    in_file = load.compare_connection(base, scaled, memory_limit=TINY, temp_dir=str(tmp_path))
    assert connection.tables_in_file(in_file)
    rows = [c.execute("FROM cmp_lad ORDER BY ALL").fetchall() for c in (con, in_file)]
    assert rows[0] == rows[1] and len(rows[0]) > 0
