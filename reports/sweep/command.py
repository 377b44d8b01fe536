"""`ntscope sweep RUN RUN...`: a series of runs (iodepth 1, 4, 16 ...): stage means and LAD per
run, sweep.{txt,json,html} in the last run's report folder (or --out)."""
import os

from ntscope.common import command_line as cl, inputs, runs
from ntscope.common.errors import EXIT_OK, NtscopeError
from ntscope.common.output import OutputLock
from ntscope.common.progress import Progress
from ntscope.common.text import printable


EXAMPLES = """examples:
  ntscope sweep qd1 qd4 qd16 qd32         a series; the parameter from truth.json
  ntscope sweep a b c --param iodepth --values 1,8,32"""   # under --help


def add_arguments(p):
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="the runs of the series (names under $NTSCOPE_RUNS or paths), in the order to show them")
    p.add_argument("--param", help="order the runs by this parameter of their truth.json (lab params, else "
                                   "the first fio job's field: qd, iodepth, jobs ...)")
    p.add_argument("--values", help="the parameter's values, one per run in the order given (instead of truth.json)")
    p.add_argument("--out", help="report folder (default the last run given's report/, named on stderr); the "
                                 "same rule as analyze's --out: absent, empty, or a report folder ntscope wrote")
    cl.add_common(p, cl.quiet_help("sweep"))


def parse_values(text):
    """--values: the parameter's value of each run (None when not given)."""
    if not text:
        return None
    try:
        return [inputs.finite_float(v) for v in text.split(",")]
    except ValueError:
        raise NtscopeError(f"--values {text!r} is not a comma list of finite numbers; fix: e.g. "
                           "--values 1,4,16,32") from None


def run(a):
    from ntscope.reports.sweep import model, render_html, render_text
    run_dirs = [runs.resolve(r) for r in a.runs]
    runs.check_distinct(run_dirs, "sweep", "give each run of the series once")
    values = parse_values(a.values)
    for r in run_dirs:
        runs.require_hosts(r)
    out = cl.report_folder(a.out, run_dirs[-1])
    with OutputLock(out, "sweep"), Progress(["convert"] + ["views"] * len(run_dirs) + ["write"],
                                             enabled=cl.show_progress(a)) as p:
        p.step("converting hosts not converted yet")
        run_dirs = [runs.prepared(r, progress=p, quiet=a.quiet, verify=a.verify) for r in run_dirs]
        doc = model.sweep_model(run_dirs, a.param, values, progress=p,
                                memory_limit=a.memory_limit, temp_dir=a.temp_dir)
        text = printable(render_text.render(doc))
        cl.write_three(out, "sweep", text, doc, render_html.render(doc), p)
    cl.announce_written(out, "sweep", text, a.quiet,
                        "" if a.out else f" (the report folder of the last run given, {os.path.basename(run_dirs[-1])}: "
                                         "the default; --out DIR writes it elsewhere)", as_json=a.json)
    return EXIT_OK
