"""Terminal text for the compare model (formatting only)."""
from ntscope.reports.interference import section as interference


def us(ns, signed=False):
    if ns is None:
        return "-"
    return f"{ns / 1e3:+.0f}" if signed else f"{ns / 1e3:.0f}"


def lad(v, lo, hi):
    if v is None:
        return "-"
    return f"{v:.2f} [{lo:.2f}-{hi:.2f}]" if lo is not None else f"{v:.2f}"


def level(params):
    """The intervals' confidence level as the report writes it: 95%, 99.9% (cmp_ci_level's form)."""
    return f"{100 * params['confidence']:g}%"


def compare_text(m):
    p = m["params"]
    out = ["ntscope compare"]
    for side, label in (("base", "base:"), ("run", "run: ")):
        for r in m.get(f"{side}_runs") or [m[side]]:
            out.append(f"  {label} {r['run_dir']}  (clock {r['trace_clocks']})")
    reps = (len(m.get("base_runs") or [1]), len(m.get("run_runs") or [1]))
    if reps != (1, 1):
        out.append(f"  repeats: {reps[0]} base runs, {reps[1]} runs; a change of a mean counts only when it also "
                   f"clears run-to-run variation (Welch t interval on the runs' means)")
    out += [
           f"  stage set {m['stage_set']}; LAD = T_run / T_base; {level(p)} bootstrap CIs, {p['resamples']} resamples, "
           f"seed {p['seed']}; a change counts when its CI excludes 0 and it is >= {100 * p['min_rel_change']:g}% "
           f"and >= {p['min_abs_change_ns'] / 1e3:g} us"]
    if p.get("group_by", ["type", "size"]) != ["type", "size"]:
        out.append(f"  groups: by {', '.join(p['group_by'])} (--group-by), a verdict each")
    out.append("")
    for d in m.get("workload_differences") or []:
        out.append(f"WORKLOAD DIFFERS: {d['aspect']}: base {d['base']}; run {d['run']} ({100 * d['moved']:.0f}% of the I/Os "
                   "changed kind): the verdicts below compare different work, the change may be the workload's")
    if m.get("workload_differences"):
        out.append("")
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
        out.append(f"  {'stage':22} {'base us':>8} {'run us':>8} {f'change us [{level(p)} CI]':>24}  {'LAD mean [CI]':>20} "
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
    out.append(interference.text(m["interference"]))
    return "\n".join(out)
