"""The HTML pages (report, compare, interference) on real captures, opened in the system's
headless Chromium through playwright: every chart is drawn (its marks counted against the
JSON documents), nothing is loaded from the network, the console stays clean, a stage has
one colour on every chart of every page, what cannot be drawn says "no data", and a
screenshot of each page is checked (to reports/examples/*.png, the README's pictures, with
NTSCOPE_WRITE_SCREENSHOTS=1: `just screenshots`)."""
import base64
import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict

import pytest

from ntscope.reports.plots.palette import stage_colour

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(REPO, "reports", "examples")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]

# Every data mark of every drawn chart: [chart id, marktype, key, colour, datum].
MARKS_JS = """() => {
  const out = [];
  for (const [id, view] of Object.entries(window.ntscopeViews)) {
    (function walk(mark) {
      for (const item of mark.items || []) {
        if (mark.marktype === 'group') { (item.items || []).forEach(walk); continue; }
        if (mark.role !== 'mark' || !item.datum) continue;
        const d = item.datum;
        const key = d.stage ?? d.queue ?? d.stream ?? d.resource ?? null;
        const colour = (mark.marktype === 'line' || mark.marktype === 'rule') ? item.stroke : item.fill;
        out.push([id, mark.marktype, key, colour, d]);
      }
    })(view.scenegraph().root);
  }
  return out;
}"""


# Text that collides on a chart: per axis, two visible tick labels whose boxes overlap, or the
# axis title over a label: [chart id, what, text, other text]. Text turned by other than a right
# angle (the histograms' bucket labels) is left out: its box is not its glyphs' (neighbours'
# boxes always overlap).
COLLISIONS_JS = """() => {
  const out = [];
  const square = (t) => { const m = /rotate\\(([-0-9.]+)/.exec(t.getAttribute('transform') || '');
                          return !m || parseFloat(m[1]) % 90 === 0; };
  const visible = (t) => t.getAttribute('opacity') !== '0' && parseFloat(getComputedStyle(t).opacity) > 0
                         && t.textContent.trim() !== '' && square(t);
  const hit = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  for (const div of document.querySelectorAll('div.vega[id]')) {
    for (const axis of div.querySelectorAll('g.role-axis')) {
      const labels = Array.from(axis.querySelectorAll('g.role-axis-label text')).filter(visible)
        .map(t => [t.textContent, t.getBoundingClientRect()]);
      for (let i = 0; i < labels.length; i++)
        for (let j = i + 1; j < labels.length; j++)
          if (hit(labels[i][1], labels[j][1])) out.push([div.id, 'labels', labels[i][0], labels[j][0]]);
      for (const t of Array.from(axis.querySelectorAll('g.role-axis-title text')).filter(visible))
        for (const [text, box] of labels)
          if (hit(t.getBoundingClientRect(), box)) out.push([div.id, 'title', t.textContent, text]);
    }
  }
  return out;
}"""

# The line and symbol items of one chart with how they are drawn: [marktype, datum, opacity,
# strokeDash, strokeWidth, shape, x, y, the mark's order among the chart's marks]
STYLE_JS = """(id) => {
  const out = []; let order = 0;
  (function walk(mark) {
    order++;
    for (const item of mark.items || []) {
      if (mark.marktype === 'group') { (item.items || []).forEach(walk); continue; }
      if (mark.role !== 'mark' || !item.datum) continue;
      out.push([mark.marktype, item.datum, item.opacity ?? 1, item.strokeDash ?? null, item.strokeWidth ?? null,
                item.shape ?? null, item.x, item.y, order]);
    }
  })(window.ntscopeViews[id].scenegraph().root);
  return out;
}"""


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is installed by setup.sh (pyproject [test])")
    assert os.access(CHROMIUM, os.X_OK), f"{CHROMIUM} is missing; fix: apt-get install chromium (tools/apt-packages.txt, group test: just test-python installs it)"
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


