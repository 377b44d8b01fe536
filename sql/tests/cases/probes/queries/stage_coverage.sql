SELECT stage_set, stage, array_to_string(evidence, ',') AS evidence, ios, measured, measurable, missing, reason
FROM stage_coverage ORDER BY stage_set, seq
