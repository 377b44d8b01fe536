#!/usr/bin/env python3
"""Make a large run from a converted one for benchmarking the analysis: every host's
Parquet files repeated N times, copy k shifted by k * (trace span + 1 s) + (k^2 mod 7) ms
on both hosts (the same shift, so the clock offset and every per-command relation are
preserved; the uneven part keeps copy j's initiator and copy j+k's target, which carry
the same command ids and LBAs, from agreeing on one false offset).

--stretch S: copy k's times also run (1 + S * k / N) times slower, every host's around the
same moment (the copy's start on the reference initiator's clock, placed on each host's
clock by the run's own clock estimate: initiator_clock, clock_offset), so that every
duration of copy k is the original's times that factor and every relation between the hosts
holds as in the original (to within the offset's uncertainty times the factor). Exact copies
repeat every duration N times, which real I/O never does: a GROUP BY over durations (the
percentiles' value counts, the interference breakdown) then has N times fewer groups than a
real run of that size, and the benchmark flatters the analysis. The equal-answers test (sql/tests/test_scaled_run.py) uses exact copies.

In:  SRC run directory (converted), N.  Out: DST/<host>/parquet/... and metadata.json.
Usage: make_scaled_run.py SRC DST N [--stretch S]"""
import glob
import os
import shutil
import sys

import duckdb


def sql_str(s):
    """A string literal (the output path is data)."""
    return "'" + s.replace("'", "''") + "'"


def host_anchors(src):
    """{host: the copy's anchor on that host's clock (ns)}: the reference initiator's first
    event, placed on each host's clock through the run's clock estimate; a host the estimate
    does not place keeps its own first event. Needs the ntscope package (setup.sh installs it)."""
    from ntscope.sql import views
    con = views.connect(src)
    try:
        return dict(con.execute("""
            WITH t0 AS (
                SELECT min(e.ts) AS ts FROM events e JOIN initiator_clock c ON c.host = e.host
                WHERE c.host = c.reference_host
            ), initiators AS (
                SELECT host, (SELECT ts FROM t0) - shift_ns AS anchor FROM initiator_clock WHERE shift_ns IS NOT NULL
            ), placed AS (
                SELECT host, anchor FROM initiators
                UNION ALL
                -- a target through the first initiator (by name) placed with it
                SELECT o.target_host, arg_min(i.anchor + o.offset_ns, o.initiator_host)
                FROM clock_offset o JOIN initiators i ON i.host = o.initiator_host
                GROUP BY o.target_host
            )
            SELECT h.host, coalesce(p.anchor, h.first_ts)::BIGINT
            FROM (SELECT host, min(ts) AS first_ts FROM events GROUP BY host) h LEFT JOIN placed p USING (host)
        """).fetchall())
    finally:
        con.close()


def main(src, dst, n, stretch=0.0):
    con = duckdb.connect()
    files = glob.glob(os.path.join(src, "*", "parquet", "*", "*.parquet"))
    if not files:
        print(f"make_scaled_run: no Parquet under {src}/*/parquet; fix: convert the run first", file=sys.stderr)
        return 2
    if not 0 <= stretch < 1:
        print(f"make_scaled_run: --stretch {stretch} is not in [0, 1); fix: e.g. --stretch 0.02", file=sys.stderr)
        return 2
    lo, hi = con.execute("SELECT min(ts), max(ts) FROM read_parquet(?, union_by_name = true)", [files]).fetchone()
    shift = int((hi - lo) * (1 + stretch)) + 1_000_000_000
    anchors = host_anchors(src) if stretch else {}
    for f in files:
        rel = os.path.relpath(f, src)
        out = os.path.join(dst, rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        if con.execute("SELECT count(*) FROM read_parquet(?)", [f]).fetchone()[0] == 0:
            shutil.copy(f, out)
            continue
        anchor = int(anchors.get(rel.split(os.sep)[0], 0))
        # copy k: (ts - anchor) * (1 + stretch * k / n) + anchor, then shifted (integers: the
        # factor as a fraction of n, exact, no floating point)
        slow = f"(ts - {anchor})::HUGEINT * {int(stretch * 1_000_000)} * k // ({n}::HUGEINT * 1000000)" if stretch else "0"
        con.execute(f"COPY (SELECT * REPLACE ((ts + {slow} + k * {shift} + ((k * k) % 7) * 1000000)::BIGINT AS ts) "
                    f"FROM read_parquet(?), range({n}) r(k) "
                    f"ORDER BY ts) TO {sql_str(out + '.tmp')} (FORMAT parquet)", [f])
        os.replace(out + ".tmp", out)
    from ntscope.common import derived
    for m in glob.glob(os.path.join(src, "*", "parquet", "metadata.json")):
        shutil.copy(m, os.path.join(dst, os.path.relpath(m, src)))
        # what this wrote (the rows, bytes and checksums of the scaled files), as ntscope checks a
        # host's event files against metadata.json before reading them
        derived.record(os.path.dirname(os.path.dirname(os.path.join(dst, os.path.relpath(m, src)))), recount=True)
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    stretch = 0.0
    if "--stretch" in args:
        i = args.index("--stretch")
        try:
            stretch = float(args[i + 1])
        except (IndexError, ValueError):
            print(__doc__, file=sys.stderr)
            sys.exit(2)
        del args[i:i + 2]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(args[0], args[1], int(args[2]), stretch))
