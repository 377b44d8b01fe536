"""The timeline's declaration (reports/registry.py): a part of analyze, no command of its own."""
from ntscope.reports.registry import Analysis

ANALYSIS = Analysis(
    name="timeline", order=20, in_analyze="analyze_part",
    summary="every I/O, queue, device and CPU on a time axis: timeline.perfetto-trace (Perfetto)",
    writes=("timeline.perfetto-trace",))
