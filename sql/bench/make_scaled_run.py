#!/usr/bin/env python3
"""Make a large run from a converted one for benchmarking the analysis: every host's
Parquet files repeated N times, copy k shifted by k * (trace span + 1 s) + (k^2 mod 7) ms
on both hosts (the same shift, so the clock offset and every per-command relation are
preserved; the uneven part keeps copy j's initiator and copy j+k's target, which carry
the same command ids and LBAs, from agreeing on one false offset).

In:  SRC run directory (converted), N.  Out: DST/<host>/parquet/... and metadata.json.
Usage: make_scaled_run.py SRC DST N"""
import glob
import os
import shutil
import sys

import duckdb


def main(src, dst, n):
    con = duckdb.connect()
    files = glob.glob(os.path.join(src, "*", "parquet", "*", "*.parquet"))
    if not files:
        print(f"make_scaled_run: no Parquet under {src}/*/parquet; fix: convert the run first", file=sys.stderr)
        return 2
    lo, hi = con.execute("SELECT min(ts), max(ts) FROM read_parquet(?, union_by_name = true)", [files]).fetchone()
    shift = (hi - lo) + 1_000_000_000
    for f in files:
        rel = os.path.relpath(f, src)
        out = os.path.join(dst, rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        if con.execute("SELECT count(*) FROM read_parquet(?)", [f]).fetchone()[0] == 0:
            shutil.copy(f, out)
            continue
        con.execute(f"COPY (SELECT * REPLACE (ts + k * {shift} + ((k * k) % 7) * 1000000 AS ts) "
                    f"FROM read_parquet(?), range({n}) r(k) "
                    f"ORDER BY ts) TO '{out}.tmp' (FORMAT parquet)", [f])
        os.replace(out + ".tmp", out)
    for m in glob.glob(os.path.join(src, "*", "parquet", "metadata.json")):
        shutil.copy(m, os.path.join(dst, os.path.relpath(m, src)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
