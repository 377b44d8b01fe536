"""Interference's part of `ntscope analyze` (reports/report/command.py): interference.{txt,json,html}
in the report set, its text after the report's; its document and plot rows in
ctx.results["interference"] for the parts after it (compare keeps them as the run's side)."""
import json

from ntscope.common.text import printable

STEM = "interference"
STEP = "interference report"   # a step of analyze's progress line


def add_analyze_arguments(p):
    p.add_argument("--no-interference", action="store_true",
                   help="skip the interference section (streams sharing queues/devices)")


def before_views(ctx):
    ctx.interference_views = not ctx.args.no_interference


def add_to_analysis(ctx):
    if ctx.args.no_interference:
        ctx.progress.step("interference report: skipped (--no-interference)", ctx.con)
        for ext in ("txt", "json", "html"):   # an earlier analyze's would sit beside a report they were not made with
            ctx.files.drop(f"{STEM}.{ext}")
        return
    # imported here: the command line builds analyze's flags from this module, and every command
    # (--help, a refusal) would otherwise load the chart library first (0.3 s of each start)
    from ntscope.reports.interference import model, plot_data, render_html, render_text
    ctx.progress.step("interference report (streams, plots, the input a later compare reads)", ctx.con)
    doc = model.interference_model(ctx.con, ctx.run)
    text = printable(render_text.interference_text(doc))
    ctx.more_text.append(text)
    ctx.files.add(f"{STEM}.txt", text)
    ctx.files.add(f"{STEM}.json", json.dumps(doc, indent=1, default=str))
    plots = plot_data.build(ctx.con)
    ctx.files.add(f"{STEM}.html", render_html.interference_html(doc, plots))
    ctx.results[STEM] = (doc, plots)
