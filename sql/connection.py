"""A DuckDB connection with ntscope's settings: the memory limit (memory_policy), a private
spill folder (spill), the planner settings, and the database its tables live in (a file,
compressed after each SQL file, or memory)."""
import os
import shutil
import weakref

from ntscope.common.errors import NtscopeError as RunError
from ntscope.sql.interrupts import LIVE
from ntscope.sql.memory_policy import MEMORY_LIMIT_ENV, TABLES_IN_FILE, TABLES_IN_MEMORY, memory_limit_setting
from ntscope.sql.quoting import sql_str
from ntscope.sql.spill import spill_dir

DATABASE = "ntscope"       # the connection's default database (new_connection)


def new_connection(memory_limit=None, temp_dir=None, tables=TABLES_IN_FILE):
    """An empty DuckDB connection with ntscope's settings: the memory limit
    (memory_limit_setting), a private spill folder, removed when the connection is
    garbage-collected or the process exits (DuckDB deletes its spill files on close), and
    its tables in a database file there (TABLES_IN_FILE) or in memory (TABLES_IN_MEMORY)."""
    con = limited_connection(memory_limit, temp_dir)
    attach_tables(con, tables)
    return con


# The planner settings of every connection that runs the views (limited_connection, the DuckDB
# shell's init script). An ASOF join whose left side DuckDB estimates at <= 64 rows runs as a
# nested loop over the right side; an estimate that low for a side of millions (a DISTINCT over
# a CTE was one) made one statement quadratic (not done after 10 minutes, 10 M events). The
# sorted merge costs little more for a truly small side.
PLANNER_SETTINGS = ("SET asof_loop_join_threshold = 0",)


def limited_connection(memory_limit=None, temp_dir=None):
    """new_connection before its tables' database is attached."""
    import duckdb
    limit = memory_limit_setting(memory_limit)
    con = duckdb.connect()
    LIVE.add(con)
    con.execute("SET enable_progress_bar = false")
    for statement in PLANNER_SETTINGS:
        con.execute(statement)
    if limit is not None:
        try:
            con.execute(f"SET memory_limit = {sql_str(limit)}")
        except duckdb.Error as e:
            con.close()
            where = "" if memory_limit not in (None, "") else f" (from {MEMORY_LIMIT_ENV})"
            raise RunError(f"--memory-limit {limit!r}{where} is not a memory size ({str(e).splitlines()[0]}); "
                           f"fix: e.g. --memory-limit 3GB, or none for DuckDB's default (80% of RAM)") from None
    spill = spill_dir(temp_dir)
    weakref.finalize(con, shutil.rmtree, spill, ignore_errors=True)
    con.execute(f"SET temp_directory = {sql_str(spill)}")
    return con


def attach_tables(con, tables):
    """Attaches the database the connection's tables live in (TABLES_IN_FILE or
    TABLES_IN_MEMORY) as its default."""
    # TABLES_IN_FILE: a database file in the spill folder, compressed when checkpointed
    # (compress_tables, after each SQL file). At 10 M events (773 k I/Os) the tables took 2.4 GB
    # uncompressed, 1.4 GB of it spilled under the 2 GB limit and read back by every later
    # query; compressed, 0.5 GB. Not ':memory:' (COMPRESS): an in-memory database's compressed
    # blocks cannot be evicted, so at a small limit or a large run they broke the memory limit
    # (tests/test_memory_limit.py); a file's blocks are evicted like spill.
    # TABLES_IN_MEMORY: a plain in-memory database, never checkpointed, whose blocks DuckDB
    # evicts to the spill folder under the limit. Not compressing, each table-making statement
    # is about 30% faster, worth it while the tables are small beside the limit (tables_by_size).
    spill = con.execute("SELECT current_setting('temp_directory')").fetchall()[0][0]
    for statement in attach_sql(spill, tables):
        con.execute(statement)


def attach_sql(spill, tables):
    """The statements that attach the tables' database (attach_tables) and make it the default."""
    if tables == TABLES_IN_FILE:
        where = sql_str(os.path.join(spill, "tables.duckdb"))
    elif tables == TABLES_IN_MEMORY:
        where = "':memory:'"
    else:
        raise ValueError(f"tables={tables!r}: not {TABLES_IN_FILE!r} or {TABLES_IN_MEMORY!r}")
    return [f"ATTACH {where} AS {DATABASE}", f"USE {DATABASE}"]


def compress_tables(con):
    """Compresses the tables made since the last call, when they live in a file (see
    new_connection). Not in memory: a checkpoint there compresses too (2.9 s of a 1 M-I/O
    side's 16 s of views), into blocks like those of ':memory:' (COMPRESS) (attach_tables)."""
    if tables_in_file(con):
        con.execute(f"CHECKPOINT {DATABASE}")


def tables_in_file(con):
    """True when the connection's tables live in a database file (new_connection)."""
    rows = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = ?", [DATABASE]).fetchall()
    return bool(rows and rows[0][0])
