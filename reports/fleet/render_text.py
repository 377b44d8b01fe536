"""fleet.txt: fleet.json as text (per subject and period: I/Os, p50, p99 of each stage of the
leading stage set; the worst runs; the regressions). Formats; computes nothing."""


def us(ns):
    return "-" if ns is None else f"{ns / 1e3:,.0f}"


def render(doc):
    p = doc["params"]
    window = f"{p['since_utc'] or 'the first run'} .. {p['until_utc'] or 'the last'}"
    out = [f"ntscope fleet report: {doc['warehouse']}",
           f"{doc['runs']['runs']} runs ({doc['runs']['first_utc']} .. {doc['runs']['last_utc']}); window {window}; "
           f"per {p['subject']} and {p['period']}; percentiles from the merged histograms "
           f"(within {100 * doc['hist_alpha']:.0f}% of the exact ones)", ""]
    sset = doc["stage_set"]
    rows = [r for r in doc["periods"] if r["stage_set"] == sset]
    if not rows:
        out.append("no I/O in the window")
        return "\n".join(out) + "\n"
    out.append(f"stages ({sset}, us)")
    out.append(f"  {p['subject']:<20} {'period':<20} {'stage':<24} {'I/Os':>10} {'p50':>10} {'p99':>10}")
    for r in rows:
        out.append(f"  {r['subject_value']:<20} {str(r['period_start']):<20} {r['stage']:<24} {r['ios']:>10,} "
                   f"{us(r['p50_ns']):>10} {us(r['p99_ns']):>10}")
    worst = [r for r in doc["worst_runs"] if r["stage_set"] == sset]
    if worst:
        out += ["", f"worst runs by end_to_end p99 (per {p['subject']})"]
        for r in worst:
            out.append(f"  {r['subject_value']:<20} {r['rank']}. {r['run_id']}: p99 {us(r['p99_ns'])} us over "
                       f"{r['ios']:,} I/Os, {r['findings']} finding(s){': ' + r['worst_finding'] if r['worst_finding'] else ''}")
    if p["baseline_since_utc"] or p["baseline_until_utc"]:
        out += ["", f"regressions: the window against the baseline {p['baseline_since_utc'] or '..'} .. "
                    f"{p['baseline_until_utc'] or '..'} (a change counts at >= {100 * p['min_rel_change']:.0f}% and "
                    f">= {p['min_abs_change_ns'] / 1e3:.0f} us)"]
        changed = [r for r in doc["regressions"] if r["stage_set"] == sset and
                   (r["p50_change"] != "no change" or r["p99_change"] != "no change")]
        for r in changed:
            out.append(f"  {r['subject_value']:<20} {r['stage']:<24} p50 {us(r['base_p50_ns'])} -> {us(r['run_p50_ns'])} us "
                       f"({r['p50_change']}), p99 {us(r['base_p99_ns'])} -> {us(r['run_p99_ns'])} us ({r['p99_change']})")
        if not changed:
            out.append("  no stage's p50 or p99 changed by that much")
    return "\n".join(out) + "\n"
