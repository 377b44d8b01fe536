"""The compare document (compare.json): the cmp_* views as rows, and the run's interference
document; beside it the plot rows of compare.html (plot_data). No computation here."""
from ntscope import __version__
from ntscope.reports.interference import section as interference
from ntscope.sql.query_rows import rows_of

from ntscope.sql import compare_sides as load

from . import plot_data

ORDER = {
    "cmp_verdict": "group_key",
    "cmp_lad": "group_key, stage_set, seq, statistic",
    "cmp_queue_evidence": "run, group_key",
    "cmp_run_info": "run, rep",
    "cmp_params": "1",
    "cmp_workload_differences": "aspect",
}


def view(con, name):
    return rows_of(con, f"SELECT * FROM {name} ORDER BY {ORDER[name]}")


def compare_model(base_dir, run_dir, progress=None, cache=False):
    return compare_documents(base_dir, run_dir, progress, cache=cache)[0]


def compare_documents(base_dir, run_dir, progress=None, plots=False, memory_limit=None, temp_dir=None, cache=False,
                      params=None):
    """(compare.json document, compare.html's plot rows or None unless plots). memory_limit,
    temp_dir: of every DuckDB connection (ntscope.sql.connection.new_connection). cache: each side
    read from / kept in the run's compare input (side_cache; the documents of the RUN side are
    then always made with its plot rows, so that a later compare can show them). params: cmp_params
    values over the defaults (params.from_flags)."""
    first = {}
    first_dir = load.as_list(run_dir)[0]

    def from_first_run(rc):
        # what compare shows of the run itself, read before its connection closes: two
        # connections of a 1 M-I/O run, both full, took 4.3 GB
        return {"interference": interference.document(rc, first_dir),
                "plots": interference.plot_rows(rc) if plots or cache else None}

    con = load.compare_connection(base_dir, run_dir, on_first_run=from_first_run, first_run=first, progress=progress,
                                  memory_limit=memory_limit, temp_dir=temp_dir, cache=cache, params=params)
    first["interference"]["run_dir"] = first_dir   # a kept document names the path it was read from then
    if progress:
        progress.step("LAD, bootstrap intervals and verdict", con)
    infos = view(con, "cmp_run_info")
    info = {r["run"]: r for r in reversed(infos)}   # each side's first run (rep 1)
    stage_set = (con.sql("SELECT stage_set FROM cmp_stage_set").fetchall() or [None])[0]
    model = {
        "schema": "ntscope.compare/2",
        "ntscope_version": __version__,
        "base": info.get("base"),
        "run": info.get("run"),
        # every run of each side (repeats of one condition: rep 1, 2, ...)
        "base_runs": [r for r in infos if r["run"] == "base"],
        "run_runs": [r for r in infos if r["run"] == "run"],
        "params": view(con, "cmp_params")[0],
        "stage_set": stage_set[0] if stage_set else None,
        # the two sides' I/O mixes where they differ: the verdicts then compare different work
        "workload_differences": view(con, "cmp_workload_differences"),
        "verdicts": view(con, "cmp_verdict"),
        "lad": view(con, "cmp_lad"),
        "queue_evidence": view(con, "cmp_queue_evidence"),
        "interference": first["interference"],   # the first run's
    }
    plot_rows = plot_data.build(con, first["plots"], model["stage_set"]) if plots else None
    con.close()
    return model, plot_rows
