"""report.txt: pipeline_stats (warnings and errors with their meaning), clock, then per group
the stage table of the printed stage sets in one unit per table (106 columns with the
default percentiles) and a log2 histogram of end_to_end, then a glossary of the stages."""
import textwrap

from ntscope.reports.plots.units import table_unit
from ntscope.reports.slo import render_text as slo_text

def pct_name(p):
    """50.0 -> 'p50', 99.9 -> 'p99.9'."""
    return "p" + f"{p:.4f}".rstrip("0").rstrip(".")


def columns(rows):
    """The stage table's columns: (header, value of a stage row): n, avg, stdev, the chosen
    percentiles (--percentiles), max."""
    pcts = next((r["percentiles"] for r in rows if r.get("percentiles")), [])
    cols = [("n", lambda s: s["count"]), ("avg", lambda s: s["mean_ns"]), ("stdev", lambda s: s.get("stddev_ns"))]
    cols += [(pct_name(p["pct"]), (lambda i: lambda s: (s.get("percentiles") or [{}] * (i + 1))[i].get("dur_ns"))(i))
             for i, p in enumerate(pcts)]
    return cols + [("max", lambda s: s["max_ns"])]


def in_unit(ns, unit):
    if ns is None:
        return "-"
    v = ns / unit[1]
    if abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.1f}" if abs(v) >= 10 or unit[0] == "us" else f"{v:.2f}"


def stage_table(stages, stage_set, unmeasured=()):
    """The stage table of one stage set in one unit (named in its title); a run that cannot
    measure some top-level stages (a one-host run) gets a row with what they took together."""
    rows = [s for s in stages if s["stage_set"] == stage_set]
    gaps = [u for u in unmeasured if u["stage_set"] == stage_set]
    cols = columns(rows)
    unit = table_unit([f(s) for s in rows for _, f in cols[1:]] + [u["mean_ns"] for u in gaps])
    title = "stage (" + stage_set + ", " + unit[0] + ")"
    # a title longer than the name column ('stage (s_notation, us)') takes room from the n column
    first = f"  {title:<20}{cols[0][0]:>7}" if len(title) <= 20 else f"  {title} {cols[0][0]:>{max(1, 26 - len(title))}}"
    out = [first + "".join(f"{h:>7}" for h, _ in cols[1:])]
    for s in rows:
        name = ("  " + s["stage"]) if s["parent"] else s["stage"]
        cells = [str(s["count"])] + [in_unit(f(s), unit) for _, f in cols[1:]]
        out.append(f"  {name[:20]:<20}" + "".join(f"{c:>7}" for c in cells))
    for u in gaps:
        out.append(f"  {'not measured':<20}{u['count']:>7}{in_unit(u['mean_ns'], unit):>7}"
                   f"   ({u['label']}: end_to_end minus the stages above, per I/O)")
        out += wrap("left out: " + ", ".join(u["stages"]), " " * 25)
    return out


def histogram(hist, stage_set, stage):
    h = [x for x in hist if x["stage_set"] == stage_set and x["stage"] == stage]
    if not h:
        return []
    top = max(x["count"] for x in h)
    out = [f"  {stage} histogram ({stage_set}):", f"  {'usecs':>22} : {'count':<8} distribution"]
    for x in h:
        if x["bucket"] == -2:
            rng = "negative"
        else:
            rng = f"{x['lo_ns'] // 1000} -> {x['hi_ns'] // 1000 - 1}"
        bar = "*" * max(1, round(40 * x["count"] / top))
        out.append(f"  {rng:>22} : {x['count']:<8} |{bar:<40}|")
    return out


