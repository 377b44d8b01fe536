"""`ntscope COMMAND` (or `python3 -m ntscope COMMAND`): the front door (the justfile's recipes call it).

  convert RUN                 a run: every <host>/trace.dat not converted yet (or changed since)
                              -> <host>/parquet/, each by `ntscope-analyzer convert` (the
                              converter binary, one trace.dat at a time), checksums recorded
  analyze RUN [filters]       report.{txt,json,html}, io.parquet, io_stages.parquet,
                              timeline.perfetto-trace, interference.* in RUN/report/; the run's
                              compare input in RUN/.ntscope/ (compare)
  compare BASE RUN            compare.{txt,json,html} in RUN/report/: LAD per stage and a verdict;
                              each side's input kept in <run>/.ntscope/ for the next compare
  interference RUN            interference.{txt,json,html} in RUN/report/
  sweep RUN RUN...            a series of runs (iodepth 1, 4, 16 ...): stage means and LAD per run
  sql RUN [-c SQL]            the views of RUN in DuckDB's shell, or statements from -c / stdin
  demo                        a bundled real capture -> runs/demo -> report

Exit status: 0 ok; 1 data loss (lost events or unmatched commands) under --strict;
2 fatal (the message on stderr says what, where, the value and the fix; nothing that
looks complete is left behind)."""
import argparse
import json
import os
import stat
import sys

from . import help_text
from .common import converter, inputs, out_folder, read_only, runs
from .common.errors import EXIT_DATA_LOSS, EXIT_FATAL, EXIT_OK, NtscopeError
from .common.output import OutputLock, ReportSet
from .progress import Progress
from .text import EscapingStream, printable


def fail(msg):
    print(f"ntscope: error: {msg}", file=sys.stderr)
    return EXIT_FATAL


def write_three(out, stem, text, doc, html, progress):
    """STEM.txt, STEM.json and STEM.html swapped into `out` as one set."""
    files = ReportSet(out)
    files.add(f"{stem}.txt", text)
    files.add(f"{stem}.json", json.dumps(doc, indent=1, default=str))
    files.add(f"{stem}.html", html)
    progress.step("writing the report set")
    files.commit()


def report_folder(out_arg, run):
    """The folder a report set goes to (--out, else RUN/report), checked before any work:
    one ntscope may write (out_folder.check_target)."""
    runs.host_dirs(run)   # a host folder named report is said as such, not as a refused output
    out = os.path.abspath(out_arg) if out_arg else os.path.join(run, runs.REPORT_DIR)
    out_folder.check_target(out, out_folder.REPORT)
    return out


def announce_written(out, stem, text, quiet, why="", as_json=False):
    """The text report on stdout (unless quiet; as_json: the JSON document written instead, byte
    for byte), and where the set went on stderr (why: a note on why there, for a default folder
    that is not the obvious one)."""
    if as_json:
        with open(os.path.join(out, f"{stem}.json")) as f:
            sys.stdout.write(f.read() + "\n")
    elif not quiet:
        sys.stdout.write(text)
    print(f"ntscope: wrote {out}/{stem}.{{txt,json,html}}{why}", file=sys.stderr)


# ------------------------------------------------------------------ convert
def cmd_convert(a):
    run = runs.resolve(a.run)
    with Progress(["convert"], enabled=show_progress(a)) as p:
        hosts = runs.require_hosts(run)
        if not read_only.writable(run, hosts):   # converted into its stand-in in the cache
            run = read_only.stand_in(run, hosts)
            read_only.note(a.run, run, a.quiet)
        done = runs.convert_missing(run, progress=p, quiet=a.quiet, verify=a.verify)
    if not a.quiet:
        print(f"ntscope: converted {', '.join(done) if done else 'nothing (every host is up to date)'} in {run}",
              file=sys.stderr)
    return EXIT_OK


# ------------------------------------------------------------------ analyze
ANALYZE_STEPS = ["convert", "views", "interference", "report model", "interference report", "write"]


