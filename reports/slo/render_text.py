"""The --slo section of report.txt (report/render_text.py places it): each objective met or
missed, the seconds it missed, and the worst I/Os to open in the timeline. Formats only: the
numbers are the slo views' (sql/slo/slo.sql), as report.json's slo holds them."""
from ntscope.reports.plots.units import us_text


def objectives_text(slo):
    """The --slo section: met or missed, per second, and the worst I/Os to open in the timeline."""
    if not slo["objectives"]:
        return []
    L = ["", "objectives (--slo)"]
    for o in slo["objectives"]:
        if not o["ios"]:
            L.append(f"  NO DATA  {o['text']}: no selected I/O matches it")
            continue
        state = "MET    " if o["met"] else "MISSED "
        L.append(f"  {state} {o['text']}: {o['statistic']} {o['stage']} = {us_text(o['value_ns'])} us "
                 f"(limit {us_text(o['limit_ns'])} us, {o['ios']} I/Os); missed in {o['seconds_missed']} of "
                 f"{o['seconds']} s, worst second {o['worst_second']}: {us_text(o['worst_value_ns'])} us")
        worst = [w for w in slo["worst_ios"] if w["slo_id"] == o["slo_id"]][:5]
        for w in worst:
            parts = "  ".join(f"{s['stage']}={us_text(s['dur_ns'])}" for s in (w["stages"] or []))
            L.append(f"      #{w['rank']} io {w['io_id']} at {w['at_s']:.3f} s {w['queue_key']} cpu {w['cpu']} "
                     f"{w['comm']}: {o['stage']} {us_text(w['dur_ns'])} us; its top-level stages (us): {parts}")
    return L
