SELECT stage_set, stage, parent, dur, missing FROM io_stages ORDER BY stage_set, seq
