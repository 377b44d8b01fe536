SELECT stage, parent, dur, missing FROM io_stages ORDER BY seq
