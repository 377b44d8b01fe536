"""The run layout (ARCHITECTURE.md, "Run layout": a contract): runs/<run>/<host>/trace.dat, host.json,
parquet/ (convert), runs/<run>/report/ (analyze). Names and paths given by users are
data: taken literally (no globbing, no shell), checked before they become paths."""
import hashlib
import os
import subprocess
import sys

from . import converter, derived, inputs, read_only
from .errors import NtscopeError

REPORT_DIR = "report"


def runs_dir():
    """Where run names are looked up: $NTSCOPE_RUNS, else ./runs."""
    return os.path.abspath(os.environ.get("NTSCOPE_RUNS") or "runs")


def resolve(run):
    """A run given as a path (relative to the current directory) or as a name under
    runs_dir(). Returns its absolute path."""
    if not run:
        raise NtscopeError("no run given; fix: pass a run name under runs/ or a path to a run directory")
    if os.path.isdir(run):
        return os.path.abspath(run)
    if os.path.lexists(run):
        raise NtscopeError(f"{run} is {what_it_is(run)}, not a run folder; {RUN_LAYOUT}; fix: {fix_for_a_file(run)}")
    plain_name = os.sep not in run and run not in (".", "..")
    cand = os.path.join(runs_dir(), run)
    if plain_name and os.path.isdir(cand):
        return cand
    where = f"{os.getcwd()}" + (f" and {runs_dir()}" if plain_name else "")
    raise NtscopeError(f"no run directory {run!r} (looked in {where}); "
                       f"fix: pass a run name under runs/ or a path to a run directory")


def resolve_list(arg):
    """One side of a comparison: a run, or repeats of one condition as a comma-separated
    list ('base1,base2,base3'). An existing run whose name holds a comma is one run.
    Returns absolute paths, each run once."""
    if arg and (os.path.isdir(arg) or "," not in arg):
        return [resolve(arg)]
    parts = (arg or "").split(",")
    if any(not p for p in parts):
        raise NtscopeError(f"run list {arg!r} has an empty item; fix: name the runs separated by single commas "
                           f"(e.g. base1,base2,base3)")
    dirs = [resolve(p) for p in parts]
    check_distinct(dirs, f"run list {arg!r}")
    return dirs


def identity(run_dir):
    """What makes two run paths one run: the folder itself (a link or another path to it is
    the same run)."""
    st = os.stat(run_dir)
    return st.st_dev, st.st_ino


def recording_keys(run_dir):
    """{key: where} of what makes a run's recording itself, whatever folder holds it: each
    host's trace.dat as a file (device and inode: a hard-linked copy, a host folder linked to
    another run's are the same file) and as its bytes (the sha256 its conversion recorded in
    metadata.json: a copy)."""
    keys = {}
    try:
        hosts = host_dirs(run_dir)
    except NtscopeError:
        return keys
    for host in hosts:
        trace = os.path.join(run_dir, host, "trace.dat")
        try:
            st = os.stat(trace)
            keys[("file", st.st_dev, st.st_ino)] = f"{host}/trace.dat"
        except OSError:
            pass
        try:
            meta = derived.load(os.path.join(run_dir, host))
        except NtscopeError:
            continue
        src = meta.get("source")
        if isinstance(src, dict) and isinstance(src.get("sha256"), str):
            # the trace's bytes and the rows of the event files made of them: a copy has both the
            # same (rows, not the files' bytes: rows of several CPUs may be written in another
            # order); a run whose events were rewritten from the same trace (make_scaled_run.py)
            # is another run
            events = sorted(f"{e.get('file')}={e.get('rows')}" for e in meta.get("events") or [] if isinstance(e, dict))
            made = hashlib.sha256("\n".join(events).encode()).hexdigest()
            keys.setdefault(("sha256", src["sha256"], made), f"{host}/trace.dat")
    return keys


def same_recording(a, b):
    """How run folders a and b hold one recording (a phrase), or None (recording_keys)."""
    ka, kb = recording_keys(a), recording_keys(b)
    for key in sorted(set(ka) & set(kb), key=lambda k: (k[0], kb[k])):
        how = "is the same file as" if key[0] == "file" else "has the same bytes (sha256) as"
        return f"its {kb[key]} {how} {a}'s {ka[key]}"
    return None


