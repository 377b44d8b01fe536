"""ntscope: where does each NVMe-over-TCP I/O spend its time?

The front door of the Python side: `python -m ntscope analyze|compare|interference|sql|convert`.
Subpackages: ntscope.sql (the DuckDB views, sql/), ntscope.reports.report, ntscope.reports.compare and
ntscope.reports.interference (renderers, reports/). The trace.dat -> Parquet converter is the Rust
binary `ntscope-analyzer` (analyzer/), found or built by ntscope.common.converter."""
__version__ = "0.2.0"
