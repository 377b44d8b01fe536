SELECT milestone, ts FROM io_milestones ORDER BY ts, milestone