class Opened:
    """A page opened from a file: console messages, requests, text and marks."""

    def __init__(self, browser, path, viewport=(1200, 1400)):
        assert os.path.isfile(path), f"{path} was not written"
        self.path = path
        self.page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
        self.console, self.requests = [], []
        self.page.on("console", lambda m: self.console.append((m.type, m.text)))
        self.page.on("pageerror", lambda e: self.console.append(("pageerror", str(e))))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto("file://" + path)
        # a wait, not a timed assertion: a slow machine only makes it slower
        self.page.wait_for_selector("body[data-charts=drawn]", timeout=300_000)
        self.text = self.page.inner_text("body")
        self.marks = self.page.evaluate(MARKS_JS)
        self.chart_ids = self.page.evaluate("Object.keys(window.ntscopeViews)")
        self.failed = self.page.evaluate("Array.from(document.querySelectorAll('div.vega.failed')).map(e => e.id)")

    def of(self, chart, marktype=None):
        return [m for m in self.marks if m[0] == chart and (marktype is None or m[1] == marktype)]

    def assert_clean(self):
        bad = [c for c in self.console if c[0] in ("error", "warning", "pageerror")]
        assert not bad, f"{self.path}: console errors/warnings: {bad[:5]}"
        remote = [u for u in self.requests if not u.startswith(("file:", "data:", "blob:", "about:"))]
        assert not remote, f"{self.path} loaded {remote[:5]}: the page must be self-contained"
        assert not self.failed, f"{self.path}: charts not drawn: {self.failed}"
        nodes = self.page.evaluate("document.querySelectorAll('div.vega svg .role-mark > *').length")
        assert nodes > 100, f"{self.path}: only {nodes} SVG mark elements drawn"


# ---------------------------------------------------------------- the runs
@pytest.fixture(scope="module")
def analyzed(fixture_run, ntscope_cli):
    done = {}

    def get(name):
        if name not in done:
            run = fixture_run(name)
            r = ntscope_cli("analyze", run, "--quiet")
            assert r.returncode == 0, r.stderr
            done[name] = run
        return done[name]
    return get


@pytest.fixture(scope="module")
def randread(analyzed):
    return analyzed("stock-randread-4k-qd8")


@pytest.fixture(scope="module")
def patched_c3(analyzed):
    return analyzed("lab-6.1-patched-interference-c3")   # reads: nvmet_tcp_r2t_wait is 0 for every I/O


@pytest.fixture(scope="module")
def compared(fixture_run, ntscope_cli):
    base, run = fixture_run("lab-6.1-stock-base-randread"), fixture_run("lab-6.1-stock-slow-device")
    r = ntscope_cli("compare", base, run, "--quiet")
    assert r.returncode == 0, r.stderr
    return run


def doc_of(run, name="report.json"):
    with open(os.path.join(run, "report", name)) as f:
        return json.load(f)


def html_of(run, name):
    return os.path.join(run, "report", name)


def stage_seq(doc, stage_set):
    return {d["stage"]: d["seq"] for d in doc["stage_definitions"] if d["stage_set"] == stage_set}


# ---------------------------------------------------------------- report.html
def test_report_page_draws_every_chart_from_the_report(browser, randread):
    doc = doc_of(randread)
    page = Opened(browser, html_of(randread, "report.html"))
    page.assert_clean()
    [g] = doc["groups"]
    assert set(page.chart_ids) >= {"breakdown", "cdf-0", "hist-0", "tail-0", "heat-0", "ts-mb_s", "ts-inflight"}
    top = [s["stage"] for s in g["stages"] if s["parent"] is None and s["stage"] != "end_to_end"]
    # breakdown: one segment per top-level stage, its length the stage's mean; a tick at end_to_end's mean
    seg = {m[2]: m[4]["value_us"] for m in page.of("breakdown", "rect")}
    assert seg == {s["stage"]: s["mean_ns"] / 1e3 for s in g["stages"] if s["stage"] in top + ["end_to_end"]}
    # CDF: one line per stock stage, a point per percentile above 0
    lines = defaultdict(int)
    for m in page.of("cdf-0", "line"):
        lines[m[2]] += 1
    assert dict(lines) == {c["stage"]: sum(1 for v in c["dur_ns"] if v > 0) for c in g["cdf_pct_1_to_100"]}
    assert len(lines) == 12
    # histograms: every bcc bucket of report.json, each stage's bars adding up to its I/Os
    bars = page.of("hist-0", "rect")
    assert len(bars) == len(g["histograms"]) == 122
    per_stage = defaultdict(int)
    for m in bars:
        per_stage[m[2]] += m[4]["count"]
    assert dict(per_stage) == {s["stage"]: s["count"] for s in g["stages"]}
    # heatmap: every end_to_end I/O in exactly one (time bin, bucket) cell
    assert sum(m[4]["count"] for m in page.of("heat-0", "rect")) == g["count"] == 6389
    # tail view: the top-level stages (and end_to_end's tick) for the median and the p99+ I/Os
    cohorts = {(m[4]["cohort"].split(" ")[0], m[2]) for m in page.of("tail-0", "rect")}
    assert cohorts == {(c, s) for c in ("median", "p99+") for s in top + ["end_to_end"]}


