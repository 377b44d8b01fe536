"""One self-contained HTML page: static HTML (headings, tables, notes) plus Vega-Lite charts,
drawn in the browser as SVG by the inlined Vega-Embed bundle (Vega, Vega-Lite,
vega-tooltip). Nothing is loaded from anywhere: no
URL, no font, no data file. Charts are `window.ntscopeViews[id]` (Vega views) once drawn;
`<body data-charts="drawn">` says every chart finished."""
import html
import json

from . import bundle

STYLE = """
body{font-family:system-ui,sans-serif;margin:20px;color:#222;max-width:1180px}
h1{font-size:20px}h2{font-size:17px;margin-top:30px;border-bottom:1px solid #ddd}h3{font-size:15px;margin:18px 0 4px}
table{border-collapse:collapse;font-size:12px;margin:4px 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
td:first-child,th:first-child{text-align:left}td.text{text-align:left}tr.warning{background:#fff3cd}tr.error{background:#f8d7da}
pre{font-size:12px;background:#f6f6f6;padding:.5em;overflow-x:auto}
p.how{font-size:13px;color:#444;margin:2px 0 6px;max-width:1000px}
p.nodata{font-size:13px;color:#7a4b00;background:#fdf6e3;border-left:4px solid #e0b050;padding:4px 8px;margin:4px 0}
figure.chart{margin:6px 0 14px}div.vega.failed{color:#a00}
.verdict{border-left:6px solid #c33;padding:.4em .8em;background:#fff4f4;margin:.6em 0}.verdict.ok{border-color:#393;background:#f4fff4}
"""

EMBED = """
(function () {
  var specs = JSON.parse(document.getElementById('ntscope-specs').textContent);
  window.ntscopeViews = {};
  var runs = [];
  function fail(el, id, e) {
    el.textContent = 'chart ' + id + ' could not be drawn: ' + e;
    el.className += ' failed';
    console.error('ntscope: chart ' + id + ' could not be drawn: ' + e);
  }
  var options = {renderer: 'svg', mode: 'vega-lite',
                 actions: {export: true, source: false, compiled: false, editor: false}};
  Object.keys(specs).forEach(function (id) {
    var el = document.getElementById(id);
    runs.push(vegaEmbed(el, specs[id], options)
      .then(function (r) { window.ntscopeViews[id] = r.view; })
      .catch(function (e) { fail(el, id, e); }));
  });
  Promise.all(runs).then(function () { document.body.setAttribute('data-charts', 'drawn'); });
})();
"""


def esc(s):
    return html.escape(str(s))


def script_json(obj):
    """JSON safe inside <script>: no '<' at all (so no '</script>' or '<!--')."""
    return json.dumps(obj, separators=(",", ":"), default=str).replace("<", "\\u003c")


class Page:
    def __init__(self, title):
        self.title = title
        self.parts = []
        self.specs = {}

    def add(self, fragment):
        """Raw HTML (callers escape what they insert)."""
        self.parts.append(fragment)

    def heading(self, level, text):
        self.parts.append(f"<h{level}>{esc(text)}</h{level}>")

    def how(self, text):
        """A line on how to read the next chart."""
        self.parts.append(f"<p class='how'>{esc(text)}</p>")

    def nodata(self, kind, text):
        """'no data: ...' in place of (or under) a chart of this kind."""
        self.parts.append(f"<p class='nodata' data-kind='{esc(kind)}'>no data: {esc(text)}</p>")

    def chart(self, chart_id, kind, built):
        """built: (Altair chart reading named datasets, {name: rows}) from ntscope.reports.plots.charts.
        The chart is validated against the Vega-Lite schema here; the rows go in as they are."""
        chart, datasets = built
        if chart_id in self.specs:
            raise ValueError(f"chart id {chart_id!r} is used twice on the page {self.title!r}; this is a bug")
        spec = chart.to_dict()
        spec["datasets"] = dict(spec.get("datasets", {}), **datasets)
        self.specs[chart_id] = spec
        self.parts.append(f"<figure class='chart' data-kind='{esc(kind)}'>"
                          f"<div id='{esc(chart_id)}' class='vega'></div></figure>")

    def table(self, header, rows, row_classes=None, text_cols=()):
        """text_cols: indexes of left-aligned prose columns (numbers align right)."""
        out = ["<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>"]
        for i, r in enumerate(rows):
            cls = f" class='{esc(row_classes[i])}'" if row_classes and row_classes[i] else ""
            out.append(f"<tr{cls}>" + "".join(f"<td class='text'>{esc(c)}</td>" if j in text_cols else f"<td>{esc(c)}</td>"
                                              for j, c in enumerate(r)) + "</tr>")
        out.append("</table>")
        self.parts.append("".join(out))

    def render(self):
        return (f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(self.title)}</title>"
                f"<style>{STYLE}</style>"
                f"<script>{bundle.javascript()}</script></head><body>"
                + "".join(self.parts)
                + f"<script id='ntscope-specs' type='application/json'>{script_json(self.specs)}</script>"
                f"<script>{EMBED}</script></body></html>\n")
