SELECT * FROM report_stage_cdf WHERE stage = 'end_to_end' AND pct IN (1, 50, 51, 100) ORDER BY group_key, pct
