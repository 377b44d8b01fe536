"""Recovery's part of `ntscope analyze` (reports/report/command.py): recovery.json,
recovery.txt, outages.parquet and path_events.parquet in the report set. Its text follows the report's on stdout
when a controller had an outage or a command failed."""
import json

from ntscope.reports.report.export import copy_query

STEM = "recovery"


def add_to_analysis(ctx):
    from ntscope.reports.recovery import model, render_text
    doc = model.build(ctx.con, ctx.run)
    text = render_text.render(doc)
    ctx.files.add(f"{STEM}.txt", text)
    ctx.files.add(f"{STEM}.json", json.dumps(doc, indent=1, default=str) + "\n")
    ctx.files.add("outages.parquet", lambda path: copy_query(
        ctx.con, "SELECT * FROM controller_outages ORDER BY host, outage_n", path))
    ctx.files.add("path_events.parquet", lambda path: copy_query(
        ctx.con, "SELECT * FROM path_events ORDER BY ts, host, path", path))
    if model.eventful(doc):
        ctx.more_text.append(text)
    ctx.results[STEM] = doc