def test_queue_series_go_to_zero_instead_of_bridging_idle_bins(browser, randread):
    doc = doc_of(randread)
    page = Opened(browser, html_of(randread, "report.html"))
    bin_ns = doc["timeseries"][0]["bin_ns"]
    n_bins = max(r["bin"] for r in doc["timeseries"]) + 1
    drawn = defaultdict(dict)
    for m in page.of("ts-inflight", "line"):
        drawn[m[2]][round(m[4]["t_s"] * 1e9 / bin_ns)] = m[4]["inflight"]
    assert set(drawn) == {r["queue"] for r in doc["timeseries"]} == {"all", "initiator/c0/q1", "initiator/c0/q2"}
    idle = 0
    for q, points in drawn.items():
        assert sorted(points) == list(range(n_bins)), f"{q}: a point per bin"
        have = {r["bin"] for r in doc["timeseries"] if r["queue"] == q}
        for b in set(range(n_bins)) - have:   # no row in report.json: nothing in flight
            assert points[b] == 0, (q, b)
            idle += 1
    assert idle >= 2   # this capture has idle bins on both queues (so the check above checked something)


def test_an_all_zero_stage_says_no_data_instead_of_a_line(browser, patched_c3):
    doc = doc_of(patched_c3)
    assert doc["stage_sets"][0] == "ntprof"
    r2t = [s for g in doc["groups"] for s in g["stages"] if s["stage"] == "nvmet_tcp_r2t_wait"]
    assert r2t and all(s["max_ns"] == 0 and s["min_ns"] == 0 for s in r2t)   # reads: no R2T
    page = Opened(browser, html_of(patched_c3, "report.html"))
    page.assert_clean()
    assert not [m for m in page.marks if m[2] == "nvmet_tcp_r2t_wait"]
    notes = page.page.eval_on_selector_all("p.nodata", "ps => ps.map(p => [p.dataset.kind, p.textContent])")
    for kind in ("cdf", "histogram"):
        assert sum(1 for k, t in notes if k == kind and t.startswith("no data: nvmet_tcp_r2t_wait (every duration is 0")) \
            == len(doc["groups"]), (kind, notes)
    # the other 12 ntprof stages are drawn, each in its own colour
    colours = {m[2]: m[3] for m in page.of("cdf-0", "line")}
    assert len(colours) == 12 and len(set(colours.values())) == 12


def test_empty_selections_say_no_data(patched_c3):
    """The renderers given real documents whose series are empty (a run where no command has
    both nvme_setup_cmd and nvme_complete_rq): 'no data', no empty frame."""
    from ntscope.reports.interference import model as imodel, plot_data as iplot, render_html as ihtml
    from ntscope.reports.report import model, plot_data, render_html, selection, spec
    from ntscope.sql import views
    con = views.connect(patched_c3, interference=True)
    selection.apply(con, spec.Spec())
    doc = model.build(con, spec.Spec())
    plots = plot_data.build(con, doc)
    assert plots["queue_timeseries"] and plots["heatmap"]
    page = render_html.render(doc, dict(plots, queue_timeseries=[], heatmap=[], tail=[]))
    assert "no data: no I/O has both nvme_setup_cmd and nvme_complete_rq" in page
    assert "no data: no I/O of this group has an end_to_end duration and a completion time" in page
    assert "id='ts-mb_s'" not in page and "id='heat-0'" not in page and "id='tail-0'" not in page
    m = imodel.interference_model(con, patched_c3)
    page = ihtml.interference_html(dict(m, timeseries=[]), dict(iplot.build(con), streams=[]))
    assert "no data: no I/O has both nvme_setup_cmd and nvme_complete_rq, so no stream" in page
    assert "no data: no queue or device had a command in flight" in page
    assert "id='streams-mb_s'" not in page


