"""Vega-Lite charts (Altair) of the rows the SQL views computed. One function per kind of
chart; each takes plain rows (dicts) already converted to display units and returns
(Altair chart, datasets): the chart reads named datasets, so Altair validates the chart
against the Vega-Lite schema without walking thousands of data rows (Page.chart puts the
rows in). Stage colours come from palette.stage_scale (the one mapping); callers leave
out what has no data and say so next to the chart (Page.nodata)."""
import altair as alt

from . import palette

WIDTH = 860
US = ",~r"          # axis/tooltip format of microseconds: 1,234.5 / 0.25
LOG_US = "duration (us, log scale)"
# log axes of small charts: SI-prefixed labels (10k, 100k: '10,000' and '100,000' side by side
# ran together on a 180-pixel axis), and labels that would touch dropped
SMALL_LOG_AXIS = dict(format="~s", labelOverlap="greedy", labelSeparation=6, labelFlush=True)
# a symlog axis (series(symlog=True)) is linear below this value, logarithmic above: for MB/s,
# 10 kB/s, below what a stream of 4 KiB I/Os at a few I/Os per second moves
SYMLOG_LINEAR = 0.01
# base vs run: told apart by the dash, the line's weight and opacity and the points' shape,
# named in a legend
RUN_STYLE = {"base": {"dash": [5, 3], "opacity": 0.55, "shape": "triangle-up"},
             "run": {"dash": [1, 0], "opacity": 1.0, "shape": "circle"}}


def data(name):
    return alt.NamedData(name=name)


def stage_colour(rows, legend=True, title="stage"):
    dom, rng = palette.stage_scale((r["stage"], r["seq"]) for r in rows)
    return alt.Color("stage:N", title=title, sort=dom, scale=alt.Scale(domain=dom, range=rng),
                     legend=alt.Legend(orient="right", symbolLimit=0, symbolOpacity=1) if legend else None)


def series_colour(field, names, title):
    dom, rng = palette.series_scale(names)
    return alt.Color(f"{field}:N", title=title, sort=dom, scale=alt.Scale(domain=dom, range=rng),
                     legend=alt.Legend(orient="right", symbolLimit=0, symbolOpacity=1, labelLimit=320))


def stacked_bars(rows, y_field, y_title, y_order, x_title, ticks=None, height_per_bar=22, y_axis_title=True):
    """Horizontal stacked bars: one bar per y_field value (in y_order), one segment per
    stage (rows: y_field, stage, seq, value_us, n, share_pct or None). ticks: rows of the
    same shape drawn as a tick (e.g. end_to_end's mean) on the bar. y_axis_title False: labels
    that say what they are need no title (a title beside long labels on a two-bar chart sat on
    them)."""
    colour = stage_colour(rows + (ticks or []))
    tips = [alt.Tooltip(f"{y_field}:N", title=y_title), alt.Tooltip("stage:N"),
            alt.Tooltip("value_us:Q", title="mean (us)", format=US), alt.Tooltip("n:Q", title="I/Os", format=",")]
    if any(r.get("share_pct") is not None for r in rows):
        tips.append(alt.Tooltip("share_pct:Q", title="% of end_to_end", format=".1f"))
    y = alt.Y(f"{y_field}:N", title=y_title if y_axis_title else None, sort=y_order, axis=alt.Axis(labelLimit=360))
    bars = alt.Chart(data("bars")).mark_bar().encode(
        y=y, x=alt.X("value_us:Q", title=x_title, stack="zero", axis=alt.Axis(format=US)),
        color=colour, order=alt.Order("seq:Q"), tooltip=tips)
    chart = bars
    if ticks:
        chart = alt.layer(bars, alt.Chart(data("ticks")).mark_tick(thickness=3, size=height_per_bar - 4).encode(
            y=y, x=alt.X("value_us:Q"), color=colour, tooltip=tips))
    return chart.properties(width=WIDTH - 260, height=alt.Step(height_per_bar)), {"bars": rows, "ticks": ticks or []}


