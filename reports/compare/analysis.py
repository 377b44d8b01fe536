"""Compare's declaration (reports/registry.py): its own command; analyze keeps its input."""
from ntscope.reports.registry import Analysis

ANALYSIS = Analysis(
    name="compare", order=50, command="compare", in_analyze="analyze_part", schema=True,
    summary="latency amplification per stage, RUN vs BASE, with a verdict",
    writes=("compare.txt", "compare.json", "compare.html"))
