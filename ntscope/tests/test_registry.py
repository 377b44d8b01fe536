"""Each analysis is declared once (reports/NAME/analysis.py, reports/registry.py) and every list
of analyses is derived from the declarations: the CLI's commands, the report folder's file
names, analyze's parts, the JSON Schemas, the SQL folders. A list of analyses written by hand
anywhere else (three or more analysis names, commands or module paths in one literal) fails
here, with where it is."""
import argparse
import ast
import os
import tomllib

from ntscope import cli
from ntscope.common import out_folder
from ntscope.reports import registry

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# the sources a hand-written list of analyses would hide in
SCANNED = ("ntscope", "sql", "reports", "tools", "capture/lab", "conftest.py", "pyproject.toml")
# pyproject's package list is the one the packaging needs written out; test_layers.py checks that
# it names exactly the package folders, so a new analysis' folder missing there fails with the fix
ALLOWED = {("pyproject.toml", "tool.setuptools.packages")}


def names_by_analysis():
    """{spelling: analysis}: each analysis' name, command, package and SQL folder prefix."""
    out = {}
    for a in registry.analyses():
        for spelling in (a.name, a.command, f"ntscope.reports.{a.name}"):
            if spelling:
                out[spelling] = a.name
    return out


def analyses_in(strings, spellings):
    """The analyses a list of strings names (a module path sql/NAME/... counts as NAME)."""
    found = set()
    for s in strings:
        if s in spellings:
            found.add(spellings[s])
        elif "/" in s and s.split("/")[0] in spellings and not s.startswith("/"):
            found.add(spellings[s.split("/")[0]])
    return found


def python_lists(path):
    """(line, [strings]) of every tuple, list, set and dict-keys literal in PATH whose items are
    all string constants."""
    tree = ast.parse(open(path).read(), path)
    for node in ast.walk(tree):
        # a dict counts when it is all data (keys and values constants: a table of analyses); a
        # test's {page: its fixture} is no list of analyses
        items = (node.keys if all(isinstance(v, ast.Constant) for v in node.values) else None) if isinstance(node, ast.Dict) \
            else node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else None
        if items and all(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items):
            yield node.lineno, [i.value for i in items]


def toml_lists(doc, prefix=""):
    """(key path, [strings]) of every array of strings (and table's keys) in a TOML document."""
    if isinstance(doc, dict):
        if doc and all(isinstance(k, str) for k in doc):
            yield prefix or "(top)", list(doc)
        for k, v in doc.items():
            yield from toml_lists(v, f"{prefix}.{k}" if prefix else k)
    elif isinstance(doc, list) and doc and all(isinstance(v, str) for v in doc):
        yield prefix, doc


def hand_written_lists(repo, spellings):
    """Where REPO lists three or more analyses by hand: ["path:line: the list"]."""
    found = []
    for entry in SCANNED:
        top = os.path.join(repo, entry)
        paths = [top] if os.path.isfile(top) else [os.path.join(d, f) for d, dirs, files in os.walk(top)
                                                   for f in files if f.endswith(".py")]
        for path in sorted(paths):
            rel = os.path.relpath(path, repo)
            if path.endswith(".toml"):
                with open(path, "rb") as f:
                    lists = list(toml_lists(tomllib.load(f)))
            else:
                lists = list(python_lists(path))
            for where, strings in lists:
                if (rel, where) in ALLOWED:
                    continue
                named = analyses_in(strings, spellings)
                if len(named) >= 3:
                    found.append(f"{rel}:{where}: {sorted(named)} in {strings[:8]}")
    return found


def test_no_list_of_analyses_is_written_by_hand():
    found = hand_written_lists(REPO, names_by_analysis())
    assert not found, ("analyses listed by hand (derive the list from ntscope.reports.registry instead):\n"
                       + "\n".join(found))


def test_a_planted_list_is_found(tmp_path):
    for entry in ("ntscope", "reports"):
        os.makedirs(tmp_path / entry)
    (tmp_path / "reports" / "names.py").write_text('STEMS = ("report", "interference", "sweep")\n')
    (tmp_path / "ntscope" / "mods.py").write_text('MODS = ["report/export", "timeline/timeline", "slo/slo", "core/x"]\n'
                                                  'OK = ("report", "core", "sweep")\n')
    (tmp_path / "pyproject.toml").write_text('[x]\ndata = ["compare/*.sql", "sweep/*.sql", "report/*.sql"]\n')
    found = hand_written_lists(str(tmp_path), names_by_analysis())
    assert sorted(f.split(":")[0:2] for f in found) == [["ntscope/mods.py", "1"], ["pyproject.toml", "x.data"],
                                                        ["reports/names.py", "1"]], found


def test_every_reports_folder_with_a_declaration_is_an_analysis_with_its_sql():
    names = [a.name for a in registry.analyses()]
    declared = sorted(d for d in os.listdir(os.path.join(REPO, "reports"))
                      if os.path.isfile(os.path.join(REPO, "reports", d, "analysis.py")))
    assert sorted(names) == declared and len(names) >= 6
    for name in names:
        assert any(f.endswith(".sql") for f in os.listdir(os.path.join(REPO, "sql", name))), \
            f"analysis {name} has no SQL in sql/{name}/: every number a report prints comes from a view"


def subcommands(parser):
    return {name: p for act in parser._actions if isinstance(act, argparse._SubParsersAction)
            for name, p in act.choices.items()}


def test_the_cli_has_a_command_per_declared_command_with_its_summary():
    subs = subcommands(cli.parser())
    helps = {act.dest: act.help for act in cli.parser()._actions if isinstance(act, argparse._SubParsersAction)
             for act in act._choices_actions}
    for a in registry.analyses():
        if a.command:
            assert a.command in subs, f"{a.name}'s command {a.command} is not on the command line"
            assert helps[a.command] == a.summary
            assert subs[a.command].get_default("fn") == a.command_module().run


def test_analyze_gets_each_parts_flags():
    analyze = subcommands(cli.parser())["analyze"]
    flags = {o for act in analyze._actions for o in act.option_strings}
    assert {"--no-interference", "--no-cache"} <= flags   # interference's and compare's parts
    parts = [a.name for a in registry.in_analyze()]
    assert parts.index("compare") > parts.index("interference")   # compare keeps what interference made
    assert parts[0] == "timeline"   # its encoder starts first and runs beside the rest


def test_the_report_folder_knows_every_file_an_analysis_writes():
    registry.analyses()
    assert out_folder.KNOWN_NAMES[out_folder.REPORT] == set(registry.report_file_names())
    assert {"report.txt", "timeline.perfetto-trace", "sweep.html", "compare.json"} <= out_folder.KNOWN_NAMES[out_folder.REPORT]
    assert "analyze, interference, compare, sweep or fleet" in out_folder.WHO_WRITES[out_folder.REPORT]


def test_every_schema_belongs_to_a_declared_analysis():
    declared = {os.path.basename(a.schema_path()) for a in registry.analyses() if a.schema}
    shipped = set(os.listdir(os.path.join(REPO, "reports", "schemas")))
    assert declared == shipped


def test_an_analysis_with_a_schema_writes_its_json():
    with_schema = [a for a in registry.analyses() if a.schema]
    assert len(with_schema) >= 4
    for a in with_schema:
        assert f"{a.name}.json" in a.writes, f"{a.name} has a schema but writes no {a.name}.json"