def cdf(rows, title):
    """CDF lines on a log time axis (rows: stage, seq, pct, dur_us > 0)."""
    base = alt.Chart(data("cdf")).transform_filter("datum.dur_us > 0").encode(
        x=alt.X("dur_us:Q", title=LOG_US, scale=alt.Scale(type="log"), axis=alt.Axis(format=US, grid=True)),
        y=alt.Y("pct:Q", title="I/Os at or below (%)", scale=alt.Scale(domain=[0, 100])),
        color=stage_colour(rows), detail="stage:N")
    tips = [alt.Tooltip("stage:N"), alt.Tooltip("pct:Q", title="percentile"),
            alt.Tooltip("dur_us:Q", title="duration (us)", format=US)]
    return alt.layer(base.mark_line(strokeWidth=1.6),
                     base.mark_point(size=14, filled=True, opacity=0.6).encode(tooltip=tips)
                     ).properties(width=WIDTH - 240, height=300, title=title), {"cdf": rows}


def cdf_pair(rows, columns=4):
    """Base vs run CDF per stage, one small chart per stage (rows: stage, seq, run, pct,
    dur_us > 0): the stage's colour; base dashed, lighter, with triangles; run solid with
    circles; a legend says which is which."""
    dom = palette.stage_scale((r["stage"], r["seq"]) for r in rows)[0]
    sides = ["base", "run"]
    legend = alt.Legend(title="run", orient="top", symbolStrokeColor="#333", symbolFillColor="#333",
                        symbolStrokeWidth=2, symbolSize=120, labelExpr="datum.value === 'base' ? 'base (dashed)' : 'run (solid)'")
    side = dict(sort=sides, title="run", legend=legend)
    base = alt.Chart().transform_filter("datum.dur_us > 0").encode(
        x=alt.X("dur_us:Q", title=LOG_US, scale=alt.Scale(type="log"), axis=alt.Axis(**SMALL_LOG_AXIS)),
        y=alt.Y("pct:Q", title="I/Os at or below (%)", scale=alt.Scale(domain=[0, 100])),
        color=stage_colour(rows, legend=False),
        strokeDash=alt.StrokeDash("run:N", scale=alt.Scale(domain=sides, range=[RUN_STYLE[s]["dash"] for s in sides]), **side),
        opacity=alt.Opacity("run:N", scale=alt.Scale(domain=sides, range=[RUN_STYLE[s]["opacity"] for s in sides]), **side),
        detail="run:N")
    tips = [alt.Tooltip("stage:N"), alt.Tooltip("run:N"), alt.Tooltip("pct:Q", title="percentile"),
            alt.Tooltip("dur_us:Q", title="duration (us)", format=US)]
    layer = alt.layer(base.mark_line(strokeWidth=1.8),
                      base.mark_point(size=14, filled=True).encode(
                          shape=alt.Shape("run:N", scale=alt.Scale(domain=sides, range=[RUN_STYLE[s]["shape"] for s in sides]), **side),
                          tooltip=tips),
                      ).properties(width=180, height=130)
    return layer.facet(facet=alt.Facet("stage:N", sort=dom, title=None, header=alt.Header(labelFontWeight="bold")),
                       columns=columns, data=data("cdf")).resolve_scale(x="independent"), {"cdf": rows}


def histogram(rows, columns=4):
    """bcc-style log2 histograms, one small chart per stage (rows: stage, seq, bucket,
    bucket_label, count, lo_us, hi_us), buckets on a shared axis."""
    dom = palette.stage_scale((r["stage"], r["seq"]) for r in rows)[0]
    order = [label for _, label in sorted({(r["bucket"], r["bucket_label"]) for r in rows})]
    bars = alt.Chart().mark_bar().encode(
        x=alt.X("bucket_label:O", title="duration (us, log2 buckets)", sort=order,
                scale=alt.Scale(domain=order), axis=alt.Axis(labelAngle=-60, labelFontSize=9)),
        y=alt.Y("count:Q", title="I/Os"),
        color=stage_colour(rows, legend=False),
        tooltip=[alt.Tooltip("stage:N"), alt.Tooltip("bucket_label:N", title="duration (us)"),
                 alt.Tooltip("count:Q", title="I/Os", format=",")])
    return alt.layer(bars).properties(width=180, height=110).facet(
        facet=alt.Facet("stage:N", sort=dom, title=None, header=alt.Header(labelFontWeight="bold")),
        columns=columns, data=data("hist")).resolve_scale(y="independent"), {"hist": rows}


