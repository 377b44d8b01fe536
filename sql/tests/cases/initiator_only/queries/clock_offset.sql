SELECT count(*) AS rows FROM clock_offset
