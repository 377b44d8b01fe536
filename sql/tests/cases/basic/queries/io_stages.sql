SELECT io_id, stage, parent, dur, missing FROM io_stages ORDER BY io_id, seq
