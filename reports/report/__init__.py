"""ntscope reports: render the DuckDB report views of one run as text, JSON, HTML and a
Perfetto timeline. Metrics come from sql/ views only; this package renders."""
