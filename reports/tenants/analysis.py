"""Tenants' declaration (reports/registry.py): a part of analyze, no command of its own."""
from ntscope.reports.registry import Analysis

ANALYSIS = Analysis(
    name="tenants", order=35, in_analyze="analyze_part", schema=True,
    summary="who each I/O was for (cgroups, tenants, classes, files): per-second metrics and class objectives",
    writes=("tenants.txt", "tenants.json", "tenant_seconds.parquet", "file_seconds.parquet",
            "class_seconds.parquet"))
