SELECT * FROM primary_stage_set
