SELECT * FROM stage_sums
