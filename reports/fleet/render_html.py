"""fleet.html: the fleet report's tables as a page (the periods of the leading stage set, the
worst runs, the regressions), then the text report. Renders fleet.json; computes nothing."""
from ntscope.reports.plots.page import Page, esc

from .render_text import render as render_text, us


def render(doc):
    page = Page("ntscope fleet")
    page.heading(1, "ntscope fleet")
    p, sset = doc["params"], doc["stage_set"]
    page.add(f"<p>{doc['runs']['runs']} runs in <code>{esc(doc['warehouse'])}</code>; per {esc(p['subject'])} and "
             f"{esc(p['period'])}; stage set {esc(sset or '-')}; percentiles from the merged histograms, within "
             f"{100 * doc['hist_alpha']:.0f}% of the exact ones.</p>")
    page.heading(2, "Stages per period")
    page.table([p["subject"], "period", "stage", "I/Os", "p50 (us)", "p99 (us)"],
               [(r["subject_value"], str(r["period_start"]), r["stage"], f"{r['ios']:,}", us(r["p50_ns"]), us(r["p99_ns"]))
                for r in doc["periods"] if r["stage_set"] == sset], text_cols=(0, 1, 2))
    page.heading(2, "Worst runs (end_to_end p99)")
    page.table([p["subject"], "rank", "run", "I/Os", "p99 (us)", "findings", "worst finding"],
               [(r["subject_value"], r["rank"], r["run_id"], f"{r['ios']:,}", us(r["p99_ns"]), r["findings"],
                 r["worst_finding"] or "") for r in doc["worst_runs"] if r["stage_set"] == sset], text_cols=(0, 2, 6))
    if doc["regressions"]:
        page.heading(2, "Regressions against the baseline window")
        page.table([p["subject"], "stage", "p50 base", "p50", "change", "p99 base", "p99", "change"],
                   [(r["subject_value"], r["stage"], us(r["base_p50_ns"]), us(r["run_p50_ns"]), r["p50_change"],
                     us(r["base_p99_ns"]), us(r["run_p99_ns"]), r["p99_change"])
                    for r in doc["regressions"] if r["stage_set"] == sset], text_cols=(0, 1, 4, 7))
    page.heading(2, "Text report")
    page.add(f"<pre>{esc(render_text(doc))}</pre>")
    return page.render()
