"""How much memory DuckDB may take, and where a connection's tables live.

DuckDB's own default memory limit is 80% of the machine's RAM, and the analysis of a
large run takes what it is given (5.9 GB peak RSS at 3.3 M events). ntscope bounds every
connection instead: 2 GB, or half the memory of a smaller machine (physical RAM or the
cgroup's memory.max, whichever is less). 2 GB because the goal is a peak RSS of at most 3 GB
whatever the run's size: the limit covers DuckDB's buffer manager, not Python's objects,
Arrow results, the allocator's slack and the code, which measured 0.4-0.5 GB above it
(2.41 GB at 3.3 M events, 2.51 GB at 10.1 M). Beyond the limit DuckDB
spills to a private folder (spill.spill_dir). Override with --memory-limit / NTSCOPE_MEMORY_LIMIT
(a DuckDB size: 3GB, 500MB; `none`: DuckDB's default)."""
import os
import re

from ntscope.common.errors import NtscopeError as RunError
from ntscope.sql.raw_views import run_events

DEFAULT_MEMORY_LIMIT_BYTES = 2 * 10**9
MEMORY_LIMIT_ENV = "NTSCOPE_MEMORY_LIMIT"
NO_LIMIT = ("none", "default")
TABLES_IN_FILE, TABLES_IN_MEMORY = "file", "memory"   # where its tables live (new_connection)
# The views' and interference tables, uncompressed, per event of the run: 183-192 bytes on a
# patched capture (4.3 M events) and stock runs of 10 and 13 M.
TABLE_BYTES_PER_EVENT = 200
# The share of the memory limit the estimated tables may take to live in memory (tables_by_size).
# READ_AGAIN: analyze's tables, read again after the views (report model, timeline, plots): in
# memory, runs estimated at 0.48 and 0.52 of the 2 GB limit took 8-9% less time (RSS 1.1 ->
# 1.8-2.0 GB), one at 1.04 no less (the later steps evict the tables); so are the comparison's.
# READ_ONCE: a compare or sweep side's, read once and closed: 16% less at 1.36 of the limit,
# 19% at 1.5, the same at 2.7.
READ_AGAIN_SHARE, READ_ONCE_SHARE = 0.6, 1.5


def machine_memory_bytes():
    """Physical RAM, or the cgroup's memory limit when it is lower (a container)."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                v = f.read().strip()
        except OSError:
            continue
        if v.isdigit() and 0 < int(v) < total:
            total = int(v)
    return total


def default_memory_limit():
    """The memory limit ntscope gives DuckDB unless told otherwise, as a DuckDB size."""
    return f"{min(DEFAULT_MEMORY_LIMIT_BYTES, machine_memory_bytes() // 2) // 10**6}MB"


def memory_limit_setting(memory_limit=None):
    """The memory_limit to SET (None: leave DuckDB's default): the value given, else
    $NTSCOPE_MEMORY_LIMIT, else default_memory_limit(); `none` / `default` mean DuckDB's own."""
    v = memory_limit if memory_limit not in (None, "") else os.environ.get(MEMORY_LIMIT_ENV) or None
    if v is None:
        return default_memory_limit()
    return None if v.strip().lower() in NO_LIMIT else v.strip()


def memory_limit_bytes(con):
    """The connection's memory limit in bytes, from DuckDB's own reading of it ('1.8 GiB')."""
    text = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    m = re.fullmatch(r"\s*([0-9.]+)\s*([KMGTP]i?B|bytes)\s*", text)
    if not m:
        raise RunError(f"DuckDB reads the memory limit back as {text!r}, not a size; fix: pass --memory-limit "
                       f"as e.g. 3GB")
    unit = m.group(2)
    scale = 1 if unit == "bytes" else (1024 if "i" in unit else 1000) ** ("KMGTP".index(unit[0]) + 1)
    return float(m.group(1)) * scale


def tables_by_size(con, run_dirs, memory_share, bytes_per_event=TABLE_BYTES_PER_EVENT):
    """TABLES_IN_MEMORY when the tables, estimated at bytes_per_event of the runs' events, take
    at most memory_share of the connection's memory limit; else TABLES_IN_FILE."""
    estimate = bytes_per_event * sum(run_events(con, d) for d in run_dirs)
    return TABLES_IN_MEMORY if estimate <= memory_share * memory_limit_bytes(con) else TABLES_IN_FILE
