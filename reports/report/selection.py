"""The report's selection (io_selected) and the checks that keep a mistyped filter from
writing an empty report over a good one: each filter value must name something in the
run, and the selection must hold at least one I/O. Reads views only, then has the tables of
the selection made (sql/report/selection.sql)."""
from ntscope.common.errors import NtscopeError
from ntscope.sql import views

from .spec import Spec

# filter attribute of Spec -> (flag, io column)
CHECKED = (("types", "--type", "io_type"), ("cpus", "--cpu", "cpu"), ("hosts", "--host", "initiator_host"),
           ("targets", "--target", "target_host"))
# --device / --queue: Spec attribute -> (flag, the key column the reports print, the short form's
# column, an example of the key)
KEYED = (("devices", "device_keys", "--device", "device_key", "disk", "initiator/nvme0n1"),
         ("queues", "queue_keys", "--queue", "queue_key", "qid", "initiator/c0/q1"))


def present(con, column):
    return [r[0] for r in con.execute(f"SELECT DISTINCT {column} FROM io WHERE {column} IS NOT NULL ORDER BY 1").fetchall()]


def listing(values, limit=20):
    shown = ", ".join(str(v) for v in values[:limit])
    return (shown + f", ... ({len(values)} in all)") if len(values) > limit else (shown or "none")


def resolve_keys(con, wanted, flag, key_col, short_col, example):
    """The keys (device_key / queue_key) that WANTED names: a key as the reports print it, or the
    short form (disk, qid) when one initiator has it; an error (exit 2) for a value naming nothing
    or, in a run with several initiators, a short form naming several hosts' resources."""
    rows = con.execute(f"SELECT DISTINCT {key_col}, {short_col}::VARCHAR, initiator_host FROM io "
                       f"WHERE {key_col} IS NOT NULL ORDER BY 1").fetchall()
    keys = [r[0] for r in rows]
    out = []
    for w in wanted:
        if w in keys:
            out.append(w)
            continue
        named = [r for r in rows if r[1] == w]
        if not named:
            raise NtscopeError(f"{flag} {w} matches no I/O of this run; fix: use one of: {listing(keys)}")
        hosts = sorted({r[2] for r in named})
        if len(hosts) > 1:
            raise NtscopeError(f"{flag} {w} is ambiguous: the run has several initiators and it names "
                               f"{listing([r[0] for r in named])}; fix: use the full key, e.g. "
                               f"{flag} {named[0][0]} (the form the reports print, e.g. {example})")
        out += [r[0] for r in named]
    return list(dict.fromkeys(out))


def stream_id(host, comm, pid, io_type, size_bytes, several_hosts):
    """interference's stream_id (sql/interference/streams.sql, intf_io) of these values."""
    return ((f"{host}:" if several_hosts else "") + f"{comm if comm is not None else '?'}/"
            f"{pid if pid is not None else '?'} {io_type if io_type is not None else '?'} {size_bytes}B")


def resolve_streams(con, wanted):
    """The (initiator_host, comm, pid, io_type, size_bytes) of each --stream id."""
    rows = con.execute("SELECT DISTINCT initiator_host, comm, pid, io_type, size_bytes FROM io "
                       "WHERE i_setup_ts IS NOT NULL AND i_complete_rq_ts IS NOT NULL").fetchall()
    several = len({r[0] for r in rows}) > 1
    ids = {stream_id(*r, several): r for r in rows}
    unknown = [w for w in wanted if w not in ids]
    if unknown:
        raise NtscopeError(f"--stream {','.join(unknown)} matches no stream of this run; "
                           f"fix: use one of: {listing(sorted(ids))}")
    return [ids[w] for w in wanted]


