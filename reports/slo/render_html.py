"""The --slo section of report.html (report/render_html.py places it): a table of the
objectives, each met or missed. Formats only: the numbers are report.json's slo."""
from ntscope.reports.plots.units import us_text


def objectives_section(page, slo):
    """--slo's objectives, each met or missed (report.json slo: sql/slo/slo.sql computes them)."""
    rows = slo.get("objectives") or []
    if not rows:
        return
    page.heading(2, "Objectives (--slo)")
    page.table(["objective", "", "value (us)", "limit (us)", "I/Os", "seconds missed"],
               [[o["text"], "MET" if o["met"] else "MISSED", us_text(o["value_ns"]), us_text(o["limit_ns"]), str(o["ios"]),
                 f"{o['seconds_missed']} of {o['seconds']}"] for o in rows],
               ["ok" if o["met"] else "error" for o in rows], text_cols=(0,))
