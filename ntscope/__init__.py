"""ntscope: where does each NVMe-over-TCP I/O spend its time?

The front door of the Python side: `python -m ntscope analyze|compare|interference|sql|convert`
(ntscope/*.py). Subpackages: ntscope.common (below everything: errors, inputs, run layout,
outputs), ntscope.sql (the DuckDB views, sql/), ntscope.reports (the renderers, reports/; one
subpackage per analysis). The trace.dat -> Parquet converter is the Rust binary
`ntscope-analyzer` (analyzer/), found or built by ntscope.common.converter. This module
imports nothing: every layer may read the version."""
__version__ = "0.2.0"
