SELECT n, part, stage, depth, track_uuid, parent_uuid, ts, dur, stage_dur_ns, flow_out, flow_in FROM timeline_slices ORDER BY n, part, begin_pos
