"""report.html: one self-contained page (ntscope.reports.plots.page): the answer first (errors that
make the numbers untrustworthy, the stacked stage breakdown per group, the --slo objectives met
or missed), pipeline_stats folded below (open when it holds an error), per group (the largest) the stage CDFs, log2 histograms, the
tail view and latency over time, throughput and in-flight per queue, and the stage tables.
Renders report.json (doc) and the plot rows of sql/report/plots.sql (plot_data.build); it
computes nothing."""
from ntscope.reports.plots import charts, palette
from ntscope.reports.plots.page import Page, esc
from ntscope.reports.slo import render_html as slo_html
from ntscope.reports.plots.units import bucket_label, not_drawn, seconds, us, us_text

from .plot_data import BREAKDOWN_GROUPS, CHART_GROUPS

LINEAR = {"ok", "not_positive"}   # what a linear axis can draw; a log axis: only "ok"


def render(doc, plots, sections=()):
    """report.html; sections: callables(page) of analyze's parts, drawn after the objectives."""
    page = Page("ntscope report")
    page.add("<h1>ntscope report</h1>")
    clock = doc["clock"]
    offset = "-" if clock["offset_ns"] is None else f"{clock['offset_ns'] / 1e9:.6f} s +- {us_text(clock['uncertainty_ns'])} us"
    page.add(f"<p>mode: {esc(doc['mode'])} &nbsp; stage sets: {esc(', '.join(doc['stage_sets']))} &nbsp; "
             f"charts: stage set <b>{esc(plots['stage_set'])}</b> &nbsp; clock offset: {esc(offset)}</p>")
    stats = doc["pipeline_stats"]
    # the answer first: what would make it untrustworthy, where the time went, the objectives;
    # the diagnostics (every pipeline_stats row) folded below, open when one is an error
    errors = [s for s in stats if s["severity"] == "error"]
    for s in errors:
        page.add(f"<div class='verdict'><b>{esc(s['name'])}</b>: {esc(s['meaning'])} (value {esc(s['value'])}): "
                 "the numbers below are not to be trusted</div>")
    presence = {}
    for r in plots["presence"]:
        presence.setdefault(r["group_key"], []).append(r)
    seq = {(d["stage_set"], d["stage"]): d["seq"] for d in doc["stage_definitions"]}
    breakdown(page, doc, plots, presence)
    slo_html.objectives_section(page, doc.get("slo") or {})
    for section in sections:
        section(page)
    page.add(f"<details id='pipeline_stats'{' open' if errors else ''}><summary><b>pipeline_stats</b>: what was read, "
             "matched, inferred and lost (diagnostics)</summary>")
    page.table(["name", "value", "severity", "meaning"], [[s["name"], s["value"], s["severity"], s["meaning"]] for s in stats],
               [s["severity"] for s in stats], text_cols=(3,))
    page.add("</details>")
    largest = doc["groups"][:CHART_GROUPS]
    page.heading(2, f"Per group (the {len(largest)} largest of {len(doc['groups'])}): stage set {plots['stage_set']}")
    for i, g in enumerate(largest):
        page.heading(3, f"group: {g['key_text']}   count {g['count']}   IOPS {g['iops']:.1f}   MB/s {g['mb_s']:.2f}")
        rows = presence.get(g["key_text"], [])
        group_cdf(page, i, g, plots["stage_set"], rows, seq)
        group_histogram(page, i, g, plots["stage_set"], rows, seq)
        group_tail(page, i, g, plots, rows)
        group_heatmap(page, i, g, plots)
    timeseries(page, plots)
    tables(page, doc)
    glossary(page, doc)
    return page.render()


