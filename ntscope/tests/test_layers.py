"""The package's layers, read from every module's imports (ast, nothing imported):

    ntscope/*.py  the front door (the CLI and what only it uses)
    reports/      ntscope.reports: renderers; may import sql/ and the lower layer
    sql/          ntscope.sql: the views and their loader; may import the lower layer
    ntscope/common/  the lower layer: imports nothing of ntscope but itself

`ntscope` itself (its __init__: the version) is below all of them and imports nothing. Only the
installed packages count (folders with an __init__.py): tests/ and bench/ folders are not
layers. And module path = file path: pyproject lists exactly the folders that are packages."""
import ast
import os
import shutil
import tomllib

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# top-level folder -> the package it is (pyproject's package-dir)
ROOTS = {"ntscope": "ntscope", "sql": "ntscope.sql", "reports": "ntscope.reports"}
# layer -> the layers it must not import
FORBIDDEN = {"common": {"front", "sql", "reports"}, "sql": {"front", "reports"}, "reports": {"front"},
             "root": {"front", "common", "sql", "reports"}}


def package_modules(repo):
    """{module name: path} of every .py file in a package folder under the three roots."""
    out = {}
    for top, package in ROOTS.items():
        for folder, dirs, files in os.walk(os.path.join(repo, top)):
            dirs[:] = sorted(d for d in dirs if os.path.isfile(os.path.join(folder, d, "__init__.py")))
            if not os.path.isfile(os.path.join(folder, "__init__.py")):
                continue
            rel = os.path.relpath(folder, os.path.join(repo, top))
            name = package if rel == "." else package + "." + rel.replace(os.sep, ".")
            for f in files:
                if f.endswith(".py"):
                    out[name if f == "__init__.py" else f"{name}.{f[:-3]}"] = os.path.join(folder, f)
    return out


def layer(module):
    if module == "ntscope":
        return "root"
    for prefix, name in (("ntscope.common", "common"), ("ntscope.sql", "sql"), ("ntscope.reports", "reports")):
        if module == prefix or module.startswith(prefix + "."):
            return name
    return "front" if module.startswith("ntscope.") else None


def imported(module, path, modules):
    """(line, module name) of every ntscope module PATH imports, anywhere in it (function
    bodies too); `from P import N` names P.N when that is a module, else P."""
    is_package = path.endswith("__init__.py")
    for node in ast.walk(ast.parse(open(path).read(), path)):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                parts = parts[:len(parts) - node.level + (1 if is_package else 0)]
                base = ".".join(parts + ([node.module] if node.module else []))
            for a in node.names:
                full = f"{base}.{a.name}"
                yield node.lineno, full if full in modules else base


def violations(repo):
    modules = package_modules(repo)
    found = []
    for module, path in sorted(modules.items()):
        mine = layer(module)
        for line, target in imported(module, path, modules):
            if target != "ntscope" and not target.startswith("ntscope."):
                continue
            if layer(target) in FORBIDDEN.get(mine, ()):
                found.append(f"{os.path.relpath(path, repo)}:{line}: {mine} imports {target} ({layer(target)})")
    return found


def test_no_layer_imports_one_above_it():
    assert violations(REPO) == []


def test_pyproject_lists_exactly_the_package_folders():
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as f:
        tool = tomllib.load(f)["tool"]["setuptools"]
    assert tool["package-dir"] == {package: top for top, package in ROOTS.items()}
    folders = sorted({m.rsplit(".", 1)[0] if not p.endswith("__init__.py") else m
                      for m, p in package_modules(REPO).items()})
    assert sorted(tool["packages"]) == folders


def test_a_planted_violation_is_found(tmp_path):
    """The check itself: a copy of the packages with one forbidden import per rule planted."""
    for top in ROOTS:
        shutil.copytree(os.path.join(REPO, top), tmp_path / top, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    assert violations(str(tmp_path)) == []
    plants = {"sql/quoting.py": "from ntscope.reports.report import spec\n",
              "sql/spill.py": "    from ntscope import cli\n",
              "reports/report/model.py": "from ntscope.common import errors\nfrom ntscope.demo import main\n",
              "ntscope/common/cache.py": "from ..sql import views\n",
              "ntscope/common/errors.py": "import ntscope.help_text\n"}
    for rel, text in plants.items():
        with open(tmp_path / rel, "a") as f:
            f.write(("def planted():\n" if text.startswith(" ") else "") + text)
    got = violations(str(tmp_path))
    assert [g.split(":")[0] for g in got] == ["ntscope/common/cache.py", "ntscope/common/errors.py",
                                               "reports/report/model.py", "sql/quoting.py", "sql/spill.py"], got
    assert "sql imports ntscope.reports.report.spec (reports)" in got[3]
    assert "sql imports ntscope.cli (front)" in got[4]
    assert "common imports ntscope.sql.views (sql)" in got[0]
    assert "reports imports ntscope.demo (front)" in got[2]


# sql/'s own tests and benches test the views through sql/'s modules; a test that needs a
# renderer belongs beside it in reports/ (it may build its case with sql/tests' text fixtures,
# ntscope.sql.tests.fixture_from_text). The export bench measures the report's writers: listed,
# so that no other one is added.
SQL_SIDE_ALLOWED = {"sql/bench/bench_export.py"}


def sql_side_reaching_reports(repo):
    """["path:line: module"] of sql/tests and sql/bench files importing ntscope.reports."""
    found = []
    for sub in ("tests", "bench"):
        folder = os.path.join(repo, "sql", sub)
        for f in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            path = os.path.join(folder, f)
            rel = os.path.relpath(path, repo)
            if not f.endswith(".py") or rel in SQL_SIDE_ALLOWED:
                continue
            for line, target in imported("sql_test", path, {}):
                if target.startswith("ntscope.reports"):
                    found.append(f"{rel}:{line}: {target}")
    return found


def test_sql_tests_and_benches_do_not_import_reports(tmp_path):
    assert sql_side_reaching_reports(REPO) == []
    os.makedirs(tmp_path / "sql" / "tests")
    (tmp_path / "sql" / "tests" / "test_x.py").write_text("def t():\n    from ntscope.reports.compare import model\n")
    assert sql_side_reaching_reports(str(tmp_path)) == ["sql/tests/test_x.py:2: ntscope.reports.compare"]
