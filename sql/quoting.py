"""Values and names as SQL text: string and integer literals, quoted identifiers, and paths
DuckDB takes literally. Names from runs and trace files are data: every one that reaches SQL
text goes through here."""
import re


def sql_str(s):
    """A string literal."""
    return "'" + str(s).replace("'", "''") + "'"


def sql_int(v):
    """An integer (or None: NULL) as SQL text."""
    return "NULL" if v is None else str(int(v))


def sql_ident(s):
    """A quoted identifier (column names come from trace files)."""
    return '"' + str(s).replace('"', '""') + '"'


def duckdb_literal_path(path):
    """DuckDB globs every path it reads; escape *, ? and [ so the path is taken literally
    (a run named r[1] must not read run r1)."""
    return re.sub(r"([*?\[])", r"[\1]", path)
