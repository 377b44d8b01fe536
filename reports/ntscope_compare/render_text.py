"""Terminal text for the compare and interference models (formatting only)."""
import textwrap

SPARK = " ▁▂▃▄▅▆▇█"


def us(ns, signed=False):
    if ns is None:
        return "-"
    return f"{ns / 1e3:+.0f}" if signed else f"{ns / 1e3:.0f}"


def lad(v, lo, hi):
    if v is None:
        return "-"
    return f"{v:.2f} [{lo:.2f}-{hi:.2f}]" if lo is not None else f"{v:.2f}"


def spark(values):
    vals = [v or 0 for v in values]
    top = max(vals) if vals else 0
    if top <= 0:
        return SPARK[0] * len(vals)
    return "".join(SPARK[min(8, int(round(8 * v / top)))] for v in vals)


def timeseries_lines(ts):
    out = []
    by = {}
    for r in ts:
        by.setdefault((r["resource_kind"], r["resource"]), []).append(r)
    for (kind, res), rs in sorted(by.items()):
        rs.sort(key=lambda r: r["bin"])
        infl = [r["inflight_avg"] for r in rs]
        mbs = [r["mb_s"] for r in rs]
        wait = [r["wait_mean_ns"] or 0 for r in rs]
        out.append(f"  {kind:6} {res:28} in-flight avg {sum(infl) / len(infl):5.1f} max {max(infl):5.1f}   "
                   f"MB/s avg {sum(mbs) / len(mbs):7.2f} max {max(mbs):7.2f}")
        out.append(f"         in-flight |{spark(infl[::2])}|")
        out.append(f"         MB/s      |{spark(mbs[::2])}|")
        out.append(f"         wait      |{spark(wait[::2])}|")
    return out


def interference_text(m):
    out = [f"== interference: {m['run_dir']}", "streams (process/pid type size):"]
    out.append(f"  {'stream':28} {'ios':>6} {'MB/s':>8} {'cpus':>6}  {'queues':24} {'mean wait us':>12}")
    for s in m["streams"]:
        out.append(f"  {s['stream_id']:28} {s['ios']:>6} {s['mb_s']:8.2f} {s['cpus'] or '-':>6}  "
                   f"{s['queues'] or '-':24} {us(s['mean_wait_ns']):>12}")
    out.append("who waited behind whom (other streams' commands in flight ahead at submit):")
    if not m["sharing"]:
        out.append("  nobody: no stream had another stream's command ahead of it")
    for r in m["sharing"]:
        out.append(f"  {r['stream_id']:28} {r['resource']:6} behind {r['other_stream_id']:28} "
                   f"{'same CPU ' if r['same_cpu'] else 'other CPU'} {100 * r['ios_waited_frac']:5.1f}% of its I/Os, "
                   f"{r['ahead_bytes_mean'] / 1024:8.1f} KiB ahead on average; wait {us(r['wait_ns_with'])} us with, "
                   f"{us(r['wait_ns_without'])} us without")
    out.append("verdict per stream:")
    for r in m["stream_verdicts"]:
        out.append(f"  {r['stream_id']:28} {r['verdict']}")
    bd = [r for r in m["breakdown"] if r["stage_set"] == "stock" and r["parent"] is None] or \
         [r for r in m["breakdown"] if r["parent"] is None]
    out.append("per-stream breakdown (mean us, top-level stages):")
    by = {}
    for r in bd:
        by.setdefault(r["stream_id"], []).append(r)
    for sid, rs in by.items():
        out.append(f"  {sid:28} " + "  ".join(f"{r['stage']}={us(r['mean_ns'])}" for r in sorted(rs, key=lambda r: r["seq"])))
    out.append("queue depth and throughput over time (100 bins; sparklines show every other bin):")
    out += timeseries_lines(m["timeseries"])
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


def compare_text(m):
    p = m["params"]
    out = [f"ntscope compare", f"  base: {m['base']['run_dir']}  (clock {m['base']['trace_clocks']})",
           f"  run:  {m['run']['run_dir']}  (clock {m['run']['trace_clocks']})",
           f"  stage set {m['stage_set']}; LAD = T_run / T_base; 95% bootstrap CIs, {p['resamples']} resamples, "
           f"seed {p['seed']}; a change counts when its CI excludes 0 and it is >= {100 * p['min_rel_change']:.0f}% "
           f"and >= {p['min_abs_change_ns'] / 1e3:.0f} us", ""]
    for v in m["verdicts"]:
        out.append(f"== group {v['group_key']}")
        out.append(f"VERDICT: {v['verdict'].upper()}: end_to_end mean {us(v['e2e_base_ns'])} -> {us(v['e2e_run_ns'])} us, "
                   f"LAD {lad(v['e2e_lad'], v['e2e_lad_lo'], v['e2e_lad_hi'])}")
        if v["bottleneck_stage"]:
            out.append(f"  bottleneck: {v['bottleneck_stage']}" + (f" (mostly {v['detail_stage']})" if v["detail_stage"] else "")
                       + (f", network direction {v['network_direction']}" if v["network_direction"] else ""))
        out.append(f"  cause:      {v['cause']}")
        out.append(f"  evidence:   {v['evidence']}")
        out.append("")
        rows = [r for r in m["lad"] if r["group_key"] == v["group_key"] and r["stage_set"] == m["stage_set"]]
        by = {}
        for r in rows:
            by.setdefault((r["seq"], r["stage"], r["parent"]), {})[r["statistic"]] = r
        out.append(f"  {'stage':22} {'base us':>8} {'run us':>8} {'change us [95% CI]':>24}  {'LAD mean [CI]':>20} "
                   f"{'LAD p50 [CI]':>20} {'LAD p99 [CI]':>20}")
        for (seq, stage, parent), st in sorted(by.items()):
            mn, p50, p99 = st.get("mean"), st.get("p50"), st.get("p99")
            name = ("  " if parent else "") + stage
            ch = f"{us(mn['change_ns'], True)} [{us(mn['change_lo_ns'], True)}..{us(mn['change_hi_ns'], True)}]"
            mark = " *" if mn["significant"] else ""
            out.append(f"  {name:22} {us(mn['base_ns']):>8} {us(mn['run_ns']):>8} {ch:>24}  "
                       f"{lad(mn['lad'], mn['lad_lo'], mn['lad_hi']):>20} "
                       f"{lad(p50['lad'], p50['lad_lo'], p50['lad_hi']) if p50 else '-':>20} "
                       f"{lad(p99['lad'], p99['lad_lo'], p99['lad_hi']) if p99 else '-':>20}{mark}")
        out.append("  (* significant change of the mean; stage means add up to end_to_end, percentiles do not)")
        out.append("")
    only = sorted({r["group_key"] for r in m["queue_evidence"]} - {v["group_key"] for v in m["verdicts"]})
    if only:
        out.append("groups in one run only (no LAD): " + "; ".join(only))
    out.append("transport queue crowding (mean commands ahead on the same queue at submit):")
    for r in m["queue_evidence"]:
        out.append(f"  {r['run']:4} {r['group_key']:24} ahead {r['ahead_cmds_mean']:5.2f}  from other CPUs "
                   f"{r['other_cpu_cmds_mean']:5.2f}  other streams' bytes {r['other_stream_bytes_mean'] / 1024:8.1f} KiB  "
                   f"queues {r['queues']} cpus {r['cpus']}")
    out.append("")
    out.append(interference_text(m["interference"]))
    return "\n".join(out)
