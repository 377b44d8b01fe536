SELECT slot, part_no, parent_slot, depth, sib, begin_pos, end_pos, flow, name_iid, stage, part FROM timeline_slots ORDER BY slot