def check_distinct(dirs, where, fix="give each run once"):
    """Refuses one run given twice in dirs, under any path (links followed), or as two folders
    holding one recording (same_recording)."""
    seen = {}
    for d in dirs:
        key = identity(d)
        if key in seen:
            same = "" if seen[key] == d else f" (as {seen[key]}: the same folder)"
            raise NtscopeError(f"{where} names {d} twice{same}; fix: {fix}")
        for other in seen.values():
            how = same_recording(other, d)
            if how:
                raise NtscopeError(f"{where} names one recording twice: {d} and {other} ({how}); fix: {fix}")
        seen[key] = d


def host_dirs(run_dir):
    """Host directories of a run: subdirectories holding trace.dat or a converted parquet/.
    A host may have any name but `report` (analyze's folder) and names starting with a dot
    (.ntscope is ntscope's; dot folders are hidden): such a folder holding a trace is refused,
    never skipped without a word."""
    try:
        names = sorted(os.listdir(run_dir))
    except OSError as e:
        raise NtscopeError(f"cannot list run directory {run_dir}: {e.strerror}; fix: check its permissions")
    hosts = []
    for name in names:
        d = os.path.join(run_dir, name)
        if not os.path.isdir(d):
            continue
        if os.path.lexists(os.path.join(d, "trace.dat")) or os.path.isdir(os.path.join(d, "parquet")):
            check_host_name(run_dir, name)
            check_utf8_name(run_dir, name)
            hosts.append(name)
    return hosts


def check_utf8_name(run_dir, name):
    """Refuses a host folder whose name is not UTF-8 (the reports, JSON and the converter's
    arguments carry host names as text)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise NtscopeError(f"host folder {os.path.join(run_dir, shown)}: its name is not UTF-8 text; ntscope names "
                           f"hosts by their folder in reports and JSON; fix: rename the folder (e.g. mv it to "
                           f"{os.path.join(run_dir, 'initiator2')})") from None


def check_host_name(run_dir, name):
    """Refuses a host folder named `report` or starting with a dot (host_dirs)."""
    if name == REPORT_DIR or name.startswith("."):
        why = ("`report` is the folder analyze writes its reports into" if name == REPORT_DIR
               else "names starting with a dot are hidden, and .ntscope is ntscope's own")
        raise NtscopeError(f"{os.path.join(run_dir, name)} holds a host's trace (trace.dat or parquet/), but a host "
                           f"folder may not be named {name!r}: {why}; fix: rename the folder (e.g. to "
                           f"{name.lstrip('.') + '-host' if name.lstrip('.') else 'host'})")


def check_trace_file(trace):
    """A trace.dat must be a regular file (links followed): a FIFO or device would block or
    never end; a dangling link or a link loop is said as such."""
    inputs.check_regular(trace, "", "copy the host's trace.dat file itself into the run")


def needs_converting(host_dir, verify=False):
    """Why the host's trace.dat must be converted (again), or None when its parquet/ is what the
    converter wrote from it (derived.check). A host without trace.dat whose parquet/ differs
    from its metadata.json is refused: nothing can replace it."""
    trace = os.path.join(host_dir, "trace.dat")
    has_trace = os.path.lexists(trace)
    if has_trace:
        check_trace_file(trace)
    if not os.path.lexists(derived.metadata_path(host_dir)):
        return "not converted yet" if has_trace else None
    if has_trace and not converted_by_ntscope(host_dir):
        return "its parquet/metadata.json was not written by ntscope's converter"
    problems = derived.check(host_dir, full=verify)
    if not problems:
        return None
    if has_trace:
        return problems[0]
    raise NtscopeError(f"the converted event files of {host_dir} do not match their metadata.json: {problems[0]}"
                       f"{f' (and {len(problems) - 1} more)' if len(problems) > 1 else ''}; there is no trace.dat to "
                       "convert again; fix: restore the host's trace.dat (ntscope converts it again) or its parquet/ "
                       "as it was converted")


def converted_by_ntscope(host_dir):
    """True unless the host's metadata.json is readable and names another converter."""
    try:
        return derived.by_converter(derived.load(host_dir))
    except NtscopeError:
        return True   # unreadable: derived.check says why