def spec_from_args(a):
    from ntscope.reports.report import spec as specmod
    kw = dict(types=a.type, sizes=a.size, devices=a.device, queues=a.queue, cpus=a.cpu,
              processes=a.process, streams=a.stream, hosts=a.host, targets=a.target, window=a.window, group_by=a.group_by,
              time_bucket_s=a.time_bucket, stage_sets=a.stage_set, slos=a.slo,
              percentiles=a.percentiles)
    if a.spec:   # a flag given overrides the file's value
        return specmod.Spec.from_toml(a.spec, **kw)
    return specmod.Spec(**{k: v for k, v in kw.items() if v is not None})


def cmd_analyze(a):
    from ntscope.reports.compare import load as compare_load, side_cache
    from ntscope.reports.interference import model as imodel, plot_data as iplot, render_html as ihtml, render_text as itext
    from ntscope.reports.report import export, model, plot_data, render_html, render_text, selection
    from ntscope.reports.slo import objectives as slo
    from ntscope.reports.timeline import perfetto_trace as timeline
    from ntscope.sql import views
    run = runs.resolve(a.run)
    runs.require_hosts(run)   # before the lock file: nothing is written into a folder that is no run
    out = report_folder(a.out, run)
    spec = spec_from_args(a)
    with OutputLock(out), Progress(ANALYZE_STEPS, enabled=show_progress(a)) as p:
        p.step("converting hosts not converted yet")
        run = runs.prepared(run, progress=p, quiet=a.quiet, verify=a.verify)
        # a later compare reads the side with the default milestones: keep only that one
        keep_side = not a.no_interference and not a.no_cache and a.milestones in (None, "auto")
        run_key = side_cache.key(run) if keep_side else None   # before the views read the files
        con = views.connect(run, memory_limit=a.memory_limit, temp_dir=a.temp_dir,
                            interference=not a.no_interference, progress=p, milestones=a.milestones)
        p.step("report model (groups, stage statistics, histograms; the timeline's order)", con)
        selection.apply(con, spec)
        slo.load(con, spec.slos)
        doc = model.build(con, spec)
        files = ReportSet(out)
        try:
            timeline.stage_set_of(con, doc)
            # its encoder (a process of its own) runs from here on, beside the rendering below and
            # the per-I/O Parquet that DuckDB writes at commit
            files.start(timeline.FILE_NAME, lambda path: timeline.start(con, path))
            text = printable(render_text.render(doc, run))
            files.add("report.json", json.dumps(doc, indent=1, default=str) + "\n")
            files.add("report.html", render_html.render(doc, plot_data.build(con, doc)))
            files.add("io.parquet", lambda path: export.write_io(con, path))
            files.add("io_stages.parquet", lambda path: export.write_stages(con, path, doc["stage_sets"]))
            p.step("interference report: skipped (--no-interference)" if a.no_interference else
                   "interference report (streams, plots, the input a later compare reads)", con)
            if not a.no_interference:
                m = imodel.interference_model(con, run)
                itxt = printable(itext.interference_text(m))
                text += "\n" + itxt
                files.add("interference.txt", itxt)
                files.add("interference.json", json.dumps(m, indent=1, default=str))
                iplots = iplot.build(con)
                files.add("interference.html", ihtml.interference_html(m, iplots))
                if keep_side:   # a later compare of this run reads its side from there (side_cache)
                    compare_load.keep_analyzed_side(con, run, run_key, m, iplots)
            else:   # an earlier analyze's interference.* would sit beside a report they were not made with
                for ext in ("txt", "json", "html"):
                    files.drop(f"interference.{ext}")
            files.add("report.txt", text)
            p.step("writing the report set (per-I/O Parquet, timeline)")
            written = files.commit()
        except BaseException:
            files.abort()
            raise
    if getattr(a, "json", False):
        with open(os.path.join(out, "report.json")) as f:
            sys.stdout.write(f.read() + "\n")
    elif not a.quiet:
        sys.stdout.write(text)
    print(f"ntscope: wrote {out}/{{{','.join(sorted(os.path.basename(w) for w in written))}}}", file=sys.stderr)
    hint = timeline.size_hint(os.path.join(out, timeline.FILE_NAME))
    if hint:
        print(f"ntscope: note: {hint}", file=sys.stderr)
    bad = [s["name"] for s in doc["pipeline_stats"] if s["name"].startswith("input_error:")]
    if bad:
        return fail(f"the run's inputs are inconsistent ({', '.join(bad)}); the report lists what is wrong "
                    "and its numbers are not to be trusted; fix: see the INPUT ERROR lines of report.txt")
    loss = [s for s in doc["pipeline_stats"] if s["severity"] != "info" and
            (s["name"].startswith(("lost_events", "unmatched", "data_loss:")) or s["name"] == "matched_pct")]
    if a.strict and loss:
        shown = ", ".join(f"{s['name']} {s['value']}" for s in loss[:4]) + (f" (and {len(loss) - 4} more)" if len(loss) > 4 else "")
        print(f"ntscope: --strict: exit 1: the run lost data or left commands unmatched ({shown}); the report says "
              "what each means (pipeline_stats); fix: record again as its fix says, or drop --strict to accept them",
              file=sys.stderr)
        return EXIT_DATA_LOSS
    return EXIT_OK


