"""The report's selection (io_selected) and the checks that keep a mistyped filter from
writing an empty report over a good one: each filter value must name something in the
run, and the selection must hold at least one I/O. Reads views only, then has the tables of
the selection made (sql/report/selection.sql)."""
from ntscope.common.errors import NtscopeError
from ntscope.sql import views

from .spec import Spec

# filter attribute of Spec -> (flag, io column)
CHECKED = (("types", "--type", "io_type"), ("devices", "--device", "disk"),
           ("queues", "--queue", "qid"), ("cpus", "--cpu", "cpu"))


def present(con, column):
    return [r[0] for r in con.execute(f"SELECT DISTINCT {column} FROM io WHERE {column} IS NOT NULL ORDER BY 1").fetchall()]


def listing(values, limit=20):
    shown = ", ".join(str(v) for v in values[:limit])
    return (shown + f", ... ({len(values)} in all)") if len(values) > limit else (shown or "none")


def apply(con, spec: Spec):
    n_io = con.execute("SELECT count(*) FROM io").fetchall()[0][0]
    if n_io == 0:
        hosts = con.execute("SELECT string_agg(host || ' (role ' || coalesce(role, '?') || ')', ', ' ORDER BY host) "
                            "FROM hosts").fetchall()[0][0]
        target_ios = con.execute("SELECT count(*) FROM nvme_commands WHERE role = 'target' AND kind = 'io'").fetchall()[0][0]
        seen = (f"a target-only run measures no stage: every stage is an initiator I/O's (end_to_end starts and ends "
                f"on the initiator, the target's stages are its part of it); the target recorded {target_ios} I/O "
                "commands (`just sql RUN`: nvme_commands WHERE role = 'target'); " if target_ios else "")
        raise NtscopeError(f"the run has no initiator I/O command to report (hosts: {hosts or 'none'}); {seen}"
                           "fix: the initiator's trace.dat must hold nvme:nvme_setup_cmd / nvme_complete_rq events "
                           "of I/O queues: copy it into the run as <host>/trace.dat, or record with "
                           "`just capture role=initiator ...`")
    for attr, flag, col in CHECKED:
        wanted = getattr(spec, attr)
        if not wanted:
            continue
        have = present(con, col)
        unknown = [w for w in wanted if (int(w) if attr in ("queues", "cpus") else w) not in have]
        if unknown:
            raise NtscopeError(f"{flag} {','.join(map(str, unknown))} matches no I/O of this run; "
                               f"fix: use one of: {listing(have)}")
    if spec.processes:
        comms = present(con, "comm")
        pids = {str(p) for p in present(con, "pid")}
        unknown = [p for p in spec.processes if p not in comms and p not in pids]
        if unknown:
            raise NtscopeError(f"--process {','.join(unknown)} matches no process of this run; "
                               f"fix: use a name or pid among: {listing(comms)}")
    sets = [r[0] for r in con.execute("SELECT DISTINCT stage_set FROM io_stage_definitions ORDER BY 1").fetchall()]
    if "all" in spec.stage_sets:   # --stage-set all: every set the run has, each printed
        spec.stage_sets = sets
    unknown = [s for s in spec.stage_sets if s not in sets]
    if unknown:
        raise NtscopeError(f"--stage-set {','.join(unknown)} is not reported for this run; "
                           f"fix: use one of: {listing(sets)}, or all")
    views.load_modules(con, ["report/io_selected"], {"io_selected": spec.query_sql()})
    if con.execute("SELECT count(*) FROM io_selected").fetchall()[0][0] == 0:
        raise NtscopeError(f"the filters select no I/O ({spec.describe()['filter']}); "
                           "fix: loosen them (each value exists, but no I/O matches all of them)")
    views.load_modules(con, views.SELECTION_MODULES)
