SELECT * FROM timeline_io_rows ORDER BY start_ts, n
