"""sweep.html: per group, the stage breakdown at each point of the series (stacked bars,
the paper's Figure 6) and the LAD of each stage across the series (lines, Figure 7), then
the text report. Renders sweep.json; computes nothing."""
from ntscope.reports.plots import charts
from ntscope.reports.plots.page import Page, esc
from ntscope.reports.plots.units import us

from .render_text import render as render_text


def render(doc):
    page = Page("ntscope sweep")
    page.heading(1, "ntscope sweep")
    page.add(f"<p>stage set {esc(doc['stage_set'])}; ordered by {esc(doc['param'] or 'the order given')}: "
             + ", ".join(f"<code>{esc(r['label'])}</code>" for r in doc["runs"]) + "</p>")
    groups = list(dict.fromkeys(p["group_key"] for p in doc["points"]))
    for gi, g in enumerate(groups):
        pts = [p for p in doc["points"] if p["group_key"] == g]
        page.heading(2, g)
        bars = [{"label": p["label"], "stage": p["stage"], "seq": p["seq"], "value_us": us(p["mean_ns"]),
                 "n": p["count"], "share_pct": None} for p in pts if not p["parent"] and p["stage"] != "end_to_end"]
        ticks = [{"label": p["label"], "stage": p["stage"], "seq": p["seq"], "value_us": us(p["mean_ns"]),
                  "n": p["count"], "share_pct": None} for p in pts if p["stage"] == "end_to_end"]
        order = [r["label"] for r in doc["runs"]]
        page.how("Where the time goes at each point of the series: top-level stage means, stacked; the "
                 "black tick is end_to_end's mean, measured directly.")
        if bars:
            page.chart(f"breakdown-{gi}", "breakdown", charts.stacked_bars(
                bars, "label", "run", order, "mean per I/O (us)", ticks=ticks))
        else:
            page.nodata("breakdown", "no top-level stage with durations")
        lads = [{"stage": p["stage"], "seq": p["seq"], "label": p["label"], "run_idx": p["run_idx"],
                 "lad": p["lad_mean"], "mean_us": us(p["mean_ns"])}
                for p in pts if p["lad_mean"] is not None and p["lad_mean"] > 0]
        page.how("LAD of each stage's mean against the first run: the stage whose line climbs is the "
                 "queue that builds up as the load grows.")
        if lads:
            page.chart(f"lad-{gi}", "lad_lines", charts.lad_lines(lads, f"LAD per stage, {g}"))
        else:
            page.nodata("lad_lines", "no stage with a mean above 0 at the first run")
    page.heading(2, "Text report")
    page.add(f"<pre>{esc(render_text(doc))}</pre>")
    return page.render()
