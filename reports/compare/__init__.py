"""ntscope compare and interference reports: load runs, run sql/compare/*.sql, render."""
