SELECT * FROM io_stage_check ORDER BY io_id
