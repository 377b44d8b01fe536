"""interference.html: per-stream throughput, completions and wait over time, queue depth,
throughput and wait over time per queue and device, and the interference text. Renders
interference.json (m) and the per-stream rows of plot_data.build; computes nothing."""
from ntscope.reports.plots import charts
from ntscope.reports.plots.page import Page, esc
from ntscope.reports.plots.units import seconds, us

from .render_text import interference_text

RESOURCES = 10   # queue/device lines drawn (the first in the document's order)
STREAMS_SHARING = 8   # streams of the who-waited-behind-whom grid when no stream series is drawn


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
        # symlog: a 4 KiB stream moves 30x fewer bytes than a 128 KiB one at the same I/O rate; on a
        # linear axis it lay flat on 0 (its I/O rate is the completions chart below)
        page.chart("streams-mb_s", "streams", charts.series(rows, "stream", "stream", "mb_s", "MB/s (10^6 bytes/s)",
                                                            "throughput per stream", order, symlog=True))
        page.chart("streams-completions", "streams", charts.series(rows, "stream", "stream", "completions",
                                                                   "I/Os completed in the bin", "completions per stream", order))
        page.chart("streams-wait", "streams", charts.series(rows, "stream", "stream", "wait_us", "mean wait (us)",
                                                            "mean wait of the stream's completions", order))
        if plots["streams_total"] > len(order):
            page.how(f"Drawn: the {len(order)} streams with the most I/Os of {plots['streams_total']}.")
    sharing(page, m, order if rows else [])
    page.heading(2, "Queues and devices over time (run)")
    names = list(dict.fromkeys(f"{r['resource_kind']} {r['resource']}" for r in m["timeseries"]))[:RESOURCES]
    devices = [n for n in names if n.startswith("device ")]
    rows = [{"resource": f"{r['resource_kind']} {r['resource']}", "t_s": seconds(r["bin_start_ns"]),
             "inflight": r["inflight_avg"], "mb_s": r["mb_s"], "wait_us": us(r["wait_mean_ns"])}
            for r in m["timeseries"] if f"{r['resource_kind']} {r['resource']}" in names]
    if not rows:
        page.nodata("resources", "no queue or device had a command in flight")
    else:
        page.how("Per transport queue (= its TCP connection) and block device: saturation shows as flat MB/s "
                 "while in-flight commands and the wait climb. Devices are the wide dashed lines, drawn under "
                 "the queues: a device with one queue has the same values, and both stay visible.")
        page.chart("res-inflight", "resources", charts.series(rows, "resource", "queue / device", "inflight",
                                                              "commands in flight", "in-flight commands (time average)", names,
                                                              under=devices))
        page.chart("res-mb_s", "resources", charts.series(rows, "resource", "queue / device", "mb_s",
                                                          "MB/s (10^6 bytes/s)", "throughput", names, under=devices))
        page.chart("res-wait", "resources", charts.series(rows, "resource", "queue / device", "wait_us",
                                                          "mean wait (us)", "mean wait of the completions", names,
                                                          under=devices))
    page.heading(2, "Interference report (text)")
    page.add(f"<pre>{esc(interference_text(m))}</pre>")


def sharing(page, m, drawn):
    """Who waited behind whom: intf_stream_sharing as a grid per resource (the streams drawn above,
    else the first of the document)."""
    page.heading(2, "Who waited behind whom (run)")
    keep = set(drawn) or set(list(dict.fromkeys(r["stream_id"] for r in m["streams"]))[:STREAMS_SHARING])
    rows = [{"stream": r["stream_id"], "other": r["other_stream_id"], "resource": r["resource"],
             "pct": 100 * r["ios_waited_frac"], "wait_with_us": us(r["wait_ns_with"]),
             "wait_without_us": us(r["wait_ns_without"]),
             "ahead_kb": None if r["ahead_bytes_mean"] is None else r["ahead_bytes_mean"] / 1024}
            for r in m["sharing"] if r["stream_id"] in keep and r["other_stream_id"] in keep]
    if not rows:
        page.nodata("sharing", "no stream had another stream's commands ahead of it on its queue or device")
        return
    page.how("Per stream (row): the share of its I/Os that were submitted while commands of another stream "
             "(column) were in flight ahead of them, on the same transport queue and on the same device; hover "
             "a cell for the mean wait with and without that stream ahead.")
    page.chart("sharing", "sharing", charts.waited_behind(rows, "who waited behind whom (% of the stream's I/Os)"))


def interference_html(m, plots):
    page = Page("ntscope interference")
    page.add(f"<h1>ntscope interference</h1><p><code>{esc(m['run_dir'])}</code></p>")
    interference_section(page, m, plots)
    return page.render()
