#!/usr/bin/env python3
"""Perfetto-style diff tests for the SQL views: fixture + query -> expected output.

Each sql/tests/cases/<case>/ holds:
    events.txt           the fixture, readable text (see fixture_from_text.py)
    host_<host>.json     optional host.json of that host
    metadata_<host>.json optional metadata.json of that host (else a default)
    queries/<name>.sql   one query; its expected result is queries/<name>.csv, or
                         queries/<name>.err holding a substring of the expected error.
A case with expect_load_error.txt must fail to load with that message substring.

Usage: run_diff_tests.py [--update] [case ...]   (--update writes the .csv files)
Exit 0 when every test passes, 1 otherwise."""
import csv
import difflib
import io
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import load_views  # noqa: E402
from fixture_from_text import write_run  # noqa: E402


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def result_csv(con, sql):
    cur = con.execute(sql)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow([d[0] for d in cur.description])
    for row in cur.fetchall():
        w.writerow([fmt(v) for v in row])
    return out.getvalue()


def build_case(case_dir, tmp):
    run = os.path.join(tmp, "run")
    os.makedirs(run)
    if os.path.exists(os.path.join(case_dir, "events.txt")):
        write_run(os.path.join(case_dir, "events.txt"), run)
    for f in os.listdir(case_dir):
        for prefix, target in (("host_", "host.json"), ("metadata_", os.path.join("parquet", "metadata.json"))):
            if f.startswith(prefix) and f.endswith(".json"):
                host = f[len(prefix):-5]
                dst = os.path.join(run, host, target)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy(os.path.join(case_dir, f), dst)
    return run


def run_case(case_dir, update):
    name = os.path.basename(case_dir)
    failures, passed = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        run = build_case(case_dir, tmp)
        expect_load = os.path.join(case_dir, "expect_load_error.txt")
        try:
            con = load_views.connect(run)
        except Exception as e:  # noqa: BLE001 - the message is what is tested
            if os.path.exists(expect_load):
                want = open(expect_load).read().strip()
                if want in str(e):
                    return 1, []
                return 0, [f"{name}: load error '{e}' does not contain '{want}'"]
            return 0, [f"{name}: failed to load: {e}"]
        if os.path.exists(expect_load):
            return 0, [f"{name}: expected a load error, loaded fine"]
        qdir = os.path.join(case_dir, "queries")
        for q in sorted(f for f in os.listdir(qdir) if f.endswith(".sql")):
            base = os.path.join(qdir, q[:-4])
            sql = open(base + ".sql").read()
            if os.path.exists(base + ".err"):
                want = open(base + ".err").read().strip()
                try:
                    con.execute(sql).fetchall()
                    failures.append(f"{name}/{q}: expected an error containing '{want}', got rows")
                except Exception as e:  # noqa: BLE001
                    if want in str(e):
                        passed += 1
                    else:
                        failures.append(f"{name}/{q}: error '{e}' does not contain '{want}'")
                continue
            try:
                got = result_csv(con, sql)
            except Exception as e:  # noqa: BLE001
                failures.append(f"{name}/{q}: query failed: {e}")
                continue
            if update or not os.path.exists(base + ".csv"):
                with open(base + ".csv", "w") as f:
                    f.write(got)
                print(f"wrote {base}.csv")
                passed += 1
                continue
            want = open(base + ".csv").read()
            if got == want:
                passed += 1
            else:
                diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                                    "expected", "actual"))
                failures.append(f"{name}/{q}: output differs\n{diff}")
    return passed, failures


def main(argv):
    update = "--update" in argv
    names = [a for a in argv if not a.startswith("--")]
    cases_dir = os.path.join(HERE, "cases")
    cases = names or sorted(os.listdir(cases_dir))
    total, fails = 0, []
    for c in cases:
        p, f = run_case(os.path.join(cases_dir, c), update)
        total += p
        fails += f
    for f in fails:
        print("FAIL " + f)
    print(f"sql diff tests: {total} passed, {len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
