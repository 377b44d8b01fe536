"""`ntscope interference RUN`: interference.{txt,json,html} of one run alone (analyze writes the
same set beside its report: analyze_part.py)."""
from ntscope.common import command_line as cl, runs
from ntscope.common.errors import EXIT_OK
from ntscope.common.output import OutputLock
from ntscope.common.progress import Progress
from ntscope.common.text import printable


EXAMPLES = """examples:
  ntscope interference r1                 streams, who waited behind whom, queue depth over time"""   # under --help


def add_arguments(p):
    p.add_argument("run", help=cl.RUN_HELP)
    p.add_argument("--out", help="report folder (default RUN/report)")
    cl.add_common(p, cl.quiet_help("interference"))


def run(a):
    from ntscope.reports.interference import model, plot_data, render_html, render_text
    from ntscope.sql import views
    run_dir = runs.resolve(a.run)
    runs.require_hosts(run_dir)
    out = cl.report_folder(a.out, run_dir)
    with OutputLock(out), Progress(["convert", "views", "interference", "write"], enabled=cl.show_progress(a)) as p:
        p.step("converting hosts not converted yet")
        run_dir = runs.prepared(run_dir, progress=p, quiet=a.quiet, verify=a.verify)
        con = views.connect(run_dir, memory_limit=a.memory_limit, temp_dir=a.temp_dir, interference=True, progress=p)
        m = model.interference_model(con, run_dir)
        text = printable(render_text.interference_text(m))
        cl.write_three(out, "interference", text, m, render_html.interference_html(m, plot_data.build(con)), p)
    cl.announce_written(out, "interference", text, a.quiet, as_json=a.json)
    return EXIT_OK
