"""interference.html: per-stream throughput, completions and wait over time, queue depth,
throughput and wait over time per queue and device, and the interference text. Renders
interference.json (m) and the per-stream rows of plot_data.build; computes nothing."""
from ntscope.plots import charts
from ntscope.plots.page import Page, esc
from ntscope.plots.units import seconds, us

from .render_text import interference_text

RESOURCES = 10   # queue/device lines drawn (the first in the document's order)


def interference_section(page, m, plots):
    """The charts and the text of one run's interference document, onto page."""
    page.heading(2, "Streams over time (run)")
    rows = [{"stream": r["stream_id"], "t_s": seconds(r["bin_start_ns"]), "completions": r["completions"],
             "mb_s": r["mb_s"], "wait_us": us(r["wait_mean_ns"])} for r in plots["streams"]]
    if not rows:
        page.nodata("streams", "no I/O has both nvme_setup_cmd and nvme_complete_rq, so no stream")
    else:
        order = list(dict.fromkeys(r["stream"] for r in rows))
        page.how("One line per application stream (process, I/O type and size), per time bin: one stream's "
                 "throughput falling while another's rises, or its wait climbing when another starts, is "
                 "interference. Mean wait (nvme_setup_cmd to nvme_complete_rq) is missing where the stream "
                 "completed nothing.")
        page.chart("streams-mb_s", "streams", charts.series(rows, "stream", "stream", "mb_s", "MB/s (10^6 bytes/s)",
                                                            "throughput per stream", order))
        page.chart("streams-completions", "streams", charts.series(rows, "stream", "stream", "completions",
                                                                   "I/Os completed in the bin", "completions per stream", order))
        page.chart("streams-wait", "streams", charts.series(rows, "stream", "stream", "wait_us", "mean wait (us)",
                                                            "mean wait of the stream's completions", order))
        if plots["streams_total"] > len(order):
            page.how(f"Drawn: the {len(order)} streams with the most I/Os of {plots['streams_total']}.")
    page.heading(2, "Queues and devices over time (run)")
    names = list(dict.fromkeys(f"{r['resource_kind']} {r['resource']}" for r in m["timeseries"]))[:RESOURCES]
    rows = [{"resource": f"{r['resource_kind']} {r['resource']}", "t_s": seconds(r["bin_start_ns"]),
             "inflight": r["inflight_avg"], "mb_s": r["mb_s"], "wait_us": us(r["wait_mean_ns"])}
            for r in m["timeseries"] if f"{r['resource_kind']} {r['resource']}" in names]
    if not rows:
        page.nodata("resources", "no queue or device had a command in flight")
    else:
        page.how("Per transport queue (= its TCP connection) and block device: saturation shows as flat MB/s "
                 "while in-flight commands and the wait climb.")
        page.chart("res-inflight", "resources", charts.series(rows, "resource", "queue / device", "inflight",
                                                              "commands in flight", "in-flight commands (time average)", names))
        page.chart("res-mb_s", "resources", charts.series(rows, "resource", "queue / device", "mb_s",
                                                          "MB/s (10^6 bytes/s)", "throughput", names))
        page.chart("res-wait", "resources", charts.series(rows, "resource", "queue / device", "wait_us",
                                                          "mean wait (us)", "mean wait of the completions", names))
    page.heading(2, "Interference report (text)")
    page.add(f"<pre>{esc(interference_text(m))}</pre>")


def interference_html(m, plots):
    page = Page("ntscope interference")
    page.add(f"<h1>ntscope interference</h1><p><code>{esc(m['run_dir'])}</code></p>")
    interference_section(page, m, plots)
    return page.render()
