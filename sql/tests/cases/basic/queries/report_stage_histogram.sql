SELECT * FROM report_stage_histogram WHERE stage IN ('end_to_end', 'target_exec') ORDER BY group_key, seq, bucket
