"""`ntscope compare BASE RUN`: latency amplification per stage, RUN vs BASE, with a verdict:
compare.{txt,json,html} in the RUN side's report folder (or --out); each side's input kept in
<run>/.ntscope/ for the next compare (side_cache)."""
from ntscope.common import command_line as cl, runs
from ntscope.common.errors import EXIT_OK
from ntscope.common.output import OutputLock
from ntscope.common.progress import Progress
from ntscope.common.text import printable


EXAMPLES = """examples:
  ntscope compare good slow               LAD per stage and a verdict, written beside slow/
  ntscope compare base1,base2,base3 run1,run2,run3    repeats of each condition
  ntscope compare good slow --group-by path       a verdict per multipath path
  ntscope compare good slow --json | jq '.verdicts[] | {group_key, verdict, cause_id}'"""   # under --help


def add_arguments(p):
    p.add_argument("base", help="the base run, or repeats of it: base1,base2,base3")
    p.add_argument("run", help="the run to explain, or repeats of it: run1,run2,run3 (report beside the first)")
    p.add_argument("--out", help="report folder (default RUN/report)")
    p.add_argument("--no-cache", action="store_true",
                   help="build both sides from their views and keep nothing in RUN/.ntscope/ (by default each "
                        "side is kept there and read back by the next compare of that run while its files "
                        "are unchanged)")
    add_param_flags(p)
    cl.add_common(p, cl.quiet_help("compare"))


def add_param_flags(p):
    """The knobs of the comparison (compare.json's params; params.py bounds them)."""
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
    g.add_argument("--group-by", metavar="FIELDS", help="compare each group of I/Os on its own, keyed as analyze "
                   "keys them: type, size, cpu, process, pid, tenant, class, path, cgroup, file, namespace, "
                   "target_device (default type,size); e.g. --group-by path")


def check_two_recordings(base, run):
    """fail() when a run of one side holds the same recording as a run of the other
    (runs.same_recording), else None."""
    for r in run:
        for b in base:
            how = runs.same_recording(b, r)
            if how:
                return cl.fail(f"{r} and {b} are one recording ({how}); fix: compare two different recordings (a run "
                               "compared with itself has no change to explain)")
    return None


def run(a):
    from ntscope.reports.compare import model, params as compare_params, render_html, render_text
    params = compare_params.from_flags({k: getattr(a, k) for k in compare_params.COLUMNS})   # before any work
    # each side: one run, or repeats of one condition (comma-separated); the report goes
    # beside the first run of the RUN side
    base, run_dirs = runs.resolve_list(a.base), runs.resolve_list(a.run)
    on_base = {runs.identity(b): b for b in base}
    both = [(r, on_base[runs.identity(r)]) for r in run_dirs if runs.identity(r) in on_base]
    if both:
        r, b = both[0]
        same = "" if r == b else f" (as {b} and {r}: the same folder)"
        return cl.fail(f"{r} is on both sides{same}; fix: give each run to one side only (a run compared with "
                       "itself has no change to explain)")
    one_recording = check_two_recordings(base, run_dirs)   # the same files: before converting anything
    if one_recording:
        return one_recording
    for r in base + run_dirs:
        runs.require_hosts(r)
    out = cl.report_folder(a.out, run_dirs[0])
    steps = ["convert", "views (base)", "interference (base)", "views (run)", "interference (run)", "LAD", "write"]
    with OutputLock(out, "comparison"), Progress(steps, enabled=cl.show_progress(a)) as p:
        p.step("converting hosts not converted yet")
        base = [runs.prepared(r, progress=p, quiet=a.quiet, verify=a.verify) for r in base]
        run_dirs = [runs.prepared(r, progress=p, quiet=a.quiet, verify=a.verify) for r in run_dirs]
        one_recording = check_two_recordings(base, run_dirs)   # copies: the traces' sha256, known once converted
        if one_recording:
            return one_recording
        m, plots = model.compare_documents(base, run_dirs, progress=p, plots=True, cache=not a.no_cache,
                                           memory_limit=a.memory_limit, temp_dir=a.temp_dir, params=params)
        text = printable(render_text.compare_text(m))
        cl.write_three(out, "compare", text, m, render_html.compare_html(m, plots), p)
    cl.announce_written(out, "compare", text, a.quiet, as_json=a.json)
    refused = [v for v in m["verdicts"] if v["verdict"] == "no verdict"]
    if refused:
        return cl.fail(f"no verdict: {refused[0]['evidence']}; fix: analyze each run (just analyze RUN) and "
                       "repair what its pipeline_stats lists as input_error, or trace both hosts")
    return EXIT_OK
