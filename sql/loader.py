"""The SQL module loader (ntscope.sql.loader): one rule for every caller.

A module is one file of sql/: its name is its path under sql/ without `.sql` (core/stages =
sql/core/stages.sql). Its first lines are a header the loader reads:

    -- requires: core/stages, report/reports   modules whose relations it reads (or: none)
    -- input: NAME[, NAME ...]  what it is    a relation the caller supplies
    -- loaded: with every run                 on every run's connection (views.RUN_MODULES)
    -- loaded: with interference              there too when interference is asked for

An `input:` line naming a relation the file itself creates makes the file that input's
default: the file creates that one relation and nothing else, and when the caller passes a
value the loader creates the relation from it instead (input_sql). An `input:` line naming
a relation the file does not create is one the caller makes before loading (the run's raw
views, compare's sides); `<` in a name (raw_<system>) names a family. A module whose tables
are filled in batches says how:

    -- each: SELECT DISTINCT batch FROM t ORDER BY batch   rows, after the file ran
    -- run each: INSERT INTO u FROM u_batch(?)           run once per row, its columns as ?

load(con, modules, inputs) resolves the requires transitively, orders them (each module after
what it requires, in the order they are named), and runs each module once per connection; a
module loaded again with an input of another value is run again with every loaded module
that depends on it. script(modules) is the same order as text, with the inputs' defaults.
"""
import os
import re
import weakref

SQL_DIR = os.path.dirname(os.path.abspath(__file__))
# folders (at any depth) that hold no modules: diff tests, benchmarks
NOT_MODULES = ("tests", "bench")
HEADER = re.compile(r"^--\s*(requires|input|each|run each|loaded):\s*(.*?)\s*$")
# `-- loaded:` values: which connections a module is loaded on without a caller naming it (a
# module says so itself, so no list of an analysis' modules is kept anywhere else)
LOADED_ON = ("with every run", "with interference")
NAMES = re.compile(r"^\s*([A-Za-z_][\w<>]*(?:\s*,\s*[A-Za-z_][\w<>]*)*)")
CREATE = re.compile(r"^\s*CREATE\s+OR\s+REPLACE\s+(?:TEMP\s+|TEMPORARY\s+)?(VIEW|TABLE|MACRO)\s+(?:TABLE\s+)?"
                    r"([A-Za-z_][A-Za-z0-9_]*)", re.I | re.M)


class ModuleError(Exception):
    """A module that cannot be loaded: a missing module, a cycle, a bad header or input."""


class Module:
    """One SQL file: name, path, text, requires, inputs (names the caller supplies), default
    (the input it is the default of, or None), each / run_each (its batch fill), loaded (the
    connections it is loaded on unasked: one of LOADED_ON, or None)."""

    def __init__(self, name, path):
        self.name, self.path = name, path
        with open(path) as f:
            self.text = f.read()
        self.requires, self.inputs = [], []
        self.each = self.run_each = self.loaded = None
        for line in self.text.split("\n"):
            m = HEADER.match(line)
            if not m:
                break
            key, value = m.groups()
            if key == "requires":
                self.requires += [r.strip() for r in value.split(",") if r.strip() and r.strip() != "none"]
            elif key == "input":
                names = NAMES.match(value)
                if not names:
                    raise ModuleError(f"{path}: `-- input: {value}` names no relation; fix: `-- input: NAME  what it is`")
                self.inputs += [n.strip() for n in names.group(1).split(",")]
            elif key == "each":
                self.each = value
            elif key == "loaded":
                if value not in LOADED_ON:
                    raise ModuleError(f"{path}: `-- loaded: {value}` is not one of: {', '.join(LOADED_ON)}; fix: one of "
                                      "those, or no `-- loaded:` line (the module loads when a caller or a module "
                                      "that requires it asks)")
                self.loaded = value
            else:
                self.run_each = value
        if not self.text.startswith("-- requires:"):
            raise ModuleError(f"{path}: the file does not start with its `-- requires:` line; fix: start it with "
                              f"`-- requires: MODULE, ...` (or `-- requires: none`), see sql/README.md")
        if (self.each is None) != (self.run_each is None):
            raise ModuleError(f"{path}: `-- each:` and `-- run each:` go together; fix: give both or neither")
        self.creates = [(k.upper(), n) for k, n in CREATE.findall(self.text)]
        made = {n for _, n in self.creates}
        own = [n for n in self.inputs if n in made]
        if own and (len(own) > 1 or len(made) > 1):
            raise ModuleError(f"{path}: the default of input {own[0]} creates {', '.join(sorted(made))}; fix: an "
                              f"input's file creates that relation only (move the others into a module that requires it)")
        self.default = own[0] if own else None

    def default_query(self):
        """(kind, query) of the input's default statement: CREATE OR REPLACE KIND NAME AS query;"""
        m = re.search(r"CREATE\s+OR\s+REPLACE\s+(VIEW|TABLE)\s+" + self.default + r"\s+AS\s+(.*?);?\s*$", self.text,
                      re.I | re.S)
        return (m.group(1).upper(), m.group(2)) if m else (self.creates[0][0], None)


