"""compare.html: per group the verdict, the LAD per stage (log scale, CI whiskers at the compare's confidence level) and
base-vs-run CDFs per stage; the run's interference charts; the text report. Renders
compare.json (m) and the plot rows of plot_data.build; computes nothing."""
import json

from ntscope.reports.interference import section as interference
from ntscope.reports.plots import charts
from ntscope.reports.plots.page import Page, esc
from ntscope.reports.plots.units import not_drawn, us

from . import render_text
from .render_text import compare_text


def compare_html(m, plots):
    page = Page("ntscope compare")
    page.add(f"<h1>ntscope compare</h1><p>base <code>{esc(m['base']['run_dir'])}</code><br>"
             f"run <code>{esc(m['run']['run_dir'])}</code><br>stage set <b>{esc(m['stage_set'])}</b></p>")
    for d in m.get("workload_differences") or []:
        page.add(f"<div class='verdict'><b>workload differs</b>: {esc(d['aspect'])}: base {esc(d['base'])}; run "
                 f"{esc(d['run'])} ({100 * d['moved']:.0f}% of the I/Os changed kind). The verdicts below compare "
                 "different work: the change may be the workload's.</div>")
    presence = {}
    for r in plots["presence"]:
        presence.setdefault(r["group_key"], []).append(r)
    for i, v in enumerate(m["verdicts"]):
        verdict(page, v)
        lad_chart(page, i, m, v["group_key"])
        cdf_chart(page, i, v["group_key"], plots, presence.get(v["group_key"]))
    interference.html_section(page, m["interference"], plots["interference"])
    page.heading(2, "Full text report")
    page.add(f"<pre>{esc(compare_text(m))}</pre>")
    return page.render()


def verdict(page, v):
    cls = "verdict ok" if v["verdict"] == "no significant change" else "verdict"
    page.heading(2, v["group_key"])
    page.add(f"<div class='{cls}'><b>{esc(v['verdict'])}</b>"
             + (f": bottleneck <b>{esc(v['bottleneck_stage'])}</b>" if v["bottleneck_stage"] else "")
             + (f" (mostly {esc(v['detail_stage'])})" if v["detail_stage"] else "")
             + f"<br>cause: {esc(v['cause'])}<br><small>{esc(v['evidence'])}</small></div>")


def lad_chart(page, i, m, group_key):
    lad = [r for r in m["lad"] if r["group_key"] == group_key and r["stage_set"] == m["stage_set"]]
    rows = [{"stage": r["stage"], "seq": r["seq"], "statistic": r["statistic"], "lad": r["lad"], "lad_lo": r["lad_lo"],
             "lad_hi": r["lad_hi"], "change_us": us(r["change_ns"]), "significant": "yes" if r["significant"] else "no"}
            for r in lad if r["lad"] is not None and r["lad"] > 0]
    if not rows:
        page.nodata("lad", "no stage has a base time above 0 in both runs, so no LAD")
        return
    page.how("LAD = run / base per stage (log scale; 1 = unchanged), for the mean, p50 and p99; whiskers: "
             f"{render_text.level(m['params'])} bootstrap interval; faded: not a significant change. Stages keep their "
             "colour on every page.")
    page.chart(f"lad-{i}", "lad", charts.lad(rows, f"LAD per stage: {group_key}"))
    undefined = {r["stage"]: {"stage": r["stage"], "status": f"base {us(r['base_ns']):g} us, run {us(r['run_ns']):g} us: LAD undefined"}
                 for r in lad if r["statistic"] == "mean" and (r["lad"] is None or r["lad"] <= 0)}
    if undefined:
        page.nodata("lad", not_drawn(undefined.values(), ()))


def cdf_chart(page, i, group_key, plots, presence):
    if presence is None:
        return   # not among the groups with charts (plot_data.GROUPS)
    drawn = {r["stage"] for r in presence if r["status"] == "ok"}
    rows = [{"stage": r["stage"], "seq": r["seq"], "run": r["run"], "pct": r["pct"], "dur_us": us(r["dur_ns"])}
            for r in plots["cdf"] if r["group_key"] == group_key and r["stage"] in drawn]
    if not rows:
        page.nodata("cdf_pair", "no stage has durations above 0 in both runs")
        return
    page.how("Base (dashed, lighter, triangles) vs run (solid, circles) CDF per stage, log time axis (k = 1,000 us, "
             "M = 1,000,000 us): a curve moving right is that stage getting slower; a change only at the top is a "
             "tail change.")
    page.chart(f"cdfpair-{i}", "cdf_pair", charts.cdf_pair(rows))
    missing = not_drawn(presence, {"ok"})
    if missing:
        page.nodata("cdf_pair", missing)


def to_json(m):
    return json.dumps(m, indent=1, default=str)
