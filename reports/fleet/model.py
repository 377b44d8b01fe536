"""fleet.json: the rows of the fleet report's views (sql/fleet/report.sql) over the fleet's
tables as one document; computes nothing."""
from ntscope import __version__
from ntscope.sql.query_rows import rows_of

SCHEMA = "ntscope.fleet/1"


def build(con, where):
    """The document of the report on CON (the fleet's relations and sql/fleet/report.sql loaded;
    WHERE: the warehouse or catalog, as text)."""
    return {
        "schema": SCHEMA,
        "ntscope_version": __version__,
        "warehouse": where,
        "params": rows_of(con, "SELECT * FROM fleet_params")[0],
        "hist_alpha": rows_of(con, "SELECT fleet_hist_alpha() AS a")[0]["a"],
        "stage_set": (rows_of(con, "SELECT stage_set FROM fleet_stage_set") or [{"stage_set": None}])[0]["stage_set"],
        "runs": rows_of(con, "SELECT * FROM fleet_summary")[0],
        "periods": rows_of(con, "SELECT * FROM fleet_periods"),
        "worst_runs": rows_of(con, "SELECT * FROM fleet_worst_runs"),
        "regressions": rows_of(con, "SELECT * FROM fleet_regressions"),
    }
