SELECT * FROM report_timeseries WHERE completions > 0 OR bin = 0 ORDER BY queue, bin
