"""The SQL module loader (sql/loader.py): the order it resolves, its errors, its inputs, and a
check that every module of sql/ requires (transitively) each module whose relations it reads."""
import os
import re

import duckdb
import pytest

from ntscope.sql import loader

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
KEYWORDS = {"select", "where", "group", "order", "on", "using", "left", "right", "inner", "outer", "cross", "full",
            "natural", "positional", "asof", "join", "union", "limit", "window", "qualify", "having", "as", "lateral",
            "semi", "anti", "with", "values", "and", "or", "not", "by", "returning", "pivot", "unpivot"}


def tokens(text):
    """The SQL's tokens without its comments: ('id', name), ('str', text) or ('op', char)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == "'":
            j = i + 1
            while j < n and not (text[j] == "'" and not text.startswith("''", j)):
                j += 2 if text.startswith("''", j) else 1
            out.append(("str", text[i + 1:j].replace("''", "'")))
            i = j + 1
        elif c == '"':
            j = text.find('"', i + 1)
            j = n if j < 0 else j
            out.append(("id", text[i + 1:j].lower()))
            i = j + 1
        elif c.isalpha() or c == "_":
            m = IDENT.match(text, i)
            out.append(("id", m.group(0).lower()))
            i = m.end()
        elif c.isspace():
            i += 1
        else:
            out.append(("op", c))
            i += 1
    return out


def created(text):
    """Names of the relations and macros a file creates."""
    return {n.lower() for _, n in loader.CREATE.findall(text)}


def used(text):
    """Names a file reads as a relation or calls as a macro: after FROM / JOIN / INTO (and the
    comma-separated relations of a FROM list), before '(' (a macro), or a name in quotes as a
    call's first argument (query_table('view'), stage_cdf_over('view')); minus the file's own
    CTE names."""
    toks = tokens(text)
    ctes, out = set(), set()
    for k in range(len(toks) - 2):
        kind, v = toks[k]
        if kind == "id" and toks[k + 1] == ("id", "as") and toks[k + 2] in (("op", "("), ("id", "materialized")):
            ctes.add(v)
    for k, (kind, v) in enumerate(toks):
        if (kind == "str" and re.fullmatch(r"[a-z_][a-z0-9_]*", v.lower()) and k >= 2 and toks[k - 1] == ("op", "(")
                and toks[k - 2][0] == "id" and toks[k - 2][1] not in KEYWORDS | {"in"}):
            out.add(v.lower())
        if kind == "id" and k + 1 < len(toks) and toks[k + 1] == ("op", "("):
            out.add(v)
        if kind == "id" and v in ("from", "join", "into"):
            j = k + 1
            while j < len(toks) and toks[j][0] == "id" and toks[j][1] not in KEYWORDS:
                out.add(toks[j][1])
                j += 1
                if j < len(toks) and toks[j] == ("id", "as"):
                    j += 1
                if j < len(toks) and toks[j][0] == "id" and toks[j][1] not in KEYWORDS:
                    j += 1   # an alias
                if j < len(toks) and toks[j] == ("op", ","):
                    j += 1
                    continue
                break
    return out - ctes


def missing_requires(mods):
    """[(module, relation, module that creates it)] for every relation a module reads that
    another module creates without the reader requiring that module (transitively)."""
    creator = {}
    for name, m in mods.items():
        for rel in created(m.text):
            creator.setdefault(rel, name)
    out = []
    for name, m in mods.items():
        closure = set(loader.resolve([name], mods))
        for rel in sorted(used(m.text) - created(m.text)):
            if rel in creator and creator[rel] not in closure:
                out.append((name, rel, creator[rel]))
    return out


def test_every_module_requires_what_it_reads():
    mods = loader.modules()
    assert len(mods) >= 30
    assert missing_requires(mods) == []


def test_no_relation_is_created_by_two_modules():
    seen = {}
    for name, m in loader.modules().items():
        for rel in created(m.text):
            assert rel not in seen, f"{rel} is created by both {seen[rel]} and {name}"
            seen[rel] = name


def test_every_require_is_read():
    """A module requires only modules it reads from (directly): a stale require hides the real order."""
    mods = loader.modules()
    for name, m in mods.items():
        reads = used(m.text)
        for r in m.requires:
            assert created(mods[r].text) & reads, f"{name} requires {r} but reads none of its relations"


def copy_sql(tmp_path, change):
    """sql/'s modules copied into tmp_path, CHANGE(name, text) -> text applied to each."""
    for name, m in loader.modules().items():
        path = tmp_path / (name + ".sql")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(change(name, m.text))
    return str(tmp_path)


