"""Self-contained HTML: verdict, LAD bar chart per stage with CI whiskers (log scale),
queue depth / throughput over time. Formatting only."""
import html
import json
import math

from .render_text import compare_text, interference_text

STYLE = """body{font-family:sans-serif;margin:1.5em;max-width:1200px}pre{font-size:12px;background:#f6f6f6;padding:.5em;overflow-x:auto}
.verdict{border-left:6px solid #c33;padding:.4em .8em;background:#fff4f4;margin:.6em 0}.ok{border-color:#393;background:#f4fff4}
svg text{font-size:11px}"""


def esc(s):
    return html.escape(str(s))


def lad_chart(rows, title):
    """rows: cmp_lad rows of one group and stage set, statistic 'mean'. Log2 y axis around 1."""
    rows = [r for r in rows if r["lad"] is not None and r["lad"] > 0]
    if not rows:
        return "<p>no LAD to plot</p>"
    w, h, left, bottom, top = 60 * len(rows) + 140, 300, 60, 90, 20
    vals = [v for r in rows for v in (r["lad"], r["lad_lo"], r["lad_hi"]) if v and v > 0]
    lo_e = math.floor(min(math.log2(min(vals)), -1))
    hi_e = math.ceil(max(math.log2(max(vals)), 1))

    def y(v):
        return top + (hi_e - math.log2(max(v, 2.0 ** lo_e))) / (hi_e - lo_e) * (h - top - bottom)

    parts = [f'<svg width="{w}" height="{h}" xmlns="http://www.w3.org/2000/svg"><title>{esc(title)}</title>']
    for e in range(lo_e, hi_e + 1):
        parts.append(f'<line x1="{left}" x2="{w}" y1="{y(2 ** e):.1f}" y2="{y(2 ** e):.1f}" stroke="{"#000" if e == 0 else "#ddd"}"/>'
                     f'<text x="{left - 5}" y="{y(2 ** e) + 4:.1f}" text-anchor="end">{2.0 ** e:g}</text>')
    for i, r in enumerate(rows):
        x = left + 20 + 60 * i
        y1, y0 = y(r["lad"]), y(1)
        color = ("#c33" if r["lad"] > 1 else "#393") if r["significant"] else "#999"
        parts.append(f'<rect x="{x}" y="{min(y0, y1):.1f}" width="30" height="{abs(y1 - y0):.1f}" fill="{color}">'
                     f'<title>{esc(r["stage"])}: LAD {r["lad"]:.2f} [{r["lad_lo"]:.2f}-{r["lad_hi"]:.2f}], '
                     f'{r["change_ns"] / 1e3:+.0f} us</title></rect>')
        if r["lad_lo"] and r["lad_hi"]:
            parts.append(f'<line x1="{x + 15}" x2="{x + 15}" y1="{y(r["lad_lo"]):.1f}" y2="{y(r["lad_hi"]):.1f}" stroke="#000"/>'
                         f'<line x1="{x + 8}" x2="{x + 22}" y1="{y(r["lad_lo"]):.1f}" y2="{y(r["lad_lo"]):.1f}" stroke="#000"/>'
                         f'<line x1="{x + 8}" x2="{x + 22}" y1="{y(r["lad_hi"]):.1f}" y2="{y(r["lad_hi"]):.1f}" stroke="#000"/>')
        parts.append(f'<text transform="translate({x + 18},{h - bottom + 8}) rotate(45)">{esc(r["stage"])}</text>')
    parts.append(f'<text x="5" y="12">LAD (log scale)</text></svg>')
    return "".join(parts)


def timeseries_chart(ts, field, label):
    by = {}
    for r in ts:
        by.setdefault(f'{r["resource_kind"]} {r["resource"]}', []).append(r)
    if not by:
        return ""
    w, h, left = 640, 160, 50
    top_v = max((r[field] or 0) for r in ts) or 1
    colors = ["#36c", "#c63", "#393", "#939", "#999", "#c33"]
    parts = [f'<svg width="{w + 260}" height="{h + 20}" xmlns="http://www.w3.org/2000/svg">'
             f'<text x="0" y="12">{esc(label)} (max {top_v:.2f})</text>']
    for i, (name, rs) in enumerate(sorted(by.items())):
        rs.sort(key=lambda r: r["bin"])
        pts = " ".join(f'{left + r["bin"] * (w - left) / 100:.1f},{h - (r[field] or 0) / top_v * (h - 20):.1f}' for r in rs)
        c = colors[i % len(colors)]
        parts.append(f'<polyline fill="none" stroke="{c}" points="{pts}"/>'
                     f'<text x="{w + 10}" y="{20 + 14 * i}" fill="{c}">{esc(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def interference_section(m):
    ts = m["timeseries"]
    return ("<h2>Interference and queue depth over time (run)</h2>"
            + timeseries_chart(ts, "inflight_avg", "in-flight commands") + "<br>"
            + timeseries_chart(ts, "mb_s", "MB/s") + "<br>"
            + timeseries_chart([dict(r, wait_ms=(r["wait_mean_ns"] or 0) / 1e6) for r in ts], "wait_ms", "mean wait of completions (ms)")
            + f"<pre>{esc(interference_text(m))}</pre>")


def compare_html(m):
    body = [f"<h1>ntscope compare</h1><p>base <code>{esc(m['base']['run_dir'])}</code><br>run <code>{esc(m['run']['run_dir'])}</code></p>"]
    for v in m["verdicts"]:
        cls = "verdict ok" if v["verdict"] == "no significant change" else "verdict"
        body.append(f"<h2>{esc(v['group_key'])}</h2><div class='{cls}'><b>{esc(v['verdict'])}</b>"
                    + (f": bottleneck <b>{esc(v['bottleneck_stage'])}</b>" if v["bottleneck_stage"] else "")
                    + (f" (mostly {esc(v['detail_stage'])})" if v["detail_stage"] else "")
                    + f"<br>cause: {esc(v['cause'])}<br><small>{esc(v['evidence'])}</small></div>")
        rows = sorted((r for r in m["lad"] if r["group_key"] == v["group_key"] and r["stage_set"] == m["stage_set"]
                       and r["statistic"] == "mean"), key=lambda r: r["seq"])
        body.append("<p>LAD of the mean per stage, 95% CI whiskers; red/green: significant slower/faster, grey: not significant</p>")
        body.append(lad_chart(rows, v["group_key"]))
    body.append(interference_section(m["interference"]))
    body.append(f"<h2>Full text report</h2><pre>{esc(compare_text(m))}</pre>")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>ntscope compare</title><style>{STYLE}</style></head>"
            f"<body>{''.join(body)}</body></html>")


def interference_html(m):
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>ntscope interference</title><style>{STYLE}</style></head>"
            f"<body><h1>ntscope interference</h1><p><code>{esc(m['run_dir'])}</code></p>{interference_section(m)}</body></html>")


def to_json(m):
    return json.dumps(m, indent=1, default=str)
