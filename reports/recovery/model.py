"""recovery.json: the rows of the recovery views (sql/recovery/outages.sql, paths.sql) as one
document; computes nothing."""
from ntscope import __version__
from ntscope.sql.query_rows import rows_of

SCHEMA = "ntscope.recovery/1"


def build(con, run_dir):
    return {
        "schema": SCHEMA,
        "ntscope_version": __version__,
        "run_dir": str(run_dir),
        "recorded": rows_of(con, "SELECT * FROM recovery_recorded ORDER BY host"),
        "outages": rows_of(con, "SELECT * FROM controller_outages ORDER BY host, outage_n"),
        "errors": rows_of(con, "SELECT * FROM command_errors ORDER BY host, ctrl_id, commands DESC, status"),
        "retried_ios": rows_of(con, "SELECT * FROM retried_io_summary ORDER BY host"),
        "paths": rows_of(con, "SELECT * FROM path_summary ORDER BY host, disk, path"),
        "path_events": rows_of(con, "SELECT * FROM path_events ORDER BY ts, host, path"),
        "outputs": {"outages": "outages.parquet", "path_events": "path_events.parquet"},
    }


def eventful(doc):
    """Whether anything went wrong: an outage, a command that failed, or a path's state or use
    changed."""
    return bool(doc["outages"] or doc["errors"] or doc["path_events"])
