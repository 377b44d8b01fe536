"""`ntscope sql RUN -c SQL` / statements on stdin: SQL statements run in order, each result printed as
CSV."""
import sys

from ntscope.sql.guards import refusal_hint
from ntscope.sql.interrupts import query_interrupted


def statement_fix(message):
    """The fix printed under a failed statement's DuckDB error."""
    hint = refusal_hint(message)
    if hint:
        return hint
    if message.startswith("Parser Error"):
        return "correct the statement's syntax (DuckDB's SQL reference: https://duckdb.org/docs/sql/introduction)"
    if message.startswith("Catalog Error"):
        return "SHOW TABLES lists the run's views and tables, sql/REFERENCE.md what each holds"
    if message.startswith("Binder Error"):
        return "DESCRIBE <view> lists a view's columns (sql/REFERENCE.md: every view, column and unit)"
    return "check the statement against sql/REFERENCE.md (every view, column and unit)"


def run_script(con, text, out=sys.stdout):
    """Runs SQL statements in order; prints each result as CSV. Exit 0, or 2 at the first
    statement that fails (its error on stderr)."""
    import csv
    writer = csv.writer(out, lineterminator="\n")
    try:
        statements = con.extract_statements(text)
    except Exception as e:  # noqa: BLE001
        print(f"ntscope sql: error: {str(e).strip()}\nfix: {statement_fix(str(e))}", file=sys.stderr)
        return 2
    for i, st in enumerate(statements, 1):
        try:
            cur = con.execute(st)
            if cur.description:
                writer.writerow([d[0] for d in cur.description])
                for row in cur.fetchall():
                    writer.writerow(["" if v is None else v for v in row])
        except Exception as e:  # noqa: BLE001
            if query_interrupted(e):
                raise KeyboardInterrupt from None   # Ctrl-C: the command exits 130, not a failed statement
            print(f"ntscope sql: error in statement {i}: {str(e).strip()}\nfix: {statement_fix(str(e))}",
                  file=sys.stderr)
            return 2
    return 0