# ------------------------------------------------------------------ compare / interference
def check_two_recordings(base, run):
    """fail() when a run of one side holds the same recording as a run of the other
    (runs.same_recording), else None."""
    for r in run:
        for b in base:
            how = runs.same_recording(b, r)
            if how:
                return fail(f"{r} and {b} are one recording ({how}); fix: compare two different recordings (a run "
                            "compared with itself has no change to explain)")
    return None


def cmd_compare(a):
    from ntscope.reports.compare import model, params as compare_params, render_html, render_text
    params = compare_params.from_flags({k: getattr(a, k) for k in compare_params.COLUMNS})   # before any work
    # each side: one run, or repeats of one condition (comma-separated); the report goes
    # beside the first run of the RUN side
    base, run = runs.resolve_list(a.base), runs.resolve_list(a.run)
    on_base = {runs.identity(b): b for b in base}
    both = [(r, on_base[runs.identity(r)]) for r in run if runs.identity(r) in on_base]
    if both:
        r, b = both[0]
        same = "" if r == b else f" (as {b} and {r}: the same folder)"
        return fail(f"{r} is on both sides{same}; fix: give each run to one side only (a run compared with "
                    "itself has no change to explain)")
    one_recording = check_two_recordings(base, run)   # the same files: before converting anything
    if one_recording:
        return one_recording
    for r in base + run:
        runs.require_hosts(r)
    out = report_folder(a.out, run[0])
    steps = ["convert", "views (base)", "interference (base)", "views (run)", "interference (run)", "LAD", "write"]
    with OutputLock(out, "comparison"), Progress(steps, enabled=show_progress(a)) as p:
        p.step("converting hosts not converted yet")
        base = [runs.prepared(r, progress=p, quiet=a.quiet, verify=a.verify) for r in base]
        run = [runs.prepared(r, progress=p, quiet=a.quiet, verify=a.verify) for r in run]
        one_recording = check_two_recordings(base, run)   # copies: the traces' sha256, known once converted
        if one_recording:
            return one_recording
        m, plots = model.compare_documents(base, run, progress=p, plots=True, cache=not a.no_cache,
                                           memory_limit=a.memory_limit, temp_dir=a.temp_dir, params=params)
        text = printable(render_text.compare_text(m))
        write_three(out, "compare", text, m, render_html.compare_html(m, plots), p)
    announce_written(out, "compare", text, a.quiet, as_json=a.json)
    refused = [v for v in m["verdicts"] if v["verdict"] == "no verdict"]
    if refused:
        return fail(f"no verdict: {refused[0]['evidence']}; fix: analyze each run (just analyze RUN) and "
                    "repair what its pipeline_stats lists as input_error, or trace both hosts")
    return EXIT_OK


def cmd_interference(a):
    from ntscope.reports.interference import model, plot_data, render_html, render_text
    from ntscope.sql import views
    run = runs.resolve(a.run)
    runs.require_hosts(run)
    out = report_folder(a.out, run)
    with OutputLock(out), Progress(["convert", "views", "interference", "write"], enabled=show_progress(a)) as p:
        p.step("converting hosts not converted yet")
        run = runs.prepared(run, progress=p, quiet=a.quiet, verify=a.verify)
        con = views.connect(run, memory_limit=a.memory_limit, temp_dir=a.temp_dir, interference=True, progress=p)
        m = model.interference_model(con, run)
        text = printable(render_text.interference_text(m))
        write_three(out, "interference", text, m, render_html.interference_html(m, plot_data.build(con)), p)
    announce_written(out, "interference", text, a.quiet, as_json=a.json)
    return EXIT_OK


