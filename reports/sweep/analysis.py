"""The sweep's declaration (reports/registry.py)."""
from ntscope.reports.registry import Analysis

ANALYSIS = Analysis(
    name="sweep", order=60, command="sweep", schema=True,
    summary="a run series: stage means and LAD per run (the paper's Figures 6 and 7)",
    writes=("sweep.txt", "sweep.json", "sweep.html"))
