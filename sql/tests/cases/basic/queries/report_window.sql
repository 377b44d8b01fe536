SELECT * FROM report_window
