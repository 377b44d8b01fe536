"""Load a series of runs: each run's own stage statistics (its views, default grouping by
type and size) copied into one DuckDB as sweep_source / sweep_run_info, then
sql/sweep/*.sql on top. Maps files to tables; computes nothing."""
import json
import os

from ntscope.errors import NtscopeError
from ntscope.sql import views

SWEEP_SQL = os.path.join(os.path.dirname(os.path.abspath(views.__file__)), "sweep")

SOURCE = """
SELECT ?::INTEGER AS run_idx, s.group_key, s.stage_set, s.stage, s.seq, s.parent, s.count,
       s.mean_ns, s.p50_ns, s.p99_ns, g.iops, g.mb_s
FROM report_stage_stats s JOIN report_groups g USING (group_key)
"""


def param_of(run_dir, param):
    """The value of PARAM for a run, from its truth.json (lab runs): the lab's parameter
    override, else the first fio job's field of that name (e.g. iodepth, bs_bytes)."""
    path = os.path.join(run_dir, "truth.json")
    try:
        truth = json.load(open(path))
    except OSError:
        raise NtscopeError(f"{run_dir} has no truth.json to read {param!r} from; fix: give the values "
                           f"with --values V1,V2,... (one per run, in order)") from None
    except ValueError as e:
        raise NtscopeError(f"{path}: not valid JSON ({e}); fix: give the values with --values") from None
    for where in ((truth.get("lab") or {}).get("params") or {}, ((truth.get("workload") or [{}])[0] or {})):
        if param in where and where[param] not in (None, ""):
            try:
                return float(where[param])
            except (TypeError, ValueError):
                raise NtscopeError(f"{path}: {param} = {where[param]!r} is not a number; fix: --values") from None
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
        return [(r, os.path.basename(r), None) for r in run_dirs]
    points.sort(key=lambda p: p[1])
    name = param or "value"
    return [(r, f"{name}={v:g}", v) for r, v in points]


def connection(run_dirs, param=None, values=None, progress=None, memory_limit=None, temp_dir=None):
    """The sweep views over every run's stage statistics. memory_limit, temp_dir: of each
    DuckDB connection (views.new_connection)."""
    if len(run_dirs) < 2:
        raise NtscopeError("a sweep needs at least two runs; fix: python -m ntscope sweep RUN1 RUN2 ...")
    con = views.new_connection(memory_limit, temp_dir)
    with open(views.STAGE_TABLE_SQL) as f:
        con.execute(f.read())
    con.execute("CREATE TABLE sweep_run_info (run_idx INTEGER, run VARCHAR, run_dir VARCHAR, param VARCHAR, "
                "param_value DOUBLE, label VARCHAR)")
    parts = []
    for i, (run_dir, label, value) in enumerate(series(run_dirs, param, values)):
        rc = views.connect(run_dir, memory_limit=memory_limit, temp_dir=temp_dir, progress=progress,
                           memory_share=views.READ_ONCE_SHARE)   # read once and closed
        parts.append(rc.sql(SOURCE, params=[i]).to_arrow_table())
        rc.close()
        con.execute("INSERT INTO sweep_run_info VALUES (?, ?, ?, ?, ?, ?)",
                    [i, os.path.basename(run_dir), run_dir, param, value, label])
    import pyarrow as pa
    src = pa.concat_tables(parts)
    con.register("sweep_arrow", src)
    con.execute("CREATE TABLE sweep_source AS SELECT * FROM sweep_arrow")
    for f in sorted(os.listdir(SWEEP_SQL)):
        if f.endswith(".sql"):
            with open(os.path.join(SWEEP_SQL, f)) as fh:
                con.execute(fh.read())
    if con.execute("SELECT count(*) FROM sweep_stage_set").fetchone()[0] == 0:
        raise NtscopeError("the runs share no stage set (e.g. a patched-only and a stock-only run cannot be "
                           "compared stage by stage); fix: sweep runs of the same kind")
    return con