def module_path(name):
    return os.path.join(SQL_DIR, *name.split("/")) + ".sql"


_CACHE = {}


def modules(sql_dir=None):
    """{name: Module} of every .sql file under sql/ (tests/ and bench/ left out)."""
    sql_dir = sql_dir or SQL_DIR
    found = {}
    for root, dirs, files in os.walk(sql_dir):
        dirs[:] = sorted(d for d in dirs if d not in NOT_MODULES and not d.startswith((".", "_")))
        for f in sorted(files):
            if f.endswith(".sql"):
                path = os.path.join(root, f)
                name = os.path.relpath(path, sql_dir)[:-len(".sql")].replace(os.sep, "/")
                found[name] = path
    key = (sql_dir, tuple((n, os.stat(p).st_mtime_ns, os.stat(p).st_size) for n, p in found.items()))
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = {n: Module(n, p) for n, p in found.items()}
    return _CACHE[key]


def loaded_with(when, mods=None):
    """The modules whose header says `-- loaded: WHEN` (LOADED_ON), by name."""
    mods = modules() if mods is None else mods
    return tuple(sorted(n for n, m in mods.items() if m.loaded == when))


def folders(mods=None):
    """The folders of the modules (core, then the analyses), each after the folders its modules
    require; among those ready, a run's own first (a module `-- loaded: with every run`, then
    with interference, then the rest), then the one needing fewer folders, then by name."""
    mods = modules() if mods is None else mods
    need, loaded = {}, {}
    for n, m in mods.items():
        folder = n.split("/")[0]
        need.setdefault(folder, set()).update(r.split("/")[0] for r in resolve([n], mods))
        rank = LOADED_ON.index(m.loaded) if m.loaded else len(LOADED_ON)
        loaded[folder] = min(loaded.get(folder, rank), rank)
    order = []
    while len(order) < len(need):
        ready = [f for f in need if f not in order and need[f] - {f} <= set(order)]
        if not ready:
            raise ModuleError("the SQL folders require each other in a cycle: " + ", ".join(sorted(set(need) - set(order))))
        order.append(min(ready, key=lambda f: (f != "core", loaded[f], len(need[f]), f)))
    return order


def input_modules(mods):
    """{input relation: module name} of the inputs with a default."""
    return {m.default: n for n, m in mods.items() if m.default}


def resolve(wanted, mods=None):
    """The modules WANTED needs, each after what it requires, in the order named (a DFS): a
    list of names. ModuleError on a module that does not exist or a cycle."""
    mods = modules() if mods is None else mods
    order, done, path = [], set(), []

    def visit(name, needed_by):
        if name in done:
            return
        if name in path:
            cycle = path[path.index(name):] + [name]
            raise ModuleError("the SQL modules require each other in a cycle: " + " -> ".join(cycle) + " ("
                              + ", ".join(os.path.relpath(mods[n].path, SQL_DIR) for n in cycle[:-1])
                              + "); fix: move what both need into a module of its own that both require")
        if name not in mods:
            where = f"{os.path.relpath(mods[needed_by].path, SQL_DIR)} requires" if needed_by else "the caller asks for"
            raise ModuleError(f"{where} SQL module {name!r}, which does not exist (no file sql/{name}.sql); "
                              f"fix: name one of {', '.join(sorted(mods))}")
        path.append(name)
        for r in mods[name].requires:
            visit(r, name)
        path.pop()
        done.add(name)
        order.append(name)

    for w in wanted:
        visit(w, None)
    return order