# ------------------------------------------------------------------ sweep
def cmd_sweep(a):
    from ntscope.reports.sweep import model, render_html, render_text
    run_dirs = [runs.resolve(r) for r in a.runs]
    runs.check_distinct(run_dirs, "sweep", "give each run of the series once")
    values = None
    if a.values:
        try:
            values = [inputs.finite_float(v) for v in a.values.split(",")]
        except ValueError:
            raise NtscopeError(f"--values {a.values!r} is not a comma list of finite numbers; fix: e.g. "
                               "--values 1,4,16,32") from None
    for r in run_dirs:
        runs.require_hosts(r)
    out = report_folder(a.out, run_dirs[-1])
    with OutputLock(out, "sweep"), Progress(["convert"] + ["views"] * len(run_dirs) + ["write"],
                                             enabled=show_progress(a)) as p:
        p.step("converting hosts not converted yet")
        run_dirs = [runs.prepared(r, progress=p, quiet=a.quiet, verify=a.verify) for r in run_dirs]
        doc = model.sweep_model(run_dirs, a.param, values, progress=p,
                                memory_limit=a.memory_limit, temp_dir=a.temp_dir)
        text = printable(render_text.render(doc))
        write_three(out, "sweep", text, doc, render_html.render(doc), p)
    announce_written(out, "sweep", text, a.quiet,
                     "" if a.out else f" (the report folder of the last run given, {os.path.basename(run_dirs[-1])}: "
                                      "the default; --out DIR writes it elsewhere)", as_json=a.json)
    return EXIT_OK


# ------------------------------------------------------------------ sql
SCRIPT_HEADER = "-- ntscope view script (ntscope sql --script)"   # the first line of every script sql writes