def cpu_wait(cw):
    """How long NVMe/TCP's CPU work waited for its CPU (capture key cpu_wait): per host the
    NET_RX softirq and io_work, per queue the CPU that ran its io_work. Each table in one unit."""
    if not cw["hosts"]:
        return []
    hk = ["io_work_wait_mean_ns", "io_work_wait_p99_ns", "net_rx_wait_mean_ns", "net_rx_wait_p99_ns", "net_rx_wait_max_ns"]
    hu = table_unit([h[k] for h in cw["hosts"] for k in hk])
    L = ["", f"CPU wait (NVMe/TCP work queued or raised until a CPU ran it; times in {hu[0]})",
         f"  {'host':<14} {'io_work runs':>12} {'wait avg':>9} {'p99':>8} {'NET_RX runs':>12} {'wait avg':>9} {'p99':>8} {'max':>8}"]
    for h in cw["hosts"]:
        L.append(f"  {h['host'][:14]:<14} {h['io_work_runs']:>12} {in_unit(h['io_work_wait_mean_ns'], hu):>9} "
                 f"{in_unit(h['io_work_wait_p99_ns'], hu):>8} {h['net_rx_runs']:>12} {in_unit(h['net_rx_wait_mean_ns'], hu):>9} "
                 f"{in_unit(h['net_rx_wait_p99_ns'], hu):>8} {in_unit(h['net_rx_wait_max_ns'], hu):>8}")
    if cw["io_work_queues"]:
        qk = ["wait_mean_ns", "wait_p50_ns", "wait_p99_ns", "wait_max_ns", "run_mean_ns"]
        qu = table_unit([r[k] for r in cw["io_work_queues"] for k in qk])
        L.append(f"  {'io_work of queue (' + qu[0] + ')':<28} {'cpu':>4} {'share':>6} {'runs':>6} {'wait avg':>9} {'p50':>8} {'p99':>8} {'max':>8} {'run avg':>8}")
        for r in cw["io_work_queues"]:
            L.append(f"  {r['queue_key'][:28]:<28} {r['cpu']:>4} {r['cpu_share']:>6.2f} {r['runs']:>6} "
                     f"{in_unit(r['wait_mean_ns'], qu):>9} {in_unit(r['wait_p50_ns'], qu):>8} {in_unit(r['wait_p99_ns'], qu):>8} "
                     f"{in_unit(r['wait_max_ns'], qu):>8} {in_unit(r['run_mean_ns'], qu):>8}")
    return L


def wrap(text, indent, width=100):
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + "  ",
                         break_on_hyphens=False) or [indent]


def printed_sets(doc):
    """The stage sets report.txt prints: those --stage-set named, else the primary one alone
    (one set's numbers, not the same cuts again under other names)."""
    if doc["spec"]["stage_sets"] or not doc["primary_stage_set"]:
        return doc["stage_sets"]
    return [doc["primary_stage_set"]]


def glossary(doc, shown):
    """What each printed stage is: the stage table's meaning column (sql/core/stage_definitions.sql)."""
    L = ["", "Stages (" + ", ".join(shown) + "; the stage table: sql/core/stage_definitions.sql)"]
    for d in doc["stage_definitions"]:
        if d["stage_set"] in shown:
            name = ("  " if d["parent"] else "") + d["stage"]
            head = f"  {name:<22} "
            lines = textwrap.wrap(d["meaning"], 100 - len(head), break_on_hyphens=False) or [""]
            L.append(head + lines[0])
            L += [" " * len(head) + x for x in lines[1:]]
    return L


def footer(doc, shown=None):
    """How to read the stage tables; where the run cannot measure every top-level stage, says so
    instead of claiming they sum to end_to_end."""
    gaps = {}
    for g in doc["groups"]:
        for u in g.get("unmeasured", []):
            if shown is None or u["stage_set"] in shown:
                gaps.setdefault(u["stage_set"], u)
    L = ["", "Times in the unit each table's header names (us: microseconds, ms: milliseconds); stdev: the",
         "standard deviation. Indented stages subdivide the stage above;"]
    if not gaps:
        return L + ["top-level stages sum to end_to_end per I/O, percentiles do not add up."]
    for ss, u in gaps.items():
        L += wrap(f"{ss}: top-level stages do NOT sum to end_to_end on this run ({u['label']}): "
                  f"{', '.join(u['stages'])} not measured; the row 'not measured' is end_to_end minus "
                  f"the measured top-level stages, per I/O.", "")
    return L + ["Percentiles do not add up."]


def target_not_traced(doc):
    """The run's primary set is initiator_only: say that its middle is estimated, and how much of it."""
    if doc["primary_stage_set"] != "initiator_only":
        return []
    split = [c for c in doc.get("stage_coverage", []) if c["stage_set"] == "initiator_only" and c["evidence"] == ["tcp_ack"]]
    n = f"{split[0]['measured']} of {split[0]['ios']} I/Os" if split else "no I/O"
    return wrap(f"TARGET NOT TRACED: est_round_trip and est_target_side are estimates, the time between command and "
                f"completion split where the target's TCP acknowledged the command (capture key nvme_acks); {n} split "
                "(the others: no ACK before the response, see sql/core/nvme_acks.sql). They tell the network from the "
                "target side, not the target's CPU from its device.", "") + [""]


