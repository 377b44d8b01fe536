SELECT * FROM report_stage_stats ORDER BY group_key, seq
