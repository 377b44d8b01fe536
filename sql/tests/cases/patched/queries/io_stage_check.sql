SELECT * FROM io_stage_check ORDER BY stage_set
