"""Recovery's declaration (reports/registry.py): a part of analyze, no command of its own."""
from ntscope.reports.registry import Analysis

ANALYSIS = Analysis(
    name="recovery", order=33, in_analyze="analyze_part", schema=True,
    summary="errors and recovery: controller outages (timeouts, resets, reconnects), failed and retried commands, the I/O they held",
    writes=("recovery.txt", "recovery.json", "outages.parquet", "path_events.parquet"))
