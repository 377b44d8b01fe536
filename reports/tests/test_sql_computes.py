"""SQL computes, reports render: no module of reports/ aggregates rows itself. Read from each
module's AST (nothing imported): a call of sum(), statistics.* or a mean/median function, or
SQL text holding an aggregate (count, sum, avg, min, max, quantile, median, stddev ...) written
in Python, is a violation unless ALLOWED names it with why. A number a report prints then
always has a view behind it (sql/REFERENCE.md) and a diff test on its SQL."""
import ast
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AGGREGATING_CALLS = {"sum", "mean", "fmean", "median", "pstdev", "stdev", "variance"}
SQL_AGGREGATE = re.compile(r"\b(sum|avg|min|max|arg_?max|arg_?min|quantile\w*|median|stddev\w*|var_\w+|"
                           r"approx_\w+)\s*\(", re.I)
SQL_WORDS = re.compile(r"\b(SELECT|FROM|WHERE|GROUP BY)\b")
# (module path, function) -> why it may: SQL written in Python that asks a view for one value the
# code needs to run (a bound, a count of rows to write), not a number a report prints
ALLOWED = {
    ("reports/report/export.py", "stage_parts"): "the io_n range and row count that cut the per-I/O export into "
                                                 "parts (row groups), not a number a report prints",
    ("reports/report/selection.py", "apply"): "the run's length, said in the message of a --window past its end",
    ("reports/timeline/perfetto_trace.py", "parts"): "cuts of the timeline's sort into parts of about N I/Os",
    ("reports/timeline/perfetto_trace.py", "encode"): "the next free track id for the encoder's lanes",
    ("reports/fleet/command.py", "cmd_ingest"): "the ingest's closing status line: the I/Os its runs' tasks returned",
    ("reports/fleet/tables.py", "commit_run"): "the commit retries a run took, said on its progress line",
}


def functions_of(tree):
    """{node: name of the function (or class) it is in, '' at module level}."""
    owner = {}

    def walk(node, name):
        for child in ast.iter_child_nodes(node):
            here = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and not name else name
            owner[child] = here
            walk(child, here)
    walk(tree, "")
    return owner


def aggregations(repo):
    """[(module path, function, line, what)] of every aggregation written in reports/'s Python."""
    found = []
    for folder, dirs, files in os.walk(os.path.join(repo, "reports")):
        # (tests check numbers; a bench folder measures the code, its medians are its own figures)
        dirs[:] = [d for d in dirs if d not in ("tests", "bench")]
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            path = os.path.join(folder, f)
            rel = os.path.relpath(path, repo)
            tree = ast.parse(open(path).read(), path)
            owner = functions_of(tree)
            for node in ast.walk(tree):
                what = None
                if isinstance(node, ast.Call):
                    fn = node.func
                    name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else None
                    if name in AGGREGATING_CALLS:
                        what = f"{name}() in Python"
                elif isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL_WORDS.search(node.value):
                    m = SQL_AGGREGATE.search(node.value)
                    if m:
                        what = f"SQL {m.group(1)}() in Python"
                if what:
                    found.append((rel, owner.get(node, ""), node.lineno, what))
    return found


def violations(repo):
    return [f"{rel}:{line}: {what} in {fn or 'module level'}" for rel, fn, line, what in aggregations(repo)
            if (rel, fn) not in ALLOWED]


def test_reports_render_and_sql_computes():
    found = violations(REPO)
    assert not found, ("reports/ computes what a view should (move it into sql/NAME/*.sql, or say in ALLOWED why "
                       "it is no printed number):\n" + "\n".join(found))


def test_every_allowance_is_still_needed():
    used = {(rel, fn) for rel, fn, _, _ in aggregations(REPO)}
    assert set(ALLOWED) <= used, f"allowances nothing needs any more: {sorted(set(ALLOWED) - used)}"


def test_a_planted_aggregation_is_found(tmp_path):
    os.makedirs(tmp_path / "reports" / "x" / "tests")
    (tmp_path / "reports" / "x" / "render_text.py").write_text(
        "def line(rows):\n"
        "    return f'avg {sum(r[1] for r in rows) / len(rows)}'\n"
        "def q(con):\n"
        "    return con.execute('SELECT avg(dur) FROM io').fetchone()\n"
        "def width(rows):\n"
        "    return max(len(r) for r in rows)\n")
    (tmp_path / "reports" / "x" / "tests" / "test_x.py").write_text("T = sum([1, 2])\n")
    assert violations(str(tmp_path)) == [
        "reports/x/render_text.py:2: sum() in Python in line",
        "reports/x/render_text.py:4: SQL avg() in Python in q",
    ]