def script_target(path):
    """Where `sql --script PATH` may write (None: '-', stdout): a new file, or a script it wrote
    before (its first line is SCRIPT_HEADER); never a file inside a run's inputs or outputs."""
    if path == "-":
        return None
    fix = "pass --script a new file name outside the run (or - for stdout)"
    inside = (out_folder.part_of_a_run(path) or out_folder.part_of_a_run_output(path)
              or out_folder.inside_a_run(os.path.dirname(os.path.abspath(path))))
    if inside:
        raise NtscopeError(f"refusing to write the view script to {path}: {inside}; fix: {fix}")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return os.path.abspath(path)
    except OSError as e:
        raise NtscopeError(f"cannot inspect --script {path}: {e.strerror}; fix: {fix}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise NtscopeError(f"refusing to write the view script to {path}: it is {kind}; fix: {fix}")
    try:
        with open(path, "rb") as f:
            first = f.read(len(SCRIPT_HEADER))
    except OSError as e:
        raise NtscopeError(f"cannot read --script {path}: {e.strerror}; fix: {fix}") from None
    if first != SCRIPT_HEADER.encode():
        raise NtscopeError(f"refusing to write the view script to {path}: it exists ({st.st_size} bytes) and is not a "
                           f"script ntscope wrote (its first line is not {SCRIPT_HEADER!r}); fix: {fix}, or remove "
                           "it yourself")
    return os.path.abspath(path)


def cmd_sql(a):
    from ntscope.sql import csv_runner, views
    run = runs.prepared(runs.resolve(a.run), quiet=True, verify=a.verify)
    if a.script:
        target = script_target(a.script)
        text = SCRIPT_HEADER + f" of {printable(run)!r}; load it in DuckDB, e.g. duckdb -init FILE\n" + views.build_script(run, milestones=a.milestones)
        if target is None:
            sys.stdout.write(text)
        else:
            from .common.output import write_text
            write_text(target, text)
        return EXIT_OK
    from ntscope.sql import guards
    out = None if a.unrestricted else guards.out_dir(a.out, run)
    if a.shell or (a.command is None and sys.stdin.isatty()):
        from ntscope.sql import shell
        return shell.run(run, memory_limit=a.memory_limit, temp_dir=a.temp_dir, milestones=a.milestones,
                         out=out, unrestricted=a.unrestricted)
    # -c or statements on stdin: the reports' own DuckDB connection, results as CSV
    con = views.connect(run, memory_limit=a.memory_limit, temp_dir=a.temp_dir, interference=True,
                        milestones=a.milestones)
    if not a.unrestricted:
        guards.apply(con, run, out)
    return csv_runner.run_script(con, a.command if a.command is not None else sys.stdin.read())


# ------------------------------------------------------------------ demo
def cmd_demo(a):
    from . import demo
    root = converter.checkout_root()
    if not root:
        raise NtscopeError("demo needs the source checkout (its fixtures/); fix: run it from a clone of ntscope")
    dst = os.path.join(runs.runs_dir(), "demo")
    try:
        demo.place(os.path.join(root, "fixtures", demo.FIXTURE), dst)
    except OSError as e:
        raise NtscopeError(f"cannot place the demo run in {dst}: {e.strerror} ({e.filename}); fix: check that "
                           f"{os.path.dirname(dst)} is a writable folder, or set NTSCOPE_RUNS") from None
    a.run = dst
    return cmd_analyze(a)


# ------------------------------------------------------------------ arguments
def show_progress(a):
    return False if a.no_progress else None  # None: on a TTY only


def add_analyze_flags(p):
    p.add_argument("--spec", help="TOML spec file ([filter], [group], [stages]); flags override it")
    p.add_argument("--type", help="I/O types, e.g. read or read,write")
    p.add_argument("--size", help="sizes: 4k exact, 4k-128k range, >=32k (comma list: any)")
    p.add_argument("--device", help="block devices as the reports print them, e.g. initiator/nvme0n1 (or the disk "
                                    "alone, nvme0n1, when one initiator has it)")
    p.add_argument("--queue", help="transport queues as the reports print them, e.g. initiator/c0/q1,initiator/c0/q2 "
                                   "(or the qid alone, 1, when the run has one initiator)")
    p.add_argument("--cpu", help="submitting CPUs")
    p.add_argument("--process", help="process names or pids (the bio's owner)")
    p.add_argument("--stream", help="streams as interference prints them, e.g. 'fio/117 read 4096B' "
                                    "(process/pid, type, size)")
    p.add_argument("--host", help="initiator hosts (their run folders), e.g. initiator")
    p.add_argument("--target", help="target hosts (their run folders), e.g. target")
    p.add_argument("--window", help="START:END seconds from the first I/O, e.g. 1:4 or 2:")
    p.add_argument("--group-by", help="fields: type,size,device,queue,cpu,process,pid,host,target,time (default type,size)")
    p.add_argument("--time-bucket", type=float, help="seconds per group when grouping by time (default 1; "
                   "overrides a spec file's time_bucket_s)")
    p.add_argument("--stage-set", help="stage sets to report (stock, ntprof, s_notation, or all); default: report.json and "
                        "report.html hold every set the run has, report.txt prints the primary one "
                        "(ntprof with NVMe/TCP events, else stock)")
    p.add_argument("--percentiles", metavar="LIST",
                   help="the percentiles of each stage, e.g. 50,90,99,99.9 (above 0, up to 100; default "
                        "10,50,70,80,90,95,99,99.9): report.txt's columns and report.json's stages[].percentiles")
    p.add_argument("--slo", action="append", metavar="OBJECTIVE",
                   help="an objective, e.g. 'read,4k: p99 <= 2ms' or 'write: target_device p90 < 500us' "
                        "(repeatable): met or missed, per second, and the worst I/Os")
    p.add_argument("--strict", action="store_true", help="exit 1 when events were lost or commands unmatched")
    p.add_argument("--no-interference", action="store_true",
                   help="skip the interference section (streams sharing queues/devices)")
    p.add_argument("--no-cache", action="store_true",
                   help="keep nothing in RUN/.ntscope/ (by default analyze keeps the run's compare input "
                        "there: a later compare of the run reads it instead of building the views again)")
    add_milestones_flag(p)


def add_compare_param_flags(p):
    """The knobs of the comparison (compare.json's params; reports/compare/params.py bounds them)."""
    g = p.add_argument_group("statistics (compare.json's params; defaults in sql/compare/params.sql)")
    g.add_argument("--resamples", metavar="N", help="bootstrap resamples per run, group and stage (default 200; "
                   "50..100000; each end of an interval needs 5 resamples beyond it: 1000 for 99%%)")
    g.add_argument("--confidence", metavar="LEVEL", help="confidence level of every interval, e.g. 0.99 or 99%% "
                   "(default 0.95; 0.5..0.999)")
    g.add_argument("--min-rel-change", metavar="FRACTION", help="a change smaller than this share of the base is "
                   "no significant change, e.g. 0.05 or 5%% (default 0.10)")
    g.add_argument("--min-abs-change", metavar="DURATION", help="a change of a mean smaller than this is no "
                   "significant change, e.g. 50us (default 20us; units ns, us, ms, s)")
    g.add_argument("--seed", metavar="N", help="the bootstrap's hash seed: same seed, same intervals (default 42)")


def add_verify_flag(p):
    p.add_argument("--verify", action="store_true",
                   help="check every trace.dat and event file against the checksums in metadata.json (a full read) "
                        "instead of only the files whose size, times or inode changed since conversion")


# --quiet of each command: what it leaves out (warnings, errors and the line naming what was written
# still go to stderr)
QUIET_HELP = {
    "convert": "do not print which hosts were converted, nor the converter's one-line result per host "
               "(warnings and errors still print)",
    "analyze": "do not print report.txt on stdout (the report set is still written; its folder is named on stderr)",
    "demo": "do not print report.txt on stdout (the report set is still written; its folder is named on stderr)",
    "compare": "do not print compare.txt on stdout (the report set is still written; its folder is named on stderr)",
    "interference": "do not print interference.txt on stdout (the report set is still written; its folder is named "
                    "on stderr)",
    "sweep": "do not print sweep.txt on stdout (the report set is still written; its folder is named on stderr)",
}


def add_common(p, command, memory=True):
    p.add_argument("--quiet", action="store_true", help=QUIET_HELP[command])
    if command != "convert":
        p.add_argument("--json", action="store_true", help="print the JSON document (what the set's .json file holds) "
                       "on stdout instead of the text report, for scripts and jq")
    add_verify_flag(p)
    p.add_argument("--no-progress", action="store_true", help="no progress line even on a terminal")
    if memory:
        add_memory_flags(p)


def add_milestones_flag(p):
    """--milestones: where a host that recorded both the patched events and the capture's probes
    takes its NVMe/TCP milestones from (sql/core/events.sql, host_milestones)."""
    p.add_argument("--milestones", default=None, choices=("auto", "tracepoint", "probe"),
                   help="NVMe/TCP milestones of a host that recorded both: auto (default: the patched events), "
                        "tracepoint, or probe (the capture's probes; the lab's agreement check)")


def add_memory_flags(p):
    """--memory-limit / --temp-dir: DuckDB's bound and spill folder (ntscope.sql.connection.new_connection)."""
    p.add_argument("--memory-limit", default=None,
                   help="DuckDB memory limit per connection, e.g. 3GB, 500MB; beyond it DuckDB spills to disk "
                        "(default $NTSCOPE_MEMORY_LIMIT, else 2GB or half the RAM of a smaller machine; "
                        "none: DuckDB's own default, 80%% of RAM)")
    p.add_argument("--temp-dir", default=None,
                   help="folder under which a private spill folder is made and removed afterwards "
                        "(default $NTSCOPE_TEMP_DIR, else TMPDIR or /tmp)")


def parser():
    ap = argparse.ArgumentParser(prog="ntscope", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    from . import __version__
    ap.add_argument("-V", "--version", action="version", version=f"ntscope {__version__}")
    sub = ap.add_subparsers(dest="command_name", required=True, metavar="COMMAND")
    sub.required = True
    c = sub.add_parser("convert", help="a run's hosts: each <host>/trace.dat not converted yet -> <host>/parquet/ "
                                       "(by `ntscope-analyzer convert`, which converts one trace.dat)")
    c.add_argument("run", help="run name under $NTSCOPE_RUNS (default ./runs) or a path")
    add_common(c, "convert", memory=False)
    c.set_defaults(fn=cmd_convert)
    an = sub.add_parser("analyze", help="where each I/O's time went: report.{txt,json,html}")
    an.add_argument("run", help="run name under $NTSCOPE_RUNS (default ./runs) or a path")
    an.add_argument("--out", help="report folder (default RUN/report)")
    add_analyze_flags(an)
    add_common(an, "analyze")
    an.set_defaults(fn=cmd_analyze)
    cp = sub.add_parser("compare", help="latency amplification per stage, RUN vs BASE, with a verdict")
    cp.add_argument("base", help="the base run, or repeats of it: base1,base2,base3")
    cp.add_argument("run", help="the run to explain, or repeats of it: run1,run2,run3 (report beside the first)")
    cp.add_argument("--out", help="report folder (default RUN/report)")
    cp.add_argument("--no-cache", action="store_true",
                    help="build both sides from their views and keep nothing in RUN/.ntscope/ (by default each "
                         "side is kept there and read back by the next compare of that run while its files "
                         "are unchanged)")
    add_compare_param_flags(cp)
    add_common(cp, "compare")
    cp.set_defaults(fn=cmd_compare)
    it = sub.add_parser("interference", help="streams of a run and who waited behind whom")
    it.add_argument("run", help="run name under $NTSCOPE_RUNS (default ./runs) or a path")
    it.add_argument("--out", help="report folder (default RUN/report)")
    add_common(it, "interference")
    it.set_defaults(fn=cmd_interference)
    sw = sub.add_parser("sweep", help="a run series: stage means and LAD per run (the paper's Figures 6 and 7)")
    sw.add_argument("runs", nargs="+", metavar="RUN",
                    help="the runs of the series (names under $NTSCOPE_RUNS or paths), in the order to show them")
    sw.add_argument("--param", help="order the runs by this parameter of their truth.json (lab params, else "
                                    "the first fio job's field: qd, iodepth, jobs ...)")
    sw.add_argument("--values", help="the parameter's values, one per run in the order given (instead of truth.json)")
    sw.add_argument("--out", help="report folder (default the last run given's report/, named on stderr); the "
                                  "same rule as analyze's --out: absent, empty, or a report folder ntscope wrote")
    add_common(sw, "sweep")
    sw.set_defaults(fn=cmd_sweep)
    sq = sub.add_parser("sql", help="the views of a run in DuckDB's shell, or SQL from -c / stdin as CSV")
    sq.add_argument("run", help="run name under $NTSCOPE_RUNS (default ./runs) or a path")
    how = sq.add_mutually_exclusive_group()
    how.add_argument("-c", "--command", help="run these SQL statements, print results as CSV, exit 2 on error")
    how.add_argument("--shell", action="store_true", help="open DuckDB's shell even when stdin is not a terminal "
                     "(dot commands such as .mode from a file or pipe)")
    sq.add_argument("--script", metavar="FILE", help="write the whole view script to FILE instead (- for stdout): a new "
                    "file or one an earlier --script wrote, never a file of a run")
    sq.add_argument("--out", metavar="DIR", help="a folder SQL may write files to (COPY ... TO 'DIR/x.csv'), created "
                    "when missing; never inside a run. Without it SQL reads only the run's converted files "
                    "and writes nothing (README: What SQL may touch)")
    sq.add_argument("--unrestricted", action="store_true", help="lift the guards: SQL may read and write any "
                    "file you may (a run's trace.dat included), load extensions, and the shell's .read, "
                    ".output and .shell work")
    add_milestones_flag(sq)
    add_memory_flags(sq)
    add_verify_flag(sq)
    sq.set_defaults(fn=cmd_sql)
    dm = sub.add_parser("demo", help="a bundled real two-host capture -> runs/demo -> report")
    add_analyze_flags(dm)
    add_common(dm, "demo")
    dm.set_defaults(fn=cmd_demo, out=None)
    co = sub.add_parser("completion", help="print a shell completion script (bash or zsh) for ntscope")
    co.add_argument("shell", choices=("bash", "zsh"))
    co.set_defaults(fn=cmd_completion)
    mn = sub.add_parser("man", help="print the ntscope(1) man page (roff), made from these --help texts")
    mn.set_defaults(fn=cmd_man)
    for name, p in sub.choices.items():
        p.epilog = help_text.EXAMPLES.get(name)
        p.formatter_class = argparse.RawDescriptionHelpFormatter
    return ap


def cmd_man(a):
    from . import __version__
    sys.stdout.write(help_text.man_page(parser(), __version__))
    return EXIT_OK


def cmd_completion(a):
    sys.stdout.write(help_text.completion_script(parser(), a.shell))
    return EXIT_OK


# spellings users type for a command (British English, other tools' words)
ALIASES = {"analyse": "analyze", "report": "analyze", "diff": "compare", "shell": "sql", "query": "sql"}


def did_you_mean(argv, commands):
    """exit 2 with the command meant, when ARGV's first word is a near miss of one."""
    import difflib
    word = next((w for w in argv if not w.startswith("-")), None)
    if word is None or word in commands:
        return
    guess = ALIASES.get(word) or next(iter(difflib.get_close_matches(word, commands, n=1, cutoff=0.75)), None)
    if guess:
        print(f"ntscope: error: no command {word!r}; did you mean {guess!r}? fix: ntscope {guess} ... "
              f"(commands: {', '.join(commands)})", file=sys.stderr)
        sys.exit(2)


def main(argv=None):
    ap = parser()
    commands = [c for act in ap._subparsers._group_actions for c in act.choices]
    did_you_mean(sys.argv[1:] if argv is None else list(argv), commands)
    a = ap.parse_args(argv)
    streams = sys.stdout, sys.stderr
    # names from runs and traces are data: no message or terminal report carries a terminal
    # sequence (progress draws on the original stderr, its label escaped there)
    sys.stderr = EscapingStream(sys.stderr)
    if sys.stdout.isatty():
        sys.stdout = EscapingStream(sys.stdout)
    try:
        with views_interrupt():
            return run_command(a)
    except KeyboardInterrupt:
        return interrupted()
    finally:
        sys.stdout, sys.stderr = streams


def interrupted():
    print("ntscope: interrupted; nothing was written under a final name", file=sys.stderr)
    return 130


def views_interrupt():
    from ntscope.sql import interrupts
    return interrupts.InterruptQueries()


def run_command(a):
    try:
        return a.fn(a)
    except NtscopeError as e:
        return fail(str(e))
    except KeyboardInterrupt:
        return interrupted()
    except Exception as e:  # noqa: BLE001 - every failure exits 2 with a message, never 1
        import duckdb
        if os.environ.get("NTSCOPE_DEBUG"):   # the traceback the messages below offer
            raise
        from ntscope.sql import interrupts
        if interrupts.query_interrupted(e):   # Ctrl-C stopped a query (interrupts.InterruptQueries, or DuckDB itself)
            return interrupted()
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if isinstance(e, duckdb.OutOfMemoryException):
            from ntscope.sql import memory_policy
            return fail(f"DuckDB ran out of memory ({first}) at memory limit "
                        f"{memory_policy.memory_limit_setting(getattr(a, 'memory_limit', None))}; fix: a larger --memory-limit "
                        "(or NTSCOPE_MEMORY_LIMIT; below ~200MB DuckDB cannot run the views), and free space "
                        "for its spill files under --temp-dir / TMPDIR; NTSCOPE_DEBUG=1 shows where")
        if isinstance(e, duckdb.IOException) and ("No space left" in str(e) or "Disk" in first):
            return fail(f"DuckDB could not write ({first}); fix: free disk space where it writes: the output folder, "
                        "and its spill folder under --temp-dir / NTSCOPE_TEMP_DIR / TMPDIR")
        if isinstance(e, duckdb.Error):
            # the run's event files are checked against metadata.json before the views read them
            # (runs.convert_missing), so the cause is rarely there: say what failed, not a guess
            return fail(f"DuckDB failed ({type(e).__name__}): {first}; fix: if it names a value you gave (a flag, "
                        "a spec file), give one in range; if it names a Parquet file of the run, run again with "
                        "--verify (every file checked against metadata.json, what differs converted again); else "
                        "report it with the command line (NTSCOPE_DEBUG=1 shows the traceback)")
        if isinstance(e, OSError) and e.errno is not None:
            from .common.output import fail_on_os_error
            try:
                fail_on_os_error("cannot read or write", e.filename or "a file", e)
            except NtscopeError as err:
                return fail(str(err))
        return fail(f"internal error ({type(e).__name__}: {e}); this is a bug: please report it with the "
                    "command line; set NTSCOPE_DEBUG=1 for the traceback")
