"""sweep.txt: per group, the stage means per run and their LAD against the first run."""
from ntscope.reports.plots.units import us_text


def render(doc):
    runs = doc["runs"]
    L = ["ntscope sweep", f"  stage set {doc['stage_set']}; ordered by {doc['param'] or 'the order given'}; "
         "LAD = mean at this point / mean at the first point"]
    width = max(len(r["label"]) for r in runs)
    for r in runs:
        L.append(f"  {r['label']:>{width}}  {r['run_dir']}")
    groups = list(dict.fromkeys(p["group_key"] for p in doc["points"]))
    for g in groups:
        pts = [p for p in doc["points"] if p["group_key"] == g]
        cols = [r["run_idx"] for r in runs if any(p["run_idx"] == r["run_idx"] for p in pts)]
        w = column_width(runs)
        head = "".join(f"{runs[c]['label']:>{w}}" for c in cols)
        L += ["", f"== group {g}", "  rate (IOPS)         " + "".join(
            f"{next((p['iops'] for p in pts if p['run_idx'] == c and p['stage'] == 'end_to_end'), 0):>{w}.1f}" for c in cols)]
        for title, key, fmt in (("mean us", "mean_ns", us_text), ("LAD of the mean", "lad_mean", lad_text)):
            L.append(f"  {title:<20}" + head)
            seen = []
            for p in pts:
                if p["stage"] in seen:
                    continue
                seen.append(p["stage"])
                row = {q["run_idx"]: q for q in pts if q["stage"] == p["stage"]}
                name = ("  " if p["parent"] else "") + p["stage"]
                L.append(f"  {name[:20]:<20}" + "".join(f"{fmt(row[c][key]) if c in row else '-':>{w}}" for c in cols))
        amp = [a for a in doc["most_amplified"] if a["group_key"] == g]
        if amp:
            a = amp[0]
            L.append(f"  most amplified: {a['stage']} LAD {a['lad_mean']:.2f} ({us_text(a['first_mean_ns'])} -> "
                     f"{us_text(a['last_mean_ns'])} us)")
    L += ["", "Means in microseconds. Stage means add up to end_to_end; LAD > 1: the stage grew with the load."]
    return "\n".join(L) + "\n"


def column_width(runs):
    """A column per run, as wide as the longest label (whole: never cut) plus a space, at least 13."""
    return max(13, max(len(r["label"]) for r in runs) + 1)


def lad_text(v):
    return "-" if v is None else f"{v:.2f}"
