"""A run's data for your own analysis: polars LazyFrames (`pip install ntscope[polars]`), or one
DuckDB connection with every view of the run.

    from ntscope import data
    import polars as pl
    io = data.io("runs/run1")                 # report/io.parquet: one row per I/O
    st = data.stages("runs/run1")             # report/io_stages.parquet: one row per I/O and stage
    ev = data.events("runs/run1", "nvme", "nvme_setup_cmd")   # every host's events, 'host' added
    con = data.connect("runs/run1")           # DuckDB: the views of `ntscope sql` (sql/README.md)
    con.sql("SELECT * FROM report_groups").df()

io() and stages() read what `ntscope analyze RUN` wrote (the I/Os its filters selected; columns
and units in reports/README.md "Per-I/O data"); events() reads what `ntscope convert` wrote
(<host>/parquet/<system>/<event>.parquet). Nothing is read until you .collect(). connect() needs
the run converted (`ntscope convert RUN` or `ntscope analyze RUN`) and only reads it; its SQL
touches no other file unless you pass out=DIR (a folder it may write) or unrestricted=True. A run is a
path or a name under runs/, as for every ntscope command; paths are taken literally."""
import os

from .common import runs
from .common.derived import EVENT_NAME, SYSTEM_NAME   # the names the converter writes (xhci-hcd included)
from .common.errors import NtscopeError


def _pl():
    try:
        import polars
    except ImportError:
        raise NtscopeError("ntscope.data needs polars, which is not installed; "
                           "fix: pip install 'ntscope[polars]' (or pip install polars)") from None
    return polars


def _report_file(run, name):
    path = os.path.join(runs.resolve(run), runs.REPORT_DIR, name)
    if not os.path.isfile(path):
        raise NtscopeError(f"{path} does not exist; fix: run `ntscope analyze {run}` first "
                           "(it writes io.parquet and io_stages.parquet into the report folder)")
    return path


def _checked(run_dir):
    """run_dir when every host's converted files are what the converter wrote from its trace
    (runs.needs_converting: the check every ntscope command makes), else an NtscopeError: this
    API reads, it never converts."""
    for host in runs.host_dirs(run_dir):
        why = runs.needs_converting(os.path.join(run_dir, host))
        if why:
            raise NtscopeError(f"{os.path.join(run_dir, host)} cannot be read as converted: {why}; "
                               f"fix: ntscope convert {run_dir} (it converts what changed), then read it again")
    return run_dir


def io(run):
    """report/io.parquet as a LazyFrame: one row per I/O the report covers."""
    return _pl().scan_parquet(_report_file(run, "io.parquet"), glob=False)


def stages(run):
    """report/io_stages.parquet as a LazyFrame: one row per (I/O, stage set, stage)."""
    return _pl().scan_parquet(_report_file(run, "io_stages.parquet"), glob=False)


def events(run, system, event):
    """Every host's <host>/parquet/<system>/<event>.parquet as one LazyFrame, with a 'host'
    column (the host directory's name) first; columns missing on a host are null."""
    pl = _pl()
    for what, v, name in (("system", system, SYSTEM_NAME), ("event", event, EVENT_NAME)):
        if not name.match(str(v)):
            raise NtscopeError(f"{what} {v!r} is not a trace {what} name; fix: e.g. events(run, 'nvme', "
                               "'nvme_setup_cmd') (names as in <host>/parquet/<system>/<event>.parquet)")
    run_dir = _checked(runs.resolve(run))
    frames = []
    for host in runs.host_dirs(run_dir):
        path = os.path.join(run_dir, host, "parquet", system, f"{event}.parquet")
        if os.path.isfile(path):
            frames.append(pl.scan_parquet(path, glob=False).select(pl.lit(host).alias("host"), pl.all()))
    if not frames:
        raise NtscopeError(f"no host of {run_dir} has {system}/{event}.parquet; fix: check the names "
                           f"(ls {run_dir}/*/parquet/{system}/), or convert the run first (ntscope convert RUN)")
    return pl.concat(frames, how="diagonal_relaxed")


def connect(run, memory_limit=None, temp_dir=None, out=None, unrestricted=False):
    """A DuckDB connection with every view of the run, as `ntscope sql RUN` has them (sql/:
    events, io, io_stages, the report, interference and CPU-wait views; io_selected keeps every
    I/O, grouped by type and size). The run is only read: its hosts must be converted already
    (<host>/parquet/); DuckDB's tables and spill files live in a private temporary folder,
    removed when the connection is closed or collected. memory_limit, temp_dir: as analyze's
    --memory-limit and --temp-dir. SQL on it is guarded as `ntscope sql`'s (sql/guards.py): it
    reads the run's converted files and writes only in OUT (a folder outside every run, created
    when missing); unrestricted=True lifts the guards (any file, Python data frames by name)."""
    from ntscope.sql import guards, views
    run_dir = _checked(runs.resolve(run))
    out_dir = None if unrestricted else guards.out_dir(out, run_dir)
    con = views.connect(run_dir, memory_limit=memory_limit, temp_dir=temp_dir, interference=True)
    return con if unrestricted else guards.apply(con, run_dir, out_dir)
