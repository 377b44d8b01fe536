"""ntscope.reports.report: render the DuckDB report views of one run as text, JSON, HTML and
per-I/O Parquet, with the selection (filters and grouping) they share. Metrics come from sql/
views only; this package renders."""