def initiator_only_check(rows):
    """How far the initiator-only estimates are from the traced target's stages (view initiator_only_check)."""
    if not rows:
        return []
    L = ["", "initiator-only estimates against the traced target (how far a run without the target can be trusted)"]
    for r in rows:
        L.append(f"  {r['stage']:<16} {r['ios']} of {r['ios_total']} I/Os: within max(10%, 50 us) {100 * r['within_share']:.1f}%"
                 f"   |diff| p50 {r['median_abs_diff_ns'] / 1e3:.0f} us p90 {r['p90_abs_diff_ns'] / 1e3:.0f} us"
                 f"   mean {r['est_mean_ns'] / 1e3:.0f} us vs {r['measured_mean_ns'] / 1e3:.0f} us")
        L += wrap(f"held to {r['measured_as']} ({r['stage_set']})", "                   ")
    return L


def render(doc, run_dir):
    shown = printed_sets(doc)
    others = [ss for ss in doc["stage_sets"] if ss not in shown]
    L = [f"ntscope report: {run_dir}", f"mode: {doc['mode']}   stage sets: {', '.join(shown) or '-'}"
         + (f" (also in report.json: {', '.join(others)}; --stage-set all)" if others else ""), ""]
    # what makes the numbers wrong or partial first, then what the run could not measure
    for s in doc["pipeline_stats"]:
        if s["name"].startswith("input_error:"):
            L += [f"INPUT ERROR ({s['name'][len('input_error:'):]}): {s['meaning']}", ""]
        elif s["name"].startswith("data_loss:") and s["severity"] != "info":
            L += [f"DATA LOSS ({s['name'][len('data_loss:'):]}, {s['value']}): {s['meaning']}", ""]
    if any(m["source"] == "probe" for m in doc.get("milestones", [])):
        L += ["NVMe/TCP milestones from the capture's probes on "
              + ", ".join(m["host"] for m in doc["milestones"] if m["source"] == "probe")
              + " (host.json probes: where each probe sits)", ""]
    gaps = [c for c in doc.get("stage_coverage", []) if not c["measurable"] and c["stage_set"] in shown]
    if gaps:
        L.append("Stages not measurable on this run (left out, never measured between other points):")
        L += [f"  {c['stage_set']}:{c['stage']}: no {c['missing']}: {c['reason']}" for c in gaps]
        L.append("")
    if doc["sampling"]["sampled"]:
        L += [f"SAMPLED: {doc['sampling']['meaning']}", ""]
    L += target_not_traced(doc)
    L.append("pipeline_stats (below a warning or an error: what it means, whether to act)")
    for s in doc["pipeline_stats"]:
        v = s["value"]
        L.append(f"  {s['severity']:<8} {s['name'][:44]:<44} {str(v)[:40]}")
        if s["severity"] != "info":
            L += wrap(s["meaning"] or "", "           ")
    c = doc["clock"]
    L += ["", "clock"]
    if c["offset_ns"] is not None:
        L.append(f"  target - initiator = {c['offset_ns'] / 1e9:.6f} s  +- {c['uncertainty_ns'] / 1000:.1f} us"
                 f"   drift {c['drift_ppm']:.2f} ppm")
    else:
        L.append("  no offset: no matched command pairs" if not doc["clock_pairs"] else f"  {c['method']}")
    if len(doc["clock_pairs"]) > 1:
        for p in doc["clock_pairs"]:
            L.append(f"  {p['target_host']} - {p['initiator_host']} = {p['offset_ns'] / 1e9:.6f} s"
                     f"  +- {p['uncertainty_ns'] / 1000:.1f} us   drift {p['drift_ppm']:.2f} ppm")
        for h in doc["initiator_clocks"]:
            if h["host"] != h["reference_host"]:
                shift = "not placed (no shared target)" if h["shift_ns"] is None else \
                    f"+{h['shift_ns'] / 1e9:.6f} s via {h['via_target']} (+- {h['uncertainty_ns'] / 1000:.1f} us)"
                L.append(f"  {h['host']} times on {h['reference_host']}'s clock: {shift}")
    w = doc["window"]
    L.append(f"  window: {(w['dur_ns'] or 0) / 1e9:.3f} s of selected I/O")
    L += slo_text.objectives_text(doc["slo"])
    L += cpu_wait(doc["cpu_wait"])
    for g in doc["groups"]:
        count = f"{g['count']} traced / {g['est_count']} est." if doc["sampling"]["sampled"] else str(g["count"])
        L += ["", f"group: {g['key_text']}   count {count} (matched {g['matched']})   "
                  f"IOPS {g['iops']:.1f}   MB/s {g['mb_s']:.2f}"]
        for ss in shown:
            if any(s["stage_set"] == ss for s in g["stages"]):
                L += stage_table(g["stages"], ss, g.get("unmeasured", []))
        for ss in shown:
            L += histogram(g["histograms"], ss, "end_to_end")
            break
    L += initiator_only_check(doc.get("initiator_only_check", []))
    L += footer(doc, shown)
    L += glossary(doc, shown)
    return "\n".join(L) + "\n"
