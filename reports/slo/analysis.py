"""The objectives' declaration (reports/registry.py): analyze --slo, shown in the report's files."""
from ntscope.reports.registry import Analysis

ANALYSIS = Analysis(
    name="slo", order=30,
    summary="service-level objectives (--slo): met or missed, per second, and the worst I/Os")
