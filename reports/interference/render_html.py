"""interference.html: queue depth, throughput and wait over time per queue and device,
and the interference text. Formatting only."""
import html

from .render_text import interference_text

STYLE = """body{font-family:sans-serif;margin:1.5em;max-width:1200px}pre{font-size:12px;background:#f6f6f6;padding:.5em;overflow-x:auto}
svg text{font-size:11px}"""


def esc(s):
    return html.escape(str(s))


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


def interference_html(m):
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>ntscope interference</title><style>{STYLE}</style></head>"
            f"<body><h1>ntscope interference</h1><p><code>{esc(m['run_dir'])}</code></p>{interference_section(m)}</body></html>")