# ---------------------------------------------------------------- compare.html, interference.html
def test_compare_page_draws_lad_and_both_runs_cdfs(browser, compared):
    m = doc_of(compared, "compare.json")
    page = Opened(browser, html_of(compared, "compare.html"))
    page.assert_clean()
    assert {"lad-0", "cdfpair-0"} <= set(page.chart_ids)
    lad = {(r["stage"], r["statistic"]): r["lad"] for r in m["lad"] if r["stage_set"] == "stock" and r["lad"]}
    bars = {(d["stage"], d["statistic"]): d["lad"] for _, _, _, _, d in page.of("lad-0", "rect")}
    assert bars == lad and len(bars) == 12 * 3
    assert bars[("target_device", "mean")] > 100   # the injected slow device
    runs = defaultdict(set)
    for _, _, stage, _, d in page.of("cdfpair-0", "line"):
        runs[stage].add(d["run"])
    assert len(runs) == 12 and all(v == {"base", "run"} for v in runs.values())


def test_interference_page_draws_each_stream_over_time(browser, patched_c3):
    m = doc_of(patched_c3, "interference.json")
    page = Opened(browser, html_of(patched_c3, "interference.html"))
    page.assert_clean()
    streams = {s["stream_id"]: s["ios"] for s in m["streams"]}
    assert len(streams) == 2
    done = defaultdict(int)
    for _, _, stream, _, d in page.of("streams-completions", "line"):
        done[stream] += d["completions"]
    assert dict(done) == streams
    resources = {m[2] for m in page.of("res-inflight", "line")}
    assert resources == {f"{r['resource_kind']} {r['resource']}" for r in m["timeseries"]}


def test_one_colour_per_stage_on_every_chart_of_every_page(browser, randread, compared):
    seq = stage_seq(doc_of(randread), "stock")
    seen = defaultdict(set)
    for path in (html_of(randread, "report.html"), html_of(compared, "compare.html")):
        page = Opened(browser, path)
        for chart, marktype, stage, colour, _ in page.marks:
            if stage in seq and marktype in ("rect", "line", "symbol"):   # not the black CI whiskers (rule)
                seen[stage].add((colour, chart.split("-")[0]))
    charts = {c for v in seen.values() for _, c in v}
    assert {"breakdown", "cdf", "hist", "tail", "lad", "cdfpair"} <= charts
    colours = {s: {c for c, _ in v} for s, v in seen.items()}
    assert colours == {s: {stage_colour(seq[s])} for s in seq}, colours
    assert len({stage_colour(q) for q in seq.values()}) == len(seq) == 12
    assert len({stage_colour(q) for q in range(13)}) == 13   # the largest set, ntprof


def test_no_text_collides_on_any_chart(browser, randread, compared, patched_c3):
    """On every chart of the three pages, no two visible tick labels of an axis overlap (the CDF
    pairs' log axes printed '10,000100,000'), and no axis title sits on its labels (the tail
    view's title on its long cohort labels)."""
    for path in (html_of(randread, "report.html"), html_of(compared, "compare.html"),
                 html_of(patched_c3, "interference.html")):
        page = Opened(browser, path)
        labels = page.page.evaluate("document.querySelectorAll('g.role-axis-label text').length")
        assert labels > 50, path
        assert page.page.evaluate(COLLISIONS_JS) == [], path


