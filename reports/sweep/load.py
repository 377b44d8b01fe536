"""Load a series of runs: each run's own stage statistics (its views, default grouping by
type and size) copied into one DuckDB as sweep_source / sweep_run_info, then
sql/sweep/*.sql on top. Maps files to tables; computes nothing."""
import os

from ntscope.common import inputs
from ntscope.common.errors import NtscopeError
from ntscope.sql import memory_policy, views
from ntscope.sql.connection import new_connection

SWEEP_MODULES = ("sweep/series",)   # the SQL modules of the sweep (sql/sweep/) and what they require

SOURCE = """
SELECT ?::INTEGER AS run_idx, s.group_key, s.stage_set, s.stage, s.seq, s.parent, s.count,
       s.mean_ns, s.p50_ns, s.p99_ns, g.iops, g.mb_s
FROM report_stage_stats s JOIN report_groups g USING (group_key)
"""


def param_of(run_dir, param):
    """The value of PARAM for a run, from its truth.json (lab runs): the lab's parameter
    override, else the first fio job's field of that name (e.g. iodepth, bs_bytes)."""
    path = os.path.join(run_dir, "truth.json")
    fix = "give the values with --values V1,V2,... (one per run, in order)"
    if not os.path.lexists(path):
        raise NtscopeError(f"{run_dir} has no truth.json to read {param!r} from; fix: {fix}")
    truth = inputs.read_json(path, "truth.json", inputs.TRUTH_JSON_MAX, fix)
    lab = truth.get("lab") if isinstance(truth.get("lab"), dict) else {}
    params = lab.get("params") if isinstance(lab.get("params"), dict) else {}
    jobs = truth.get("workload") if isinstance(truth.get("workload"), list) else []
    job = jobs[0] if jobs and isinstance(jobs[0], dict) else {}
    for where in (params, job):
        if param in where and where[param] not in (None, ""):
            v = where[param]
            try:
                if isinstance(v, bool):
                    raise ValueError
                return inputs.finite_float(v)
            except (TypeError, ValueError):
                raise NtscopeError(f"{path}: {param} = {v!r} is not a finite number; fix: {fix}") from None
    raise NtscopeError(f"{path} names no {param!r} (lab params or the first fio job); fix: --param another "
                       f"field (e.g. iodepth) or --values V1,V2,...")


def series(run_dirs, param=None, values=None):
    """[(run_dir, label, param_value)] in series order: by the parameter when there is one."""
    if values is not None:
        if len(values) != len(run_dirs):
            raise NtscopeError(f"--values gives {len(values)} values for {len(run_dirs)} runs; fix: one per run")
        points = list(zip(run_dirs, values))
    elif param:
        points = [(r, param_of(r, param)) for r in run_dirs]
    else:
        return distinct_labels([(r, os.path.basename(r), None) for r in run_dirs])
    points.sort(key=lambda p: p[1])   # stable: runs of one value keep the order given
    name = param or "value"
    return distinct_labels([(r, f"{name}={v:g}", v) for r, v in points])


def distinct_labels(points):
    """Each point its own label (a bar, a column, a line point of its own): a label that several
    runs share gets the run's folder name, '<param>=0 (base)', and, if that is shared too, its
    place in the series, ' #2'."""
    def shared(labels):
        return {x for x in labels if labels.count(x) > 1}
    labels = [label for _, label, _ in points]
    twice = shared(labels)
    labels = [f"{label} ({os.path.basename(r)})" if label in twice and label != os.path.basename(r) else label
              for (r, _, _), label in zip(points, labels)]
    twice = shared(labels)
    labels = [f"{label} #{i + 1}" if label in twice else label for i, label in enumerate(labels)]
    return [(r, label, v) for (r, _, v), label in zip(points, labels)]


def connection(run_dirs, param=None, values=None, progress=None, memory_limit=None, temp_dir=None):
    """The sweep views over every run's stage statistics. memory_limit, temp_dir: of each
    DuckDB connection (connection.new_connection)."""
    if len(run_dirs) < 2:
        raise NtscopeError("a sweep needs at least two runs; fix: ntscope sweep RUN1 RUN2 ... (or just sweep RUN1 RUN2 ...)")
    con = new_connection(memory_limit, temp_dir)
    con.execute("CREATE TABLE sweep_run_info (run_idx INTEGER, run VARCHAR, run_dir VARCHAR, param VARCHAR, "
                "param_value DOUBLE, label VARCHAR)")
    parts = []
    for i, (run_dir, label, value) in enumerate(series(run_dirs, param, values)):
        rc = views.connect(run_dir, memory_limit=memory_limit, temp_dir=temp_dir, progress=progress,
                           memory_share=memory_policy.READ_ONCE_SHARE)   # read once and closed
        parts.append(rc.sql(SOURCE, params=[i]).to_arrow_table())
        rc.close()
        con.execute("INSERT INTO sweep_run_info VALUES (?, ?, ?, ?, ?, ?)",
                    [i, os.path.basename(run_dir), run_dir, param, value, label])
    import pyarrow as pa
    src = pa.concat_tables(parts)
    con.register("sweep_arrow", src)
    con.execute("CREATE TABLE sweep_source AS SELECT * FROM sweep_arrow")
    views.load_modules(con, SWEEP_MODULES)
    if con.execute("SELECT count(*) FROM sweep_stage_set").fetchone()[0] == 0:
        raise NtscopeError("the runs share no stage set (e.g. a patched-only and a stock-only run cannot be "
                           "compared stage by stage); fix: sweep runs of the same kind")
    return con