def test_the_check_finds_a_module_that_does_not_require_what_it_reads(tmp_path):
    """Planted: report/reports no longer requires core/inflight_bins, whose macro it calls (the
    order would still be right here, by luck of another module's requires)."""
    def drop(name, text):
        if name != "report/reports":
            return text
        return text.replace(", core/inflight_bins,", ",", 1)
    mods = loader.modules(copy_sql(tmp_path, drop))
    assert "core/inflight_bins" not in mods["report/reports"].requires
    assert ("report/reports", "inflight_bins", "core/inflight_bins") in missing_requires(mods)


def write(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / (name + ".sql")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return loader.modules(str(tmp_path))


def test_order_puts_each_module_after_what_it_requires_in_the_order_named(tmp_path):
    mods = write(tmp_path, {
        "x/a": "-- requires: x/c, x/b\n\nCREATE OR REPLACE VIEW a AS FROM b, c;\n",
        "x/b": "-- requires: x/c\n\nCREATE OR REPLACE VIEW b AS FROM c;\n",
        "x/c": "-- requires: none\n\nCREATE OR REPLACE TABLE c AS SELECT 1 AS v;\n",
        "y/d": "-- requires: x/b\n\nCREATE OR REPLACE VIEW d AS FROM b;\n"})
    assert loader.resolve(["x/a"], mods) == ["x/c", "x/b", "x/a"]
    assert loader.resolve(["y/d", "x/a"], mods) == ["x/c", "x/b", "y/d", "x/a"]
    assert [n for n, _ in loader.script(["x/a"], mods)] == ["x/c", "x/b", "x/a"]


def test_a_cycle_is_an_error_naming_its_modules_files_and_fix(tmp_path):
    mods = write(tmp_path, {
        "x/a": "-- requires: x/b\n\nSELECT 1;\n",
        "x/b": "-- requires: x/c\n\nSELECT 1;\n",
        "x/c": "-- requires: x/a\n\nSELECT 1;\n"})
    with pytest.raises(loader.ModuleError) as e:
        loader.resolve(["x/a"], mods)
    msg = str(e.value)
    assert "x/a -> x/b -> x/c -> x/a" in msg and "x/b.sql" in msg and "fix:" in msg


def test_a_missing_module_is_an_error_naming_who_requires_it(tmp_path):
    mods = write(tmp_path, {"x/a": "-- requires: x/nope\n\nSELECT 1;\n"})
    with pytest.raises(loader.ModuleError) as e:
        loader.resolve(["x/a"], mods)
    assert "x/a.sql requires SQL module 'x/nope', which does not exist" in str(e.value)
    assert "fix: name one of x/a" in str(e.value)
    with pytest.raises(loader.ModuleError, match="the caller asks for SQL module 'x/b'"):
        loader.resolve(["x/b"], mods)


def test_a_file_without_its_header_is_refused(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "a.sql").write_text("CREATE OR REPLACE VIEW a AS SELECT 1;\n")
    with pytest.raises(loader.ModuleError, match="does not start with its `-- requires:` line"):
        loader.modules(str(tmp_path))


INPUTS = {
    "i/sel": "-- requires: i/base\n-- input: sel  the caller's choice\n\nCREATE OR REPLACE VIEW sel AS FROM base;\n",
    "i/base": "-- requires: none\n\nCREATE OR REPLACE TABLE base AS SELECT range AS v FROM range(5);\n",
    "i/total": "-- requires: i/sel\n\nCREATE OR REPLACE TABLE total AS SELECT count(*) AS n, sum(v) AS s FROM sel;\n",
    "i/rows": "-- requires: none\n-- input: goals  rows\n\nCREATE OR REPLACE TABLE goals (id INTEGER, what VARCHAR);\n",
    "i/knobs": "-- requires: none\n-- input: knobs  values\n\nCREATE OR REPLACE TABLE knobs AS SELECT 10 AS a, 0.5::DOUBLE AS b;\n",
    "i/ext": "-- requires: none\n-- input: outside  made by the caller\n\nCREATE OR REPLACE VIEW ext AS FROM outside;\n",
    "i/batched": "-- requires: i/base\n-- each: SELECT v FROM base WHERE v < 3 ORDER BY v\n"
                 "-- run each: INSERT INTO filled SELECT ? * 10\n\nCREATE OR REPLACE TABLE filled (x INTEGER);\n",
}


def test_inputs_take_the_callers_value_and_dependents_run_again_when_it_changes(tmp_path):
    mods = write(tmp_path, INPUTS)
    con = duckdb.connect()
    assert loader.load(con, ["i/total"], mods=mods) == ["i/base", "i/sel", "i/total"]
    assert con.execute("FROM total").fetchall() == [(5, 10)]
    con.execute("INSERT INTO base VALUES (100)")      # not run again: base keeps the row
    loader.load(con, ["i/total"], mods=mods)
    assert con.execute("SELECT count(*) FROM base").fetchall() == [(6,)]
    assert con.execute("FROM total").fetchall() == [(5, 10)]
    loader.load(con, ["i/total"], {"sel": "FROM base WHERE v >= 3"}, mods=mods)
    assert con.execute("FROM total").fetchall() == [(3, 107)]   # total recomputed over the new sel
    assert con.execute("SELECT count(*) FROM base").fetchall() == [(6,)]
    assert loader.loaded(con)["i/sel"] == "FROM base WHERE v >= 3"
    loader.load(con, ["i/rows"], {"goals": [{"id": 1, "what": "it's"}, {"what": "two", "id": 2}]}, mods=mods)
    assert con.execute("FROM goals ORDER BY id").fetchall() == [(1, "it's"), (2, "two")]
    loader.load(con, ["i/knobs"], {"knobs": {"a": 7}}, mods=mods)
    assert con.execute("FROM knobs").fetchall() == [(7, 0.5)]
    assert con.execute("SELECT typeof(a) FROM knobs").fetchall() == [("INTEGER",)]
    with pytest.raises(loader.ModuleError, match="no column c"):
        loader.load(con, ["i/knobs"], {"knobs": {"c": 1}}, mods=mods)
    with pytest.raises(loader.ModuleError, match="no SQL module declares input 'nope'"):
        loader.load(con, ["i/total"], {"nope": "SELECT 1"}, mods=mods)


def test_an_input_the_caller_makes_must_exist_before(tmp_path):
    mods = write(tmp_path, INPUTS)
    con = duckdb.connect()
    with pytest.raises(loader.ModuleError, match=r"reads outside, which its caller makes .* fix: create it"):
        loader.load(con, ["i/ext"], mods=mods)
    con.execute("CREATE VIEW outside AS SELECT 1 AS one")
    loader.load(con, ["i/ext"], mods=mods)
    assert con.execute("FROM ext").fetchall() == [(1,)]


def test_a_batched_module_runs_its_statement_once_per_row(tmp_path):
    mods = write(tmp_path, INPUTS)
    con = duckdb.connect()
    loader.load(con, ["i/batched"], mods=mods)
    assert con.execute("FROM filled ORDER BY x").fetchall() == [(0,), (10,), (20,)]
    with pytest.raises(loader.ModuleError, match="a script cannot"):
        loader.script(["i/batched"], mods)


def test_an_input_default_creates_only_its_input(tmp_path):
    with pytest.raises(loader.ModuleError, match="creates only that relation|creates that relation only"):
        write(tmp_path, {"x/a": "-- requires: none\n-- input: a  x\n\nCREATE OR REPLACE VIEW a AS SELECT 1;\n"
                                "CREATE OR REPLACE VIEW b AS SELECT 2;\n"})


def test_the_real_inputs_have_defaults_and_callers_modules_exist():
    from ntscope.sql import views
    mods = loader.modules()
    assert set(loader.input_modules(mods)) == {"report_selection", "timeline_stage_set", "slo_objectives", "cmp_params", "tenant_rules",
                                                   "class_objectives", "fleet_params"}
    for wanted in (views.RUN_MODULES, views.INTERFERENCE_MODULES, views.SELECTION_MODULES):
        loader.resolve(wanted, mods)
    assert os.path.isfile(loader.module_path("core/stages"))
