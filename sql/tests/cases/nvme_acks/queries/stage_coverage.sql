SELECT stage_set, stage, evidence, ios, measured, measurable, missing, reason FROM stage_coverage ORDER BY stage_set, seq;