def test_compare_cdfs_tell_base_from_run_with_a_legend(browser, compared):
    """Base and run differ by more than the dash: lighter lines, other point shapes, and a
    legend that names them."""
    page = Opened(browser, html_of(compared, "compare.html"))
    items = page.page.evaluate(STYLE_JS, "cdfpair-0")
    style = defaultdict(set)
    for marktype, d, opacity, dash, _, shape, _, _, _ in items:
        style[(marktype, d["run"])].add((opacity, tuple(dash or ()), shape if marktype == "symbol" else None))
    for marktype in ("line", "symbol"):
        base, run = style[(marktype, "base")], style[(marktype, "run")]
        assert len(base) == len(run) == 1 and base != run, (marktype, base, run)
    [(base_op, base_dash, _)] = style[("line", "base")]
    [(run_op, run_dash, _)] = style[("line", "run")]
    assert base_op < run_op and base_dash and not any(run_dash[1:2])
    [(_, _, base_shape)], [(_, _, run_shape)] = style[("symbol", "base")], style[("symbol", "run")]
    assert base_shape != run_shape
    legend = page.page.eval_on_selector_all("#cdfpair-0 g.role-legend-label text", "ts => ts.map(t => t.textContent)")
    assert legend == ["base (dashed)", "run (solid)"]


def test_interference_page_draws_who_waited_behind_whom(browser, patched_c3):
    m = doc_of(patched_c3, "interference.json")
    page = Opened(browser, html_of(patched_c3, "interference.html"))
    page.assert_clean()
    want = {(r["stream_id"], r["other_stream_id"], r["resource"]): 100 * r["ios_waited_frac"] for r in m["sharing"]}
    cells = {(d["stream"], d["other"], d["resource"]): d["pct"] for _, _, _, _, d in page.of("sharing", "rect")}
    assert cells == want and len(cells) >= 2
    assert len(page.of("sharing", "text")) == len(want)   # each cell labelled with its %
    # c3: the 4 KiB reader waited behind the 128 KiB one on their one queue for most of its I/Os
    small = [s["stream_id"] for s in m["streams"] if s["size_bytes"] == 4096]
    big = [s["stream_id"] for s in m["streams"] if s["size_bytes"] == 131072]
    assert want[(small[0], big[0], "queue")] > 50


def test_a_small_stream_rises_off_the_axis_beside_a_large_one(browser, patched_c3):
    """A 4 KiB stream beside a 128 KiB one: on the MB/s chart (symlog) its line stands well above
    the zero line, where a linear axis drew it at 0."""
    m = doc_of(patched_c3, "interference.json")
    page = Opened(browser, html_of(patched_c3, "interference.html"))
    [small] = [s["stream_id"] for s in m["streams"] if s["size_bytes"] == 4096]
    [big] = [s["stream_id"] for s in m["streams"] if s["size_bytes"] == 131072]
    zero, top = page.page.evaluate("[window.ntscopeViews['streams-mb_s'].scale('y')(0), "
                                   "window.ntscopeViews['streams-mb_s'].scale('y').range()[1]]")
    height = zero - top
    rise = defaultdict(float)
    for marktype, d, _, _, _, _, _, y, _ in page.page.evaluate(STYLE_JS, "streams-mb_s"):
        if marktype == "symbol" and d["mb_s"]:
            rise[d["stream"]] = max(rise[d["stream"]], (zero - y) / height)
    peak = {s: max(d["mb_s"] or 0 for _, _, k, _, d in page.of("streams-mb_s", "symbol") if k == s) for s in (small, big)}
    assert peak[big] > 10 * peak[small] > 0                # the case: an order of magnitude apart
    assert rise[small] > 0.3 and rise[big] > rise[small], rise


