"""Self-contained HTML: verdict, LAD bar chart per stage with CI whiskers (log scale),
queue depth / throughput over time. Formatting only."""
import html
import json
import math

from ntscope.interference.render_html import interference_section

from .render_text import compare_text

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


def to_json(m):
    return json.dumps(m, indent=1, default=str)
