"""`ntscope fleet ingest`: runs analysed in parallel as Ray tasks (run_task.extract: the same
analysis as `ntscope analyze`), each run's rows committed to the fleet's Iceberg tables by this
process as its task ends (tables.commit_run: one writer per ingest, so its own commits never
race; another ingest's may, and are retried). A run that fails is reported with its error; the
others go on.

Ray: without --ray-address a local Ray is started for the command (one task per CPU it is
given, --jobs) and stopped after; with it, the command joins that cluster, whose workers must
see the runs' folders at the same paths (a shared file system) and have ntscope installed."""
import glob
import os
import sys
import time

from ntscope.common.errors import NtscopeError

from . import tables

GLOB_CHARS = "*?["


def expand(args):
    """The run folders ARGS name: each an existing folder, or, when it is not one and holds a
    glob character, the folders that pattern matches (sorted). A pattern matching nothing, or a
    name that is neither: an error naming it."""
    out = []
    for a in args:
        if os.path.isdir(a):
            out.append(os.path.abspath(a))
        elif any(c in a for c in GLOB_CHARS):
            found = sorted(p for p in glob.glob(a) if os.path.isdir(p))
            if not found:
                raise NtscopeError(f"fleet ingest: the pattern {a!r} matches no folder; fix: quote it so the shell "
                                   "does not expand it, and check the path")
            out.extend(os.path.abspath(p) for p in found)
        else:
            raise NtscopeError(f"fleet ingest: {a!r} is no folder; fix: give run folders (RUN/<host>/trace.dat) "
                               "or a quoted pattern such as 'captures/*/run-*'")
    seen, runs = set(), []
    for r in out:
        if r not in seen:
            seen.add(r)
            runs.append(r)
    return runs


def bar(done, total, width=30):
    filled = int(width * done / total) if total else width
    return "[" + "#" * filled + "-" * (width - filled) + f"] {done}/{total} runs"


def start_ray(address, jobs):
    """ray.init: join ADDRESS, or start a local Ray of JOBS CPUs (no dashboard, quiet logs)."""
    import ray
    kw = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    if address:
        ray.init(address=address, **kw)
    else:
        ray.init(num_cpus=jobs, **kw)
    return ray


def ingest(run_dirs, catalog, ray_address=None, jobs=None, task_memory=None, report_root=None, out=sys.stderr):
    """Ingest RUN_DIRS into CATALOG's tables. Returns [(run_dir, run_id or None, error or None,
    ios, seconds)] in completion order; prints a progress bar line per finished run on OUT."""
    from . import run_task
    jobs = jobs or os.cpu_count() or 1
    ray = start_ray(ray_address, jobs)
    # the task: one CPU, memory bounded when asked (Ray schedules no more tasks than fit), never
    # retried (a run that crashes its worker is reported, not run again)
    options = {"num_cpus": 1, "max_retries": 0}
    if task_memory:
        options["memory"] = task_memory
    remote = ray.remote(**options)(run_task.extract)
    try:
        pending = {}
        for r in run_dirs:
            report = os.path.join(report_root, os.path.basename(r)) if report_root else None
            pending[remote.remote(r, report)] = r
        results = []
        t0 = time.monotonic()
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            run_dir = pending.pop(ready[0])
            try:
                got = ray.get(ready[0])
                retries = tables.commit_run(catalog, got["run_id"], got["tables"])
                if (len(results) + 1) % tables.EXPIRE_EVERY == 0:
                    tables.expire(catalog)
                results.append((run_dir, got["run_id"], None, got["ios"], got["seconds"]))
                what = f"ok: {got['run_id']}, {got['ios']:,} I/Os, {got['seconds']:.1f} s" + \
                    (f", {retries} commit retries" if retries else "")
            except Exception as e:   # a failed run is reported; the others go on
                msg = error_text(e)
                results.append((run_dir, None, msg, 0, None))
                what = f"FAILED: {msg}"
            print(f"{bar(len(results), len(run_dirs))}  {os.path.basename(run_dir)} {what} "
                  f"({time.monotonic() - t0:.0f} s)", file=out, flush=True)
        tables.expire(catalog)
        return results
    finally:
        ray.shutdown()


def error_text(e):
    """The run's error in one line: an ntscope error's own text (what, where, fix), else the
    exception's type and message (a worker that died: Ray's)."""
    cause = getattr(e, "cause", None)
    if isinstance(cause, NtscopeError):
        e = cause
    text = str(e).strip().splitlines()
    first = next((line for line in text if "ntscope" in line.lower() or "error" in line.lower()), text[0] if text else "")
    return f"{type(e).__name__}: {first}"[:500] if not isinstance(e, NtscopeError) else str(e)[:500]
