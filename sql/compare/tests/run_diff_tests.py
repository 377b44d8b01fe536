#!/usr/bin/env python3
"""Diff tests for sql/compare/*.sql, Perfetto style: fixture + query -> expected CSV.

cases/<case>/case.json   {"base": "<fixture>", "run": "<fixture>"}  (fixtures/ names; "base"
                         may be omitted for interference-only cases)
cases/<case>/queries/<name>.sql   run on the compare connection, or on the run's own
                         connection when <name> starts with "run__"
                         -> <name>.csv (expected rows) or <name>.err (expected error substring)
--update rewrites the CSVs (check them by hand). Exit 1 on any difference.
"""
import csv
import io
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(REPO, "reports"))
from ntscope_compare import load, testdata  # noqa: E402


def to_csv(rel):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(rel.columns)
    for row in rel.fetchall():
        w.writerow(["" if v is None else v for v in row])
    return buf.getvalue()


def run_case(case_dir, scratch, update):
    spec = json.load(open(os.path.join(case_dir, "case.json")))
    qdir = os.path.join(case_dir, "queries")
    fails = 0
    cons, err = None, None
    try:
        run = testdata.prepare(spec["run"], scratch)
        if "base" in spec:
            base = spec["base"] if spec["base"].startswith("/") else testdata.prepare(spec["base"], scratch)
            cmp_con, run_con = load.compare_connection(base, run, keep_run=True)
        else:
            cmp_con, run_con = None, load.run_connection(run)
        cons = (cmp_con, run_con)
    except Exception as e:  # an expected-error case fails here
        err = str(e)
    for q in sorted(f for f in os.listdir(qdir) if f.endswith(".sql")):
        name = q[:-4]
        sql = open(os.path.join(qdir, q)).read()
        exp_err = os.path.join(qdir, name + ".err")
        exp_csv = os.path.join(qdir, name + ".csv")
        try:
            if err:
                raise RuntimeError(err)
            con = cons[1] if name.startswith("run__") else cons[0]
            got = to_csv(con.sql(sql))
        except Exception as e:
            if os.path.exists(exp_err) and open(exp_err).read().strip() in str(e):
                print(f"ok   {os.path.basename(case_dir)}/{name} (expected error)")
                continue
            print(f"FAIL {os.path.basename(case_dir)}/{name}: {e}")
            fails += 1
            continue
        if update:
            with open(exp_csv + ".tmp", "w") as f:
                f.write(got)
            os.replace(exp_csv + ".tmp", exp_csv)
        want = open(exp_csv).read() if os.path.exists(exp_csv) else None
        if got == want:
            print(f"ok   {os.path.basename(case_dir)}/{name}")
        else:
            fails += 1
            print(f"FAIL {os.path.basename(case_dir)}/{name}: output differs from {exp_csv}")
            print("---- got\n" + got + "---- want\n" + (want or "(missing)\n"))
    return fails


def main():
    update = "--update" in sys.argv
    only = [a for a in sys.argv[1:] if not a.startswith("--")]
    cases = sorted(d for d in os.listdir(os.path.join(HERE, "cases")) if not only or d in only)
    fails = 0
    with tempfile.TemporaryDirectory(prefix="ntscope-compare-") as scratch:
        for c in cases:
            fails += run_case(os.path.join(HERE, "cases", c), scratch, update)
    print(f"{len(cases)} cases, {fails} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
