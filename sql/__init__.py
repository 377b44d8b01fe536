"""ntscope.sql: the DuckDB views (every metric lives in these SQL files) and their loader.
views.connect(run_dir) returns a connection with every view of one run."""