def heatmap(rows, title):
    """Latency over time (rows: t0_s, t1_s, bucket, bucket_label, count): time bins x log2
    buckets, colour = I/Os (log scale)."""
    order = [l for _, l in sorted({(r["bucket"], r["bucket_label"]) for r in rows}, reverse=True)]
    return alt.Chart(data("heat")).mark_rect().encode(
        # from 0 to the last bin's end: a "nice" axis ran past the run's end (an empty band)
        x=alt.X("t0_s:Q", title="time from the first I/O (s)", axis=alt.Axis(format=",~r"),
                scale=alt.Scale(nice=False, zero=True)),
        x2="t1_s:Q",
        y=alt.Y("bucket_label:O", title="end_to_end (us, log2 buckets)", sort=order, scale=alt.Scale(domain=order)),
        color=alt.Color("count:Q", title="I/Os", scale=alt.Scale(type="log", scheme="viridis")),
        tooltip=[alt.Tooltip("t0_s:Q", title="from (s)", format=",.3f"), alt.Tooltip("t1_s:Q", title="to (s)", format=",.3f"),
                 alt.Tooltip("bucket_label:N", title="end_to_end (us)"), alt.Tooltip("count:Q", title="I/Os", format=",")],
    ).properties(width=WIDTH - 200, height=alt.Step(14), title=title), {"heat": rows}


def series(rows, series_field, series_title, y_field, y_title, title, order=None, symlog=False, under=()):
    """Lines over time, one per series (rows: series_field, t_s = bin start, y_field): step
    lines (each bin's value holds over the bin); a null y breaks the line (nothing in the bin).
    symlog: a y axis linear below SYMLOG_LINEAR and logarithmic above, ticks at the powers of 10
    (0 stays 0 and an idle bin keeps the line whole, and a series 30 times smaller than another
    still rises well off the axis). under: series drawn first, wide and dashed, so that a series
    on the same values drawn over them (a device and its only queue) shows."""
    names = order or list(dict.fromkeys(r[series_field] for r in rows))
    tips = [alt.Tooltip(f"{series_field}:N", title=series_title), alt.Tooltip("t_s:Q", title="bin start (s)", format=",.3f"),
            alt.Tooltip(f"{y_field}:Q", title=y_title, format=",.2f")]
    y_scale, y_axis = alt.Undefined, alt.Undefined
    if symlog:
        top = max((r[y_field] or 0 for r in rows), default=0)
        ticks = [0] + [10.0 ** k for k in range(-2, 10) if 10.0 ** k < top * 10][:8]
        y_scale = alt.Scale(type="symlog", constant=SYMLOG_LINEAR)
        y_axis = alt.Axis(values=ticks, format="~g")
    base = alt.Chart(data("series")).encode(
        x=alt.X("t_s:Q", title="time from the first I/O (s)", axis=alt.Axis(format=",~r")),
        y=alt.Y(f"{y_field}:Q", title=y_title + (", log scale" if symlog else ""), scale=y_scale, axis=y_axis),
        color=series_colour(series_field, names, series_title))
    below = sorted(set(under) & set(names))
    layers = []
    if below:
        is_under = {"field": series_field, "oneOf": below}
        layers.append(base.transform_filter(is_under).mark_line(
            interpolate="step-after", strokeWidth=3.5, strokeDash=[7, 3], opacity=0.6))
        layers.append(base.transform_filter({"not": is_under}).mark_line(interpolate="step-after", strokeWidth=1.4))
    else:
        layers.append(base.mark_line(interpolate="step-after", strokeWidth=1.4))
    layers.append(base.mark_point(size=12, filled=True, opacity=0.5).encode(tooltip=tips))
    return alt.layer(*layers).properties(width=WIDTH - 300, height=170, title=title), {"series": rows}


def waited_behind(rows, title):
    """Who waited behind whom (rows: stream, other, resource 'queue' / 'device', pct = % of the
    stream's I/Os submitted with a command of the other in flight ahead on that resource,
    wait_with_us, wait_without_us, ahead_kb): one cell per (stream, other stream), colour and
    label = pct, one panel per resource."""
    streams = list(dict.fromkeys([r["stream"] for r in rows] + [r["other"] for r in rows]))   # one order, both axes
    tips = [alt.Tooltip("stream:N", title="stream (waited)"), alt.Tooltip("other:N", title="behind stream"),
            alt.Tooltip("resource:N"), alt.Tooltip("pct:Q", title="% of its I/Os", format=".1f"),
            alt.Tooltip("wait_with_us:Q", title="mean wait with it ahead (us)", format=US),
            alt.Tooltip("wait_without_us:Q", title="mean wait without (us)", format=US),
            alt.Tooltip("ahead_kb:Q", title="its KiB ahead (mean over all I/Os)", format=",.1f")]
    base = alt.Chart().encode(
        x=alt.X("other:N", title="behind the commands of stream", sort=streams, axis=alt.Axis(labelAngle=-20, labelLimit=260)),
        y=alt.Y("stream:N", title="stream that waited", sort=streams, axis=alt.Axis(labelLimit=260)))
    cells = base.mark_rect(stroke="#fff").encode(
        color=alt.Color("pct:Q", title="% of its I/Os", scale=alt.Scale(domain=[0, 100], scheme="oranges")), tooltip=tips)
    labels = base.mark_text(fontSize=12).encode(
        text=alt.Text("pct:Q", format=".0f"),
        color=alt.condition("datum.pct > 60", alt.value("white"), alt.value("#222")), tooltip=tips)
    return alt.layer(cells, labels).properties(width=alt.Step(120), height=alt.Step(34)).facet(
        column=alt.Column("resource:N", title=None, sort=["queue", "device"],
                          header=alt.Header(labelFontWeight="bold", labelExpr="'on its ' + datum.value")),
        data=data("sharing"), title=title), {"sharing": rows}


