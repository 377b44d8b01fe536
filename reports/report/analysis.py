"""The report's declaration (reports/registry.py)."""
from ntscope.reports.registry import Analysis

ANALYSIS = Analysis(
    name="report", order=10, command="analyze", schema=True,
    summary="where each I/O's time went: report.{txt,json,html}",
    writes=("report.txt", "report.json", "report.html", "io.parquet", "io_stages.parquet"))