def breakdown(page, doc, plots, presence):
    page.heading(2, f"Stage breakdown (mean per I/O, top-level stages of {plots['stage_set']}, stacked)")
    page.how("One bar per group; each segment is a top-level stage's mean, so the bar adds up to the mean "
             "end_to_end (the black tick, measured directly). Hover a segment for its value.")
    groups = doc["groups"][:BREAKDOWN_GROUPS]
    rows, ticks, skipped = [], [], {}
    for g in groups:
        ok = {r["stage"]: r for r in presence.get(g["key_text"], [])}
        for s in g["stages"]:
            p = ok.get(s["stage"])
            if s["stage_set"] != plots["stage_set"] or s["parent"] or p is None:
                continue
            if p["status"] not in LINEAR:
                skipped[s["stage"]] = p
                continue
            row = {"group": g["key_text"], "stage": s["stage"], "seq": p["seq"], "value_us": us(s["mean_ns"]), "n": s["count"]}
            (ticks if s["stage"] == "end_to_end" else rows).append(row)
        for u in g.get("unmeasured", []):
            if u["stage_set"] == plots["stage_set"] and u["mean_ns"] is not None:
                rows.append({"group": g["key_text"], "stage": f"not measured ({u['label']})", "seq": palette.UNMEASURED_SEQ,
                             "value_us": us(u["mean_ns"]), "n": u["count"]})
    if not rows:
        page.nodata("breakdown", f"no group has a top-level stage of {plots['stage_set']} with durations")
        return
    page.chart("breakdown", "breakdown", charts.stacked_bars(
        rows, "group", "group", [g["key_text"] for g in groups], "mean per I/O (us)", ticks))
    if skipped:
        page.nodata("breakdown", not_drawn(skipped.values(), LINEAR))
    gaps = {u["stage_set"]: u for g in groups for u in g.get("unmeasured", []) if u["stage_set"] == plots["stage_set"]}
    for u in gaps.values():
        page.how(f"Not measured on this run ({u['label']}): {', '.join(u['stages'])}. Their segment 'not measured' "
                 "is end_to_end minus the measured top-level stages (mean per I/O): the stages measured here "
                 "alone do not add up to end_to_end.")
    if len(doc["groups"]) > len(groups):
        page.how(f"{len(doc['groups']) - len(groups)} smaller groups are only in the stage tables below.")


def group_cdf(page, i, g, stage_set, presence, seq):
    drawn = {r["stage"] for r in presence if r["status"] == "ok"}
    rows = [{"stage": c["stage"], "seq": seq[(stage_set, c["stage"])], "pct": k, "dur_us": us(v)}
            for c in g["cdf_pct_1_to_100"] if c["stage_set"] == stage_set and c["stage"] in drawn
            for k, v in enumerate(c["dur_ns"], 1)]
    if not rows:
        page.nodata("cdf", f"no stage of {stage_set} has a duration above 0 in this group")
        return
    page.chart(f"cdf-{i}", "cdf", charts.cdf(rows, "CDF per stage (p1..p100)"))
    missing = not_drawn(presence, {"ok"})
    if missing:
        page.nodata("cdf", missing)
    partial = [r for r in presence if r["status"] == "ok" and (r["zero"] or r["negative"])]
    if partial:
        page.how("not on the log axis: " + "; ".join(
            f"{r['stage']}: {r['zero']} zero and {r['negative']} negative of {r['ios']} durations" for r in partial))


def group_histogram(page, i, g, stage_set, presence, seq):
    drawn = {r["stage"] for r in presence if r["status"] in LINEAR}
    rows = [{"stage": h["stage"], "seq": seq[(stage_set, h["stage"])], "bucket": h["bucket"],
             "bucket_label": bucket_label(h["bucket"], h["lo_ns"], h["hi_ns"]), "count": h["count"]}
            for h in g["histograms"] if h["stage_set"] == stage_set and h["stage"] in drawn]
    if not rows:
        page.nodata("histogram", f"no stage of {stage_set} has durations in this group")
        return
    page.how("log2 histograms (bcc style): I/Os per duration bucket [2^k, 2^(k+1)) us, one chart per stage, "
             "each with its own count axis.")
    page.chart(f"hist-{i}", "histogram", charts.histogram(rows))
    missing = not_drawn(presence, LINEAR)
    if missing:
        page.nodata("histogram", missing)


def group_tail(page, i, g, plots, presence):
    status = {r["stage"]: r["status"] for r in presence}
    tail = [r for r in plots["tail"] if r["group_key"] == g["key_text"] and r["parent"] is None]
    label = {}
    for r in tail:
        if r["stage"] == "end_to_end":
            label[r["cohort"]] = (f"median I/Os (end_to_end p45-p55, {r['cohort_ios']})" if r["cohort"] == "median"
                                  else f"p99+ I/Os (end_to_end >= {us_text(r['e2e_lo_ns'])} us, {r['cohort_ios']})")
    rows, ticks = [], []
    for r in tail:
        if status.get(r["stage"]) not in LINEAR or r["cohort"] not in label:
            continue
        row = {"cohort": label[r["cohort"]], "stage": r["stage"], "seq": r["seq"], "value_us": us(r["mean_ns"]),
               "n": r["n"], "share_pct": None if r["share"] is None else r["share"] * 100}
        (ticks if r["stage"] == "end_to_end" else rows).append(row)
    if not rows:
        page.nodata("tail", "no I/O of this group has an end_to_end duration")
        return
    page.how("Tail view: the mean of each top-level stage over the slowest 1% of I/Os (p99+) next to the "
             "I/Os around the median: the stage whose segment grows is where the tail comes from.")
    order = [label[c] for c in ("median", "tail") if c in label]
    page.chart(f"tail-{i}", "tail", charts.stacked_bars(rows, "cohort", "I/Os", order, "mean per I/O (us)", ticks,
                                                         height_per_bar=30, y_axis_title=False))


