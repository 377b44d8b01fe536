SELECT * FROM report_groups ORDER BY group_key