def make_room(host_dir):
    """Before a host is converted again: its parquet/ must hold nothing but what its
    metadata.json lists (derived.foreign_entries), else the converter would replace a user's
    file; such a file is refused with its name and the fix. A parquet/ without its metadata.json
    (deleted) cannot tell its files apart: it is moved aside whole (parquet.orphaned-<time>,
    said on stderr), never deleted."""
    import time
    where = os.path.join(host_dir, "parquet")
    if os.path.lexists(where) and (os.path.islink(where) or not os.path.isdir(where)):
        what = (f"a symbolic link (to {os.readlink(where)})" if os.path.islink(where) else
                inputs.kind_of(os.lstat(where).st_mode) if not os.path.isfile(where) else "a file")
        raise NtscopeError(f"{where} is {what}, where ntscope writes the host's converted event files; fix: move it "
                           f"out of {host_dir} (it is yours: ntscope never deletes it), then run the command again")
    if not os.path.isdir(where) or not os.listdir(where):
        return
    if not os.path.lexists(derived.metadata_path(host_dir)) or not converted_by_ntscope(host_dir):
        aside = f"{where}.orphaned-{time.strftime('%Y%m%dT%H%M%S')}"
        try:
            os.rename(where, aside)
        except OSError as e:
            raise NtscopeError(f"{where} has no metadata.json of ntscope's, so it cannot tell its files are its own, and it "
                               f"cannot be moved aside to {aside} ({e.strerror}); fix: move it away yourself (or "
                               "delete it if it holds only ntscope's converted files), then run again") from None
        print(f"ntscope: note: {where} had no metadata.json of ntscope's (it cannot tell its files are its own): moved to "
              f"{aside}; delete that folder once you have checked it holds nothing of yours", file=sys.stderr)
        return
    try:
        foreign = derived.foreign_entries(host_dir)
    except NtscopeError:
        return   # a metadata.json that cannot be read: the converter's own check says so
    if foreign:
        more = f" (and {len(foreign) - 1} more)" if len(foreign) > 1 else ""
        raise NtscopeError(f"{where} holds {os.path.join(where, foreign[0])}{more}, which ntscope did not write (its "
                           f"metadata.json does not list it); converting {host_dir}/trace.dat again would replace "
                           f"{where}; fix: move it out of {where} (it is yours: ntscope never deletes it), then run "
                           "the command again")


RUN_LAYOUT = "a run is a folder with one folder per host, each holding that host's trace.dat (RUN/initiator/trace.dat, RUN/target/trace.dat)"


def what_it_is(path):
    """A path that is not a folder, in words."""
    if os.path.islink(path) and not os.path.exists(path):
        return "a dangling symbolic link"
    return "a trace file" if path.endswith(".dat") and os.path.isfile(path) else (
        "a file" if os.path.isfile(path) else "not a folder")


def fix_for_a_file(path):
    """The fix when RUN names a file: its run when it sits in one, else how to make one."""
    path = os.path.abspath(path)
    host = os.path.dirname(path)
    if os.path.basename(path) == "trace.dat" and host_dirs_quiet(os.path.dirname(host)):
        return f"pass the run folder: {os.path.dirname(host)}"
    return (f"make a run of it: mkdir -p runs/r1/initiator && cp {path} runs/r1/initiator/trace.dat (its role is "
            "read from its events; add the target's trace.dat as runs/r1/target/trace.dat), then pass runs/r1")


def host_dirs_quiet(d):
    try:
        return host_dirs(d)
    except NtscopeError:
        return []


