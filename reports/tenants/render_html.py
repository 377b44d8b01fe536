"""report.html's tenants section: each tenant's I/O rate and p99 latency per second, and the
class table. Renders tenants.json and the per-second rows (tenant_seconds); computes nothing."""
from ntscope.reports.plots import charts
from ntscope.reports.plots.page import esc

from .render_text import tenants_text


def tenants_section(page, doc, seconds):
    page.heading(2, "Tenants per second (tenant_seconds.parquet)")
    if not seconds:
        page.nodata("tenants", "no I/O completed, so no tenant second")
    else:
        page.how("One line per tenant: the I/Os it completed in each second and the 99th percentile of their "
                 "latency (end_to_end). A latency tenant whose p99 rises in the seconds another tenant's rate "
                 "rises shares something with it: the class table below names what.")
        order = list(dict.fromkeys(r["tenant"] for r in seconds))
        page.chart("tenants-iops", "tenants", charts.series(seconds, "tenant", "tenant", "iops", "I/Os per second",
                                                            "I/O rate per tenant", order))
        page.chart("tenants-p99", "tenants", charts.series(seconds, "tenant", "tenant", "p99_us", "p99 latency (us)",
                                                           "p99 latency per tenant", order, symlog=True))
    page.heading(2, "Classes")
    rows = [[c["class"], o["text"], str(o["seconds"]), str(o["seconds_missed"]),
             "-" if o["worst_second"] is None else str(o["worst_second"]),
             "-" if o["worst_value"] is None else f"{o['worst_value']:,.1f}"]
            for c in doc["classes"] for o in c["objectives"]]
    if rows:
        page.table(["class", "objective", "seconds", "missed", "worst second", "worst value"], rows, text_cols=(1,))
    else:
        page.nodata("classes", "no tenants file with classes (--tenants FILE)")
    page.add(f"<details><summary><b>tenants.txt</b></summary><pre>{esc(tenants_text(doc))}</pre></details>")
