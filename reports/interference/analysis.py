"""Interference's declaration (reports/registry.py): its own command and a part of analyze."""
from ntscope.reports.registry import Analysis

ANALYSIS = Analysis(
    name="interference", order=40, command="interference", in_analyze="analyze_part", schema=True,
    summary="streams of a run and who waited behind whom",
    writes=("interference.txt", "interference.json", "interference.html"))