def test_a_device_line_does_not_hide_its_only_queue(browser, patched_c3):
    """One queue on one device: equal values, two lines; the device's is wide and dashed and drawn
    first, the queue's thin and solid over it."""
    m = doc_of(patched_c3, "interference.json")
    queues = {r["resource"] for r in m["timeseries"] if r["resource_kind"] == "queue"}
    devices = {r["resource"] for r in m["timeseries"] if r["resource_kind"] == "device"}
    assert len(queues) == len(devices) == 1
    page = Opened(browser, html_of(patched_c3, "interference.html"))
    for chart in ("res-inflight", "res-mb_s", "res-wait"):
        lines = {}
        for marktype, d, _, dash, width, _, _, _, order in page.page.evaluate(STYLE_JS, chart):
            if marktype == "line":
                lines.setdefault(d["resource"].split(" ")[0], set()).add((tuple(dash or ()), width, order))
        [(dev_dash, dev_width, dev_order)], [(q_dash, q_width, q_order)] = lines["device"], lines["queue"]
        assert dev_dash and not q_dash and dev_width > 2 * q_width and dev_order < q_order, (chart, lines)


# ---------------------------------------------------------------- the README's pictures
NONBLANK_JS = """async (b64) => {
  const img = new Image(); img.src = 'data:image/png;base64,' + b64; await img.decode();
  const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
  const g = c.getContext('2d'); g.drawImage(img, 0, 0);
  const px = g.getImageData(0, 0, c.width, c.height).data;
  let ink = 0; const colours = new Set();
  for (let i = 0; i < px.length; i += 4) {
    if (px[i] < 235 || px[i + 1] < 235 || px[i + 2] < 235) ink++;
    if (i % 64 === 0) colours.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
  }
  return {width: c.width, height: c.height, ink: ink / (px.length / 4), colours: colours.size};
}"""


@pytest.mark.parametrize("which,start", [("report", "#breakdown"), ("compare", "h2"), ("interference", "#streams-mb_s")])
def test_screenshot_of_each_page(browser, randread, compared, patched_c3, which, start, tmp_path):
    path = {"report": html_of(randread, "report.html"), "compare": html_of(compared, "compare.html"),
            "interference": html_of(patched_c3, "interference.html")}[which]
    page = Opened(browser, path, viewport=(1100, 900))
    top = page.page.evaluate(f"document.querySelector('{start}').getBoundingClientRect().top + window.scrollY")
    # the README's pictures are refreshed only on request (just screenshots): a test run
    # leaves the checkout as it found it
    png = os.path.join(EXAMPLES if os.environ.get("NTSCOPE_WRITE_SCREENSHOTS") else str(tmp_path), f"{which}.png")
    page.page.screenshot(path=png, full_page=True, clip={"x": 0, "y": max(top - 90, 0), "width": 1100, "height": 1250})
    size = os.path.getsize(png)
    assert 0 < size < 300_000, f"{png}: {size} bytes; fix: a smaller clip in this test"
    with open(png, "rb") as f:
        info = page.page.evaluate(NONBLANK_JS, base64.b64encode(f.read()).decode())
    assert (info["width"], info["height"]) == (1100, 1250)
    assert info["ink"] > 0.03 and info["colours"] > 20, f"{png} looks blank: {info}"


def test_the_first_screen_is_the_answer_and_diagnostics_are_folded(browser, randread, fixture_run, ntscope_cli, tmp_path):
    page = Opened(browser, os.path.join(randread, "report", "report.html"), viewport=(1200, 800))
    page.assert_clean()
    headings = page.page.evaluate("Array.from(document.querySelectorAll('h2')).map(h => h.innerText)")
    assert headings[0].startswith("Stage breakdown"), headings[:3]
    box = page.page.locator("#breakdown").bounding_box()
    assert box and box["y"] + box["height"] / 2 < 800, box        # the breakdown is on the first screen
    assert page.page.evaluate("document.querySelector('details#pipeline_stats').open") is False
    assert not page.page.locator("details#pipeline_stats table").is_visible()
    # with --slo, the objectives come right after the breakdown, met or missed
    out = str(tmp_path / "slo")
    r = ntscope_cli("analyze", randread, "--quiet", "--no-interference", "--out", out,
                    "--slo", "read: p99 <= 20ms", "--slo", "read: p50 <= 1us")
    assert r.returncode == 0, r.stderr
    slo = Opened(browser, os.path.join(out, "report.html"), viewport=(1200, 800))
    headings = slo.page.evaluate("Array.from(document.querySelectorAll('h2')).map(h => h.innerText)")
    assert headings[:2] == [headings[0], "Objectives (--slo)"] and headings[0].startswith("Stage breakdown")
    cells = slo.page.evaluate("Array.from(document.querySelectorAll('h2 + table tr td:nth-child(2)')).map(t => t.innerText)")
    assert "MISSED" in cells and len(cells) == 2


