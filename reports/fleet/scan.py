"""The fleet's Iceberg tables as DuckDB relations: pyiceberg plans each table's scan (the
current snapshot's data files, pruned by a row filter when one is given) and DuckDB reads
those Parquet files (fleet_runs, fleet_io, fleet_stage_hist, fleet_verdicts: what
sql/fleet/report.sql and `ntscope fleet sql` read). Nothing is copied: the io table of a large
fleet is read where it lies. Only the visible runs count: the other tables' rows of a run whose
`runs` rows are not committed are left out (tables.py: COMMIT_ORDER).

A data file with delete files attached (written by another engine's merge-on-read) cannot be
read as plain Parquet: such a table is scanned by pyiceberg into Arrow instead."""
from ntscope.sql.quoting import sql_str

from . import tables

RELATIONS = {"runs": "fleet_runs", "io": "fleet_io", "stage_hist": "fleet_stage_hist", "verdicts": "fleet_verdicts"}


def local_path(uri):
    """A data file's location as DuckDB reads it: file:// stripped; other schemes as they are
    (s3://, gs://: DuckDB's httpfs reads them when loaded)."""
    return uri[len("file://"):] if uri.startswith("file://") else uri


def columns_sql(name):
    """An empty relation with the table's columns (a table without data files yet)."""
    duck = {"string": "VARCHAR", "int64": "BIGINT", "int32": "INTEGER", "double": "DOUBLE", "date32[day]": "DATE",
            "timestamp[us]": "TIMESTAMP"}
    return "SELECT " + ", ".join(f"NULL::{duck[str(f.type)]} AS \"{f.name}\"" for f in tables.SCHEMAS[name]) + " WHERE false"


def table_sql(catalog, name, row_filter=None):
    """(SQL of the table's rows, None) or (None, pyarrow.Table) when it must be scanned by pyiceberg."""
    table = catalog.load_table(f"{tables.NAMESPACE}.{name}")
    scan = table.scan(row_filter=row_filter) if row_filter is not None else table.scan()
    tasks = list(scan.plan_files())
    if any(t.delete_files for t in tasks):
        return None, scan.to_arrow()
    if not tasks:
        return columns_sql(name), None
    files = ", ".join(sql_str(local_path(t.file.file_path)) for t in tasks)
    # union_by_name: files written before a column was added lack it (NULL)
    return f"SELECT * FROM read_parquet([{files}], union_by_name = true)", None


def script(catalog, row_filter=None):
    """The SQL that creates the four relations (for the DuckDB shell's -init, or a connection),
    and {relation: Arrow table} of those that need registering first."""
    parts, arrow = [], {}
    for name, rel in RELATIONS.items():
        sql, data = table_sql(catalog, name, row_filter if name in ("io", "stage_hist") else None)
        if data is not None:
            arrow[f"{rel}_data"] = data
            sql = f"SELECT * FROM {rel}_data"
        src = rel if name == "runs" else f"{rel}_all"
        parts.append(f"CREATE OR REPLACE VIEW {src} AS {sql};")
    for name, rel in RELATIONS.items():
        if name != "runs":
            parts.append(f"CREATE OR REPLACE VIEW {rel} AS SELECT * FROM {rel}_all "
                         "WHERE run_id IN (SELECT run_id FROM fleet_runs);")
    return "\n".join(parts) + "\n", arrow


def register(con, catalog, row_filter=None):
    """The four relations on CON."""
    text, arrow = script(catalog, row_filter)
    for rel, data in arrow.items():
        con.register(rel, data)
    con.execute(text)