def require_hosts(run_dir):
    """host_dirs, or the error that the folder is no run (before anything is written there), with
    the fix for what it is instead: a host folder, a run's report folder, a folder of loose
    trace files or of runs."""
    hosts = host_dirs(run_dir)
    if hosts:
        return hosts
    up = os.path.dirname(run_dir)
    if os.path.lexists(os.path.join(run_dir, "trace.dat")):
        fix = f"the folder holds trace.dat itself: it is a host folder; pass its run, {up}"
        what = "a host folder, not a run folder"
    elif os.path.basename(run_dir) == REPORT_DIR and host_dirs_quiet(up):
        fix, what = f"pass the run itself: {up}", "the report folder of a run (analyze writes it)"
    else:
        loose = sorted(f for f in os.listdir(run_dir) if f.endswith(".dat") and os.path.isfile(os.path.join(run_dir, f)))
        held = sorted(n for n in os.listdir(run_dir) if host_dirs_quiet(os.path.join(run_dir, n)))
        if loose:
            moves = "; ".join(f"mkdir {run_dir}/{f[:-4] or 'host'} && mv {run_dir}/{f} {run_dir}/{f[:-4] or 'host'}/trace.dat"
                              for f in loose[:3])
            what, fix = f"a folder of loose trace files ({', '.join(loose[:3])})", f"one folder per host: {moves}"
        elif held:
            what, fix = f"a folder of runs ({', '.join(held[:3])})", f"pass one of them, e.g. {os.path.join(run_dir, held[0])}"
        else:
            what, fix = "no run (no <host>/trace.dat under it)", f"copy each host's trace.dat to {run_dir}/<host>/trace.dat"
    raise NtscopeError(f"no host under {run_dir}: it is {what}; {RUN_LAYOUT}; fix: {fix}")


def prepared(run_dir, progress=None, quiet=False, verify=False):
    """The folder to read RUN_DIR's converted hosts from, every host converted: the run itself,
    or, when a host that needs converting cannot be written (a shared archive, a read-only
    mount), its stand-in in the cache (read_only.py)."""
    hosts = require_hosts(run_dir)
    if not read_only.writable(run_dir, hosts) and any(
            needs_converting(os.path.join(run_dir, h), verify) for h in hosts):
        where = read_only.stand_in(run_dir, hosts)
        read_only.note(run_dir, where, quiet)
        convert_missing(where, progress, quiet, verify)
        return where
    convert_missing(run_dir, progress, quiet, verify)
    return run_dir


def convert_missing(run_dir, progress=None, quiet=False, verify=False):
    """Converts every host of the run whose trace.dat has no parquet/ that is what the
    converter wrote from it (the one place that decides what needs converting; verify: hash
    every file, not only those whose stat changed). Returns the hosts converted."""
    hosts = require_hosts(run_dir)
    todo = [(h, why) for h in hosts for why in [needs_converting(os.path.join(run_dir, h), verify)] if why]
    if not todo:
        check_time_ranges(run_dir, hosts)
        return []
    binary = converter.path()
    for i, (host, why) in enumerate(todo):
        trace = os.path.join(run_dir, host, "trace.dat")
        make_room(os.path.join(run_dir, host))
        again = "" if why == "not converted yet" else f" again: {why}"
        if progress:
            progress.note(f"converting {host}/trace.dat ({i + 1}/{len(todo)})")
        if again or (not quiet and not progress):
            print(f"ntscope: converting {trace}{again}", file=sys.stderr)
        before = os.stat(trace)
        cmd = [binary, "convert", trace, "--out", os.path.join(run_dir, host, "parquet")]
        if progress is None or not progress.enabled:
            cmd.append("--no-progress")
        if quiet:
            cmd.append("--quiet")
        r = subprocess.run(cmd)
        if r.returncode not in (0, 1):   # 1: converted; losses are in metadata.json and in pipeline_stats
            raise NtscopeError(f"converting {trace} failed (exit {r.returncode}); see the converter's message above")
        if derived.stat_key(os.stat(trace)) != derived.stat_key(before):
            raise NtscopeError(f"{trace} changed while it was converted; fix: wait until it is complete (still "
                               "being copied?), then run the command again")
        derived.record(os.path.join(run_dir, host), before)
    check_time_ranges(run_dir, hosts)
    return [h for h, _ in todo]


def check_time_ranges(run_dir, hosts):
    """Refuses a host whose event times the views cannot hold (derived.time_range_problem)."""
    for h in hosts:
        problem = derived.time_range_problem(os.path.join(run_dir, h))
        if problem:
            raise NtscopeError(f"{problem}; fix: record the host again (just capture) on its own clock, without "
                               "a time correction (OFFSET, DATE, TSC2NSEC) that moves its times past 2^62 ns")