def test_the_not_measured_segment_has_a_colour_no_stage_has(browser, randread, tmp_path):
    from ntscope.reports.plots import palette
    assert palette.stage_colour(palette.UNMEASURED_SEQ) not in palette.STAGE_COLOURS
    # the run's initiator alone: its target stages are not measured, one grey segment stands for them
    one = tmp_path / "initiator-only"
    os.makedirs(one)
    shutil.copytree(os.path.join(randread, "initiator"), one / "initiator")
    r = subprocess.run([sys.executable, "-m", "ntscope", "analyze", str(one), "--quiet", "--no-interference"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    page = Opened(browser, str(one / "report" / "report.html"))
    segments = {(stage, colour) for chart, marktype, stage, colour, _ in page.marks
                if chart == "breakdown" and marktype == "rect"}
    unmeasured = {c for s, c in segments if s and s.startswith("not measured")}
    assert unmeasured == {palette.UNMEASURED_COLOUR}, segments
    assert palette.UNMEASURED_COLOUR not in {c for s, c in segments if s and not s.startswith("not measured")}


def test_the_latency_heatmap_ends_where_the_run_ends(browser, randread):
    page = Opened(browser, html_of(randread, "report.html"))
    got = page.page.evaluate("""() => {
        const v = window.ntscopeViews['heat-0'];
        return [v.scale('x').domain(), Math.max(...v.data('heat').map(r => r.t1_s))];
    }""")
    (lo, hi), last = got
    assert lo == 0 and hi == pytest.approx(last), got


def test_report_page_draws_each_tenant_per_second_and_the_class_table(browser, fixture_run, ntscope_cli, tmp_path):
    """A run with cgroups recorded (lab-6.1-patched-tenants, its tenants file): report.html's
    tenants section draws one point per tenant and second (tenant_seconds.parquet's rate and
    p99), the class table names the objective and its missed seconds, and its screenshot is not blank."""
    import pyarrow.parquet as pq
    run = fixture_run("lab-6.1-patched-tenants")
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--tenants",
                    os.path.join(REPO, "capture", "scenarios", "tenants.toml"))
    assert r.returncode == 0, r.stderr
    page = Opened(browser, html_of(run, "report.html"))
    page.assert_clean()
    rows = pq.read_table(os.path.join(run, "report", "tenant_seconds.parquet")).to_pylist()
    for chart, field in (("tenants-iops", "iops"), ("tenants-p99", "p99_us")):
        points = sorted((m[4]["tenant"], m[4]["t_s"], round(m[4][field], 3)) for m in page.of(chart, "symbol"))
        assert points == sorted((r["tenant"], r["second"], round(r[field], 3)) for r in rows), chart
    assert {m[4]["tenant"] for m in page.of("tenants-iops", "symbol")} == {"interactive", "bulk", "reports"}
    tenants = doc_of(run, "tenants.json")
    (obj,) = [o for c in tenants["classes"] if c["class"] == "latency" for o in c["objectives"]]
    assert "p99 <= 50ms" in page.text and obj["seconds_missed"] >= 1
    top = page.page.evaluate("document.querySelector('#tenants-iops').getBoundingClientRect().top + window.scrollY")
    png = os.path.join(EXAMPLES if os.environ.get("NTSCOPE_WRITE_SCREENSHOTS") else str(tmp_path), "tenants.png")
    page.page.screenshot(path=png, full_page=True, clip={"x": 0, "y": max(top - 90, 0), "width": 1100, "height": 900})
    with open(png, "rb") as f:
        info = page.page.evaluate(NONBLANK_JS, base64.b64encode(f.read()).decode())
    assert info["ink"] > 0.03 and info["colours"] > 20, f"{png} looks blank: {info}"
