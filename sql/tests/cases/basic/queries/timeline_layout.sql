SELECT stage, part, parent_slice, depth, sib, begin_pos, end_pos, flow FROM timeline_layout ORDER BY part, begin_pos
