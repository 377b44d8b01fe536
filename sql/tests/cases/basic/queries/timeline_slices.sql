SELECT * FROM timeline_slices ORDER BY io_id, ts, stage