def group_heatmap(page, i, g, plots):
    rows = [{"t0_s": seconds(r["bin_start_ns"]), "t1_s": seconds(r["bin_end_ns"]), "bucket": r["bucket"],
             "bucket_label": bucket_label(r["bucket"], r["lo_ns"], r["hi_ns"]), "count": r["count"]}
            for r in plots["heatmap"] if r["group_key"] == g["key_text"]]
    if not rows:
        page.nodata("heatmap", "no I/O of this group has an end_to_end duration and a completion time")
        return
    page.chart(f"heat-{i}", "heatmap", charts.heatmap(rows, "end_to_end over time (I/Os per time bin and latency bucket)"))


def timeseries(page, plots):
    page.heading(2, "Throughput and in-flight commands over time, per queue")
    rows = [{"queue": r["queue"], "t_s": seconds(r["bin_start_ns"]), "mb_s": r["mb_s"], "inflight": r["inflight_avg"]}
            for r in plots["queue_timeseries"]]
    if not rows:
        page.nodata("timeseries", "no I/O has both nvme_setup_cmd and nvme_complete_rq")
        return
    page.how("Per time bin (about 100 over the run): 'all' is the run total; a queue with nothing in flight "
             "in a bin is at 0 there (in-flight = commands between nvme_setup_cmd and nvme_complete_rq, time-averaged).")
    order = list(dict.fromkeys(r["queue"] for r in rows))
    page.chart("ts-mb_s", "timeseries", charts.series(rows, "queue", "queue", "mb_s", "MB/s (10^6 bytes/s)", "throughput", order))
    page.chart("ts-inflight", "timeseries", charts.series(rows, "queue", "queue", "inflight", "commands in flight",
                                                         "in-flight commands (time average)", order))
    if plots["queues_total"] > len(order):
        page.how(f"Drawn: 'all' and the busiest {len(order) - 1} of {plots['queues_total'] - 1} queues.")


def tables(page, doc):
    page.heading(2, "Stage tables (microseconds)")
    names = ["p" + f"{p:.4f}".rstrip("0").rstrip(".") for p in doc["spec"]["percentiles"]]
    for g in doc["groups"]:
        page.heading(3, f"group: {g['key_text']}   count {g['count']}   IOPS {g['iops']:.1f}   MB/s {g['mb_s']:.2f}")
        page.table(["stage", "count", "mean", "stdev"] + names + ["max"],
                   [[f"{s['stage_set']} {'  ' if s['parent'] else ''}{s['stage']}", str(s["count"]),
                     us_text(s["mean_ns"]), us_text(s["stddev_ns"])] +
                    [us_text(p["dur_ns"]) for p in s["percentiles"]] + [us_text(s["max_ns"])] for s in g["stages"]] +
                   [[f"{u['stage_set']} not measured ({u['label']}: {', '.join(u['stages'])}; end_to_end minus the "
                     f"measured top-level stages)", str(u["count"]), us_text(u["mean_ns"])] + ["-"] * (len(names) + 1)
                    + [us_text(u["max_ns"])] for u in g.get("unmeasured", [])])


def glossary(page, doc):
    """What each stage is: the stage table's meaning column (sql/core/stage_definitions.sql)."""
    page.heading(2, "Stages: what each one is")
    page.how("Top-level stages of a set split end_to_end; an indented stage subdivides the one above. "
             "The stage table: sql/core/stage_definitions.sql.")
    page.table(["stage set", "stage", "meaning"],
               [[d["stage_set"], ("  " if d["parent"] else "") + d["stage"], d["meaning"]] for d in doc["stage_definitions"]],
               text_cols=(0, 1, 2))
