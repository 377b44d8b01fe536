SELECT * FROM io_milestones ORDER BY io_id, ts, milestone
