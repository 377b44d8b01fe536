"""ntscope: where does each NVMe-over-TCP I/O spend its time?

The front door of the Python side: `python -m ntscope analyze|compare|interference|sql|convert`.
Subpackages: ntscope.sql (the DuckDB views, sql/), ntscope.report, ntscope.compare and
ntscope.interference (renderers, reports/). The trace.dat -> Parquet converter is the Rust
binary `ntscope-analyzer` (analyzer/), found or built by ntscope.converter."""
__version__ = "0.2.0"
