SELECT * FROM io_export_milestones ORDER BY mean_offset_ns, milestone