def script(wanted, mods=None):
    """[(module name, text)] of WANTED and what it requires, in load order, inputs at their
    defaults (the DuckDB shell's init script, the SQL of `ntscope sql --script`)."""
    mods = modules() if mods is None else mods
    out = []
    for name in resolve(wanted, mods):
        m = mods[name]
        if m.each:
            raise ModuleError(f"module {name} fills its tables in batches (-- each:), which a script cannot; "
                              f"fix: load it with loader.load on a connection")
        out.append((name, m.text))
    return out


# What each connection has loaded: {module name: the value of its input (None: the default)}
LOADED = weakref.WeakKeyDictionary()


def loaded(con):
    return dict(LOADED.get(con, {}))


def load(con, wanted, inputs=None, after_each=None, mods=None):
    """Runs WANTED and the modules they require on CON, each once; INPUTS: {input relation:
    value} (input_sql says which values). A module already loaded is not run again unless an
    input it depends on changes value: then that input and every loaded module that depends on
    it run again, in order. after_each(con) runs after each module (views.compress_tables)."""
    mods = modules() if mods is None else mods
    inputs = dict(inputs or {})
    by_input = input_modules(mods)
    for rel in inputs:
        if rel not in by_input:
            raise ModuleError(f"no SQL module declares input {rel!r} with a default; fix: one of "
                              f"{', '.join(sorted(by_input))}")
    state = LOADED.setdefault(con, {})
    targets = list(wanted) + [by_input[r] for r in inputs]
    order = resolve(list(state) + targets, mods)
    changed = {by_input[r] for r, v in inputs.items() if by_input[r] not in state or state[by_input[r]] != v}
    stale = set()
    for name in order:   # dependents come after what they require
        if name in changed or (name in state and any(r in stale or r in changed for r in mods[name].requires)):
            stale.add(name)
    for name in order:
        if name in state and name not in stale:
            continue
        m = mods[name]
        check_inputs(con, m, mods)
        if m.default and m.default in inputs:
            for statement, params in input_sql(con, m, inputs[m.default]):
                con.execute(statement, params)
            state[name] = inputs[m.default]
        else:
            con.execute(m.text)
            state[name] = None
        if m.each:
            for row in con.execute(m.each).fetchall():
                con.execute(m.run_each, list(row))
        if after_each:
            after_each(con)
    return order


def check_inputs(con, m, mods):
    """ModuleError when a relation M takes from the caller is not there."""
    made = {n for _, n in m.creates}
    need = [n for n in m.inputs if n not in made and "<" not in n]
    if not need:
        return
    have = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() UNION ALL "
                                      "SELECT view_name FROM duckdb_views()").fetchall()}
    missing = [n for n in need if n not in have]
    if missing:
        raise ModuleError(f"SQL module {m.name} ({os.path.relpath(m.path, SQL_DIR)}) reads {', '.join(missing)}, "
                          f"which its caller makes (-- input:) and has not made; fix: create it before loading "
                          f"{m.name}")


def input_sql(con, m, value):
    """[(statement, parameters)] that create input module M's relation from VALUE:
    a query (str, or (str, parameters)): the relation as that query, a view or table like the default;
    a list of rows (dicts): the default's table with those rows;
    a dict {column: value}: the default's one row with those columns replaced (cast to its types)."""
    kind, default = m.default_query()
    name = m.default
    if isinstance(value, str) or isinstance(value, tuple):
        query, params = (value, []) if isinstance(value, str) else value
        return [(f"CREATE OR REPLACE {kind} {name} AS {query}", list(params))]
    if isinstance(value, list):
        if kind != "TABLE":
            raise ModuleError(f"input {name} is a view; fix: pass it a query, not rows")
        statements = [(m.text, [])]
        for row in value:
            cols = list(row)
            statements.append((f"INSERT INTO {name} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                               [row[c] for c in cols]))
        return statements
    if isinstance(value, dict):
        if default is None:
            raise ModuleError(f"input {name}: its default is not a query; fix: pass it a query or rows")
        types = {c: t for c, t, *_ in con.execute(f"DESCRIBE {default}").fetchall()}
        unknown = [c for c in value if c not in types]
        if unknown:
            raise ModuleError(f"input {name} has no column {', '.join(unknown)}; fix: one of {', '.join(types)}")
        replace = ", ".join(f"CAST(? AS {types[c]}) AS {c}" for c in value)
        return [(f"CREATE OR REPLACE {kind} {name} AS SELECT * REPLACE ({replace}) FROM ({default})", list(value.values()))]
    raise ModuleError(f"input {name}: {type(value).__name__} is not a query, rows or column values")
