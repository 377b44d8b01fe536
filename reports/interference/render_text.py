"""Terminal text for the interference model (formatting only): streams, who waited behind
whom, verdict per stream, per-stream breakdown, queue depth and throughput sparklines."""
import textwrap

from ntscope.reports.plots.units import table_unit

SPARK = " ▁▂▃▄▅▆▇█"
MS_FROM_NS = 100_000_000   # a table whose longest wait is 100 ms or more prints in ms (150,000 us reads 150 ms)


def unit_of(values_ns):
    return table_unit(values_ns, MS_FROM_NS)


def in_unit(ns, unit):
    """A duration in UNIT (unit_of): whole numbers, tenths below 10."""
    if ns is None:
        return "-"
    v = ns / unit[1]
    return f"{v:.1f}" if abs(v) < 10 and unit[0] == "ms" else f"{v:.0f}"


def spark(values):
    """One character per value, from the series' lowest (one dot high) to its highest (a full
    block): a queue that is always 5 to 7 deep shows its swings, not a solid bar. A flat series is
    drawn at mid height; an empty bin (no value) is a space."""
    vals = list(values)
    known = [v for v in vals if v is not None]
    if not known:
        return " " * len(vals)
    lo, hi = min(known), max(known)
    if hi <= lo:
        return "".join(" " if v is None else SPARK[4] for v in vals)
    return "".join(" " if v is None else SPARK[1 + int(round(7 * (v - lo) / (hi - lo)))] for v in vals)


def timeseries_lines(ts, summary):
    """Per resource (its line of intf_resource_summary), its series as sparklines."""
    out = []
    by = {}
    for r in ts:
        by.setdefault((r["resource_kind"], r["resource"]), []).append(r)
    for s in summary:
        rs = sorted(by.get((s["resource_kind"], s["resource"]), []), key=lambda r: r["bin"])
        infl = [r["inflight_avg"] for r in rs]
        mbs = [r["mb_s"] for r in rs]
        wait = [r["wait_mean_ns"] for r in rs]   # None: no completion in the bin
        out.append(f"  {s['resource_kind']:6} {s['resource']:28} in-flight avg {s['inflight_avg']:5.1f} "
                   f"max {s['inflight_max']:5.1f}   MB/s avg {s['mb_s_avg']:7.2f} max {s['mb_s_max']:7.2f}")
        out.append(f"         in-flight |{spark(infl[::2])}|")
        out.append(f"         MB/s      |{spark(mbs[::2])}|")
        out.append(f"         wait      |{spark(wait[::2])}|")
    return out


def interference_text(m):
    out = [f"== interference: {m['run_dir']}", "streams (process/pid type size):"]
    su = unit_of(s["mean_wait_ns"] for s in m["streams"])
    out.append(f"  {'stream':28} {'ios':>6} {'MB/s':>8} {'cpus':>6}  {'queues':24} {'mean wait ' + su[0]:>12}")
    for s in m["streams"]:
        out.append(f"  {s['stream_id']:28} {s['ios']:>6} {s['mb_s']:8.2f} {s['cpus'] or '-':>6}  "
                   f"{s['queues'] or '-':24} {in_unit(s['mean_wait_ns'], su):>12}")
    out.append("who waited behind whom (other streams' commands in flight ahead at submit):")
    if not m["sharing"]:
        out.append("  nobody: no stream had another stream's command ahead of it")
    wu = unit_of(v for r in m["sharing"] for v in (r["wait_ns_with"], r["wait_ns_without"]))
    for r in m["sharing"]:
        out.append(f"  {r['stream_id']:28} {r['resource']:6} behind {r['other_stream_id']:28} "
                   f"{'same CPU ' if r['same_cpu'] else 'other CPU'} {100 * r['ios_waited_frac']:5.1f}% of its I/Os, "
                   f"{r['ahead_bytes_mean'] / 1024:8.1f} KiB ahead on average; wait {in_unit(r['wait_ns_with'], wu)} {wu[0]} with, "
                   f"{in_unit(r['wait_ns_without'], wu)} {wu[0]} without")
    out.append("verdict per stream:")
    for r in m["stream_verdicts"]:
        out.append(f"  {r['stream_id']:28} {r['verdict']}")
    bd = [r for r in m["breakdown"] if r["stage_set"] == m["primary_stage_set"] and r["parent"] is None] or \
         [r for r in m["breakdown"] if r["parent"] is None]
    bu = unit_of(r["mean_ns"] for r in bd)
    out.append(f"per-stream breakdown (mean {bu[0]}, top-level stages):")
    by = {}
    for r in bd:
        by.setdefault(r["stream_id"], []).append(r)
    for sid, rs in by.items():
        out.append(f"  {sid:28} " + "  ".join(f"{r['stage']}={in_unit(r['mean_ns'], bu)}" for r in sorted(rs, key=lambda r: r["seq"])))
    out.append("queue depth and throughput over time (100 bins; sparklines show every other bin, each line from "
               "its lowest value to its highest; a blank: no completion):")
    out += timeseries_lines(m["timeseries"], m["resource_summary"])
    return "\n".join(fit(out)) + "\n"


def fit(lines, width=100):
    """Wraps lines longer than the 100-column terminal the reports are made for."""
    out = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()) + 4)
        out += textwrap.wrap(line, width=width, subsequent_indent=indent, drop_whitespace=True)
    return out