def stage_sets(con, spec):
    """The one decision on stage sets: (the sets the report holds, its primary set). The sets
    the run has (io_stage_definitions), kept to --stage-set's when given (`all`: every one, each
    printed; spec.stage_sets becomes that list); the primary is the run's (primary_stage_set)
    unless --stage-set left it out, then the first set kept. An unknown set is an error."""
    run_sets = [r[0] for r in con.execute("SELECT DISTINCT stage_set FROM io_stage_definitions ORDER BY 1").fetchall()]
    if "all" in spec.stage_sets:
        spec.stage_sets = run_sets
    unknown = [s for s in spec.stage_sets if s not in run_sets]
    if unknown:
        raise NtscopeError(f"--stage-set {','.join(unknown)} is not reported for this run; "
                           f"fix: use one of: {listing(run_sets)}, or all")
    kept = [s for s in run_sets if not spec.stage_sets or s in spec.stage_sets]
    primary = next(iter(con.execute("SELECT stage_set FROM primary_stage_set").fetchall()), (None,))[0]
    if kept and primary not in kept:
        primary = kept[0]
    # the input of sql/report/selection.sql: its selected_* relations hold these sets only
    con.execute("CREATE OR REPLACE TABLE report_stage_sets AS SELECT unnest(?::VARCHAR[]) AS stage_set", [kept])
    return kept, primary


def apply(con, spec: Spec):
    n_io = con.execute("SELECT count(*) FROM io").fetchall()[0][0]
    if n_io == 0:
        hosts = con.execute("SELECT string_agg(host || ' (role ' || coalesce(role, '?') || ')', ', ' ORDER BY host) "
                            "FROM hosts").fetchall()[0][0]
        target_ios = con.execute("SELECT count(*) FROM nvme_commands WHERE role = 'target' AND kind = 'io'").fetchall()[0][0]
        nvme_events = con.execute("SELECT (SELECT count(*) FROM raw_nvme) + (SELECT count(*) FROM raw_nvmet) + "
                                  "(SELECT count(*) FROM raw_nvme_tcp) + (SELECT count(*) FROM raw_nvmet_tcp)").fetchall()[0][0]
        if nvme_events == 0:
            raise NtscopeError(f"the run's traces hold no NVMe event at all (no nvme, nvmet, nvme_tcp or nvmet_tcp "
                               f"event on any host: {hosts or 'none'}): they were recorded without the NVMe "
                               "tracepoints; fix: record each host with `just capture role=initiator|target ...` "
                               "(or trace-cmd record -e nvme -e nvmet -e block ...)")
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
        unknown = [w for w in wanted if (int(w) if attr == "cpus" else w) not in have]
        if unknown:
            raise NtscopeError(f"{flag} {','.join(map(str, unknown))} matches no I/O of this run; "
                               f"fix: use one of: {listing(have)}")
    for attr, keys, flag, key_col, short_col, example in KEYED:
        wanted = getattr(spec, attr)
        setattr(spec, keys, resolve_keys(con, wanted, flag, key_col, short_col, example) if wanted else [])
    spec.stream_rows = resolve_streams(con, spec.streams) if spec.streams else []
    if spec.processes:
        comms = present(con, "comm")
        pids = {str(p) for p in present(con, "pid")}
        unknown = [p for p in spec.processes if p not in comms and p not in pids]
        if unknown:
            raise NtscopeError(f"--process {','.join(unknown)} matches no process of this run; "
                               f"fix: use a name or pid among: {listing(comms)}")
    stage_sets(con, spec)   # --stage-set checked (and `all` resolved) before any work
    views.load_modules(con, ["report/io_selected"], {"report_selection": spec.selection()})
    if con.execute("SELECT count(*) FROM io_selected").fetchall()[0][0] == 0:
        given = ", ".join(f"--{k} {v if isinstance(v, str) else ','.join(map(str, v))}"
                          for k, v in spec.describe()["filter"].items() if v)
        if spec.window_s:
            # seconds from the first I/O to the last I/O's setup, as --window counts them
            span = con.execute("SELECT (max(i_setup_ts) - min(coalesce(i_bio_queue_ts, i_setup_ts))) / 1e9 FROM io"
                               ).fetchall()[0][0] or 0
            lo, hi = spec.window_s
            if (lo or 0) > span:
                raise NtscopeError(f"--window {spec.window} starts after the run's last I/O: its I/Os span 0 to "
                                   f"{span:.1f} s from the first one; fix: a window inside it, e.g. --window "
                                   f"0:{max(span / 2, 0.1):.1f}")
        raise NtscopeError(f"the filters select no I/O ({given}); each value exists in the run, but no I/O matches "
                           "all of them together; fix: drop or loosen one of them")
    views.load_modules(con, views.SELECTION_MODULES)
