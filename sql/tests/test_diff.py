"""Perfetto-style diff tests for the SQL views: fixture + query -> expected output.

sql/tests/cases/<case>/ (one run built from readable text):
    events.txt           the fixture (see fixture_from_text.py)
    host_<host>.json     optional host.json of that host
    metadata_<host>.json optional metadata.json of that host (else a default)
    queries/<name>.sql   one query; expected result queries/<name>.csv, or queries/<name>.err
                         holding a substring of the expected error
    expect_load_error.txt  instead of queries: loading must fail with this substring
sql/compare/tests/cases/<case>/ (real lab fixtures):
    case.json            {"base": "<fixture>", "run": "<fixture>"} (fixtures/ names; no "base":
                         an interference-only case); optional "truth_groups": [group keys]
                         limits test_truth_agreement.py to the groups truth.json is about;
                         optional "hosts": [host folders] keeps only those of both runs
                         (["initiator"]: the target not traced)
    queries/<name>.sql   run on the compare connection, or on the run's own connection when
                         <name> starts with "run__"
`pytest --update-expected` rewrites the CSVs (check them by hand)."""
import csv
import io
import json
import os

import pytest

from ntscope.sql.tests.fixture_from_text import write_run
from ntscope.sql import compare_sides as compare_load
from ntscope.sql import views

HERE = os.path.dirname(os.path.abspath(__file__))
SQL_CASES = os.path.join(HERE, "cases")
COMPARE_CASES = os.path.join(os.path.dirname(HERE), "compare", "tests", "cases")


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def to_csv(cur, formatter):
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow([d[0] for d in cur.description])
    for row in cur.fetchall():
        w.writerow([formatter(v) for v in row])
    return out.getvalue()


def queries(case_dir):
    qdir = os.path.join(case_dir, "queries")
    if not os.path.isdir(qdir):
        return []
    return [(case_dir, q[:-4]) for q in sorted(os.listdir(qdir)) if q.endswith(".sql")]


def check(con_for, case_dir, name, formatter, update):
    """Runs queries/<name>.sql and compares with .csv / .err. con_for(name) -> connection
    (or raises: an expected-error query may fail on loading)."""
    base = os.path.join(case_dir, "queries", name)
    sql = open(base + ".sql").read()
    if os.path.exists(base + ".err"):
        want = open(base + ".err").read().strip()
        with pytest.raises(Exception) as e:
            con_for(name).execute(sql).fetchall()
        assert want in str(e.value)
        return
    got = to_csv(con_for(name).execute(sql), formatter)
    if update or not os.path.exists(base + ".csv"):
        with open(base + ".csv", "w") as f:
            f.write(got)
        return
    assert got == open(base + ".csv").read(), f"{base}.sql: output differs from {base}.csv"


# ---------------------------------------------------------------- text-fixture cases
def build_case(case_dir, tmp):
    run = os.path.join(tmp, "run")
    os.makedirs(run)
    if os.path.exists(os.path.join(case_dir, "events.txt")):
        write_run(os.path.join(case_dir, "events.txt"), run)
    for f in os.listdir(case_dir):
        for prefix, target in (("host_", "host.json"), ("metadata_", os.path.join("parquet", "metadata.json"))):
            if f.startswith(prefix) and f.endswith(".json"):
                dst = os.path.join(run, f[len(prefix):-5], target)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                with open(os.path.join(case_dir, f)) as src, open(dst, "w") as out:
                    out.write(src.read())
    return run


# session-scoped: a worker that runs other modules between two cases keeps its case loaded
@pytest.fixture(scope="session")
def sql_case(tmp_path_factory):
    cache = {}   # every case kept: text cases are small

    def get(case_dir):
        if case_dir not in cache:
            run = build_case(case_dir, str(tmp_path_factory.mktemp(os.path.basename(case_dir))))
            try:
                cache[case_dir] = views.connect(run)
            except views.RunError as e:
                cache[case_dir] = e
        return cache[case_dir]
    return get


SQL_CASE_DIRS = sorted(os.path.join(SQL_CASES, c) for c in os.listdir(SQL_CASES))


@pytest.mark.parametrize("case_dir", [c for c in SQL_CASE_DIRS if os.path.exists(os.path.join(c, "expect_load_error.txt"))],
                         ids=os.path.basename)
def test_load_error(case_dir, sql_case):
    got = sql_case(case_dir)
    assert isinstance(got, views.RunError), "expected a load error, loaded fine"
    assert open(os.path.join(case_dir, "expect_load_error.txt")).read().strip() in str(got)


@pytest.mark.parametrize("case_dir,name", [q for c in SQL_CASE_DIRS for q in queries(c)],
                         ids=lambda v: os.path.basename(v) if os.sep in str(v) else v)
def test_sql_query(case_dir, name, sql_case, request):
    def con_for(_):
        got = sql_case(case_dir)
        if isinstance(got, Exception):
            raise got
        return got
    check(con_for, case_dir, name, fmt, request.config.getoption("--update-expected"))


# ---------------------------------------------------------------- compare cases (lab fixtures)
@pytest.fixture(scope="session")
def compare_case(fixture_run):
    cache = {}   # one case at a time: tests run case by case, and each holds two runs' tables

    def get(case_dir):
        if case_dir not in cache:
            for old in cache.values():
                if not isinstance(old, Exception):
                    for c in old:
                        if c is not None:
                            c.close()
            cache.clear()
            spec = json.load(open(os.path.join(case_dir, "case.json")))
            try:
                run = fixture_run(spec["run"], hosts=spec.get("hosts"))
                if "base" in spec:
                    base = spec["base"] if spec["base"].startswith("/") else fixture_run(spec["base"], hosts=spec.get("hosts"))
                    cache[case_dir] = compare_load.compare_connection(base, run, keep_run=True, cache=True)
                else:
                    cache[case_dir] = (None, views.connect(run, interference=True))
            except Exception as e:  # noqa: BLE001 - an expected-error case fails here
                cache[case_dir] = e
        return cache[case_dir]
    return get


def plain(v):
    return "" if v is None else v


COMPARE_CASE_DIRS = sorted(os.path.join(COMPARE_CASES, c) for c in os.listdir(COMPARE_CASES))


@pytest.mark.parametrize("case_dir,name", [q for c in COMPARE_CASE_DIRS for q in queries(c)],
                         ids=lambda v: os.path.basename(v) if os.sep in str(v) else v)
def test_compare_query(case_dir, name, compare_case, request):
    def con_for(qname):
        got = compare_case(case_dir)
        if isinstance(got, Exception):
            raise got
        return got[1] if qname.startswith("run__") else got[0]
    check(con_for, case_dir, name, plain, request.config.getoption("--update-expected"))
