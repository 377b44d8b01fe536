"""The fleet's tables in Apache Iceberg (through pyiceberg): their columns, the catalog that
holds them, and the one way rows are written: a run's rows replace that run's rows (an
overwrite filtered on run_id, one Iceberg commit per table), retried from the table's new
state when another ingest committed first (Iceberg's optimistic concurrency).

A run becomes visible when its `runs` rows commit, which is last (COMMIT_ORDER): a reader
(sql/fleet/report.sql, `fleet sql`'s views) counts only the runs in `runs`, so an ingest killed
half-way leaves nothing visible, and the next ingest of that run replaces what it wrote."""
import os
import random
import time
import warnings

import pyarrow as pa

NAMESPACE = "ntscope"
COMMIT_ORDER = ("io", "stage_hist", "verdicts", "runs")
COMMIT_ATTEMPTS = 30

# Column contracts (sql/fleet/run_rows.sql's views give the rows; documented there).
SCHEMAS = {
    "runs": pa.schema([
        ("run_id", pa.string()), ("run_name", pa.string()), ("host", pa.string()), ("role", pa.string()),
        ("hostname", pa.string()), ("kernel_release", pa.string()), ("mode", pa.string()),
        ("trace_clock", pa.string()), ("start_utc", pa.timestamp("us")), ("end_utc", pa.timestamp("us")),
        ("duration_s", pa.float64()), ("events", pa.int64()), ("lost_events", pa.int64()),
        ("ios", pa.int64()), ("outages", pa.int64()), ("capture", pa.string()), ("ntscope_version", pa.string()),
        ("ingested_utc", pa.timestamp("us")), ("run_dir", pa.string())]),
    "io": pa.schema([
        ("run_id", pa.string()), ("day", pa.date32()), ("submit_utc", pa.timestamp("us")),
        ("initiator_host", pa.string()), ("target_host", pa.string()), ("tenant", pa.string()), ("class", pa.string()),
        ("cgroup", pa.string()), ("namespace", pa.string()), ("path", pa.string()), ("disk", pa.string()),
        ("io_type", pa.string()), ("size_bytes", pa.int64()), ("qid", pa.int64()), ("cpu", pa.int64()),
        ("comm", pa.string()), ("match_state", pa.string()), ("status", pa.int64()), ("attempts", pa.int64()),
        ("end_to_end_ns", pa.int64()), ("io_id", pa.string())]),
    "stage_hist": pa.schema([
        ("run_id", pa.string()), ("day", pa.date32()), ("initiator_host", pa.string()), ("target_host", pa.string()),
        ("tenant", pa.string()), ("class", pa.string()), ("stage_set", pa.string()), ("stage", pa.string()),
        ("minute", pa.timestamp("us")), ("bucket", pa.int32()), ("count", pa.int64())]),
    "verdicts": pa.schema([
        ("run_id", pa.string()), ("kind", pa.string()), ("subject", pa.string()), ("severity", pa.string()),
        ("value", pa.string()), ("detail", pa.string())]),
}
# partitioned by identity on these columns (io: a day's and a target's files apart)
PARTITIONS = {"io": ("day", "target_host"), "stage_hist": ("day",), "runs": (), "verdicts": ()}
# Every commit adds a manifest, a snapshot and a metadata file: unmerged, a run's commit read
# and wrote lists that grow with the fleet (0.27 s for the first runs, 2.8 s after 300). Kept
# bounded: manifests merged once there are MERGE_AT, old metadata files deleted, and the
# snapshots beyond the newest KEEP_SNAPSHOTS expired after every EXPIRE_EVERY commits (expire()).
TABLE_PROPERTIES = {"commit.manifest-merge.enabled": "true", "commit.manifest.min-count-to-merge": "8",
                    "write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "10"}
KEEP_SNAPSHOTS = 10
EXPIRE_EVERY = 10


def default_catalog_props(warehouse):
    """The embedded default: a SQLite catalog file and a local warehouse folder, both in WAREHOUSE."""
    os.makedirs(warehouse, exist_ok=True)
    path = os.path.abspath(warehouse)
    return {"type": "sql", "uri": f"sqlite:///{os.path.join(path, 'catalog.db')}", "warehouse": f"file://{path}"}


def open_catalog(warehouse=None, props=None):
    """The fleet's catalog: PROPS (any pyiceberg catalog: type rest / sql / hive / glue, uri,
    warehouse, credentials) when given, else the embedded default in WAREHOUSE. Its tables exist
    once this returns."""
    from pyiceberg.catalog import load_catalog
    catalog = load_catalog("ntscope", **(props or default_catalog_props(warehouse)))
    ensure_tables(catalog)
    return catalog


def ensure_tables(catalog):
    """Creates the namespace and any missing table (with its partition spec); two processes
    creating them at once: the loser finds the winner's."""
    from pyiceberg.exceptions import NamespaceAlreadyExistsError, TableAlreadyExistsError
    try:
        catalog.create_namespace(NAMESPACE)
    except NamespaceAlreadyExistsError:
        pass
    for name, schema in SCHEMAS.items():
        ident = f"{NAMESPACE}.{name}"
        if catalog.table_exists(ident):
            continue
        try:
            table = catalog.create_table(ident, schema=schema, properties=TABLE_PROPERTIES)
        except TableAlreadyExistsError:
            continue
        if PARTITIONS[name]:
            with table.update_spec() as spec:
                for col in PARTITIONS[name]:
                    spec.add_identity(col)


def as_table_rows(name, rows):
    """ROWS (a pyarrow Table from a run_rows view) in the table's column order and types."""
    schema = SCHEMAS[name]
    return pa.table([rows.column(f.name).cast(f.type) if f.name in rows.column_names
                     else pa.nulls(rows.num_rows, f.type) for f in schema], schema=schema)


def replace_run(catalog, name, run_id, rows):
    """Replace RUN_ID's rows of table NAME by ROWS in one commit; retried (fresh table state,
    growing random backoff) while another writer commits first."""
    from pyiceberg.exceptions import CommitFailedException
    from pyiceberg.expressions import EqualTo
    rows = as_table_rows(name, rows)
    for attempt in range(COMMIT_ATTEMPTS):
        table = catalog.load_table(f"{NAMESPACE}.{name}")
        try:
            with warnings.catch_warnings():   # a run ingested the first time has no rows to delete
                warnings.filterwarnings("ignore", message="Delete operation did not match any records")
                if rows.num_rows:
                    table.overwrite(rows, overwrite_filter=EqualTo("run_id", run_id))
                else:   # nothing to add: only the run's old rows go
                    table.delete(EqualTo("run_id", run_id))
            return attempt
        except CommitFailedException:
            if attempt == COMMIT_ATTEMPTS - 1:
                raise
            time.sleep(min(2.0, 0.05 * 2 ** attempt) * random.random())


def commit_run(catalog, run_id, tables):
    """A run's four tables, runs last (COMMIT_ORDER). Returns the commit retries it took."""
    return sum(replace_run(catalog, name, run_id, tables[name]) for name in COMMIT_ORDER)


def expire(catalog, keep=KEEP_SNAPSHOTS):
    """Expire every table's snapshots but the newest KEEP (time travel keeps that many commits;
    the data files of the current snapshot are untouched). Another writer's commit in between:
    left for the next call."""
    from pyiceberg.exceptions import CommitFailedException
    for name in COMMIT_ORDER:
        table = catalog.load_table(f"{NAMESPACE}.{name}")
        current = table.current_snapshot()
        old = [s.snapshot_id for s in sorted(table.snapshots(), key=lambda s: s.timestamp_ms)[:-keep]
               if current is None or s.snapshot_id != current.snapshot_id]
        if old:
            try:
                table.maintenance.expire_snapshots().by_ids(old).commit()
            except CommitFailedException:
                pass