def lad(rows, title):
    """LAD = run / base per stage (rows: stage, seq, statistic, lad, lad_lo, lad_hi,
    change_us, significant ('yes'/'no')): bars from 1 to the LAD on a log axis, whiskers =
    the 95% CI, faded when not significant; one panel per statistic."""
    dom = palette.stage_scale((r["stage"], r["seq"]) for r in rows)[0]
    tips = [alt.Tooltip("stage:N"), alt.Tooltip("statistic:N"), alt.Tooltip("lad:Q", title="LAD", format=".2f"),
            alt.Tooltip("lad_lo:Q", title="95% CI low", format=".2f"), alt.Tooltip("lad_hi:Q", title="95% CI high", format=".2f"),
            alt.Tooltip("change_us:Q", title="change (us)", format="+,.0f"), alt.Tooltip("significant:N")]
    x = alt.X("stage:N", sort=dom, title=None, axis=alt.Axis(labelAngle=-40, labelLimit=160))
    ylog = alt.Scale(type="log")
    bars = alt.Chart().mark_bar().encode(
        x=x, y=alt.Y("lad:Q", title="LAD = run / base (log scale)", scale=ylog), y2=alt.datum(1),
        color=stage_colour(rows, legend=False),
        opacity=alt.Opacity("significant:N", title="significant", sort=["yes", "no"],
                            scale=alt.Scale(domain=["yes", "no"], range=[1.0, 0.3])),
        tooltip=tips)
    whiskers = alt.Chart().transform_filter("datum.lad_lo > 0 && datum.lad_hi > 0").mark_rule(
        color="#222", strokeWidth=1.5).encode(
        x=x, y=alt.Y("lad_lo:Q", title="LAD = run / base (log scale)", scale=ylog), y2="lad_hi:Q", tooltip=tips)
    one = alt.Chart().transform_aggregate(n="count()").mark_rule(color="#222", strokeDash=[2, 2]).encode(y=alt.datum(1))
    return alt.layer(bars, whiskers, one).properties(width=alt.Step(21), height=240).facet(
        column=alt.Column("statistic:N", title=None, sort=["mean", "p50", "p99"],
                          header=alt.Header(labelFontWeight="bold", labelExpr="'LAD of the ' + datum.value")),
        data=data("lad"), title=title), {"lad": rows}


def lad_lines(rows, title):
    """LAD of each stage over a run series (rows: stage, seq, label, run_idx, lad): one line
    per stage across the points in series order, log y axis, a dashed line at 1."""
    order = [l for _, l in sorted({(r["run_idx"], r["label"]) for r in rows})]
    tips = [alt.Tooltip("stage:N"), alt.Tooltip("label:N", title="run"),
            alt.Tooltip("lad:Q", title="LAD (mean)", format=".2f"), alt.Tooltip("mean_us:Q", title="mean (us)", format=US)]
    base = alt.Chart(data("lad")).encode(
        x=alt.X("label:N", title="run (series order)", sort=order, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("lad:Q", title="LAD of the mean vs the first run (log scale)", scale=alt.Scale(type="log")),
        color=stage_colour(rows), detail="stage:N")
    one = alt.Chart(data("one")).mark_rule(color="#222", strokeDash=[2, 2]).encode(y="y:Q")
    return alt.layer(base.mark_line(strokeWidth=1.6), base.mark_point(size=40, filled=True).encode(tooltip=tips), one
                     ).properties(width=WIDTH - 300, height=260, title=title), {"lad": rows, "one": [{"y": 1}]}
