-- the verdict of the groups truth.json is about (case.json truth_groups) and the two largest others
SELECT group_key, stage_set, verdict, cause_id, bottleneck_stage, detail_stage, amplified_stage, direction, cause,
       round(e2e_lad, 2) AS e2e_lad, round(stage_change_ns / 1e3) AS stage_change_us, round(amplified_lad, 1) AS amplified_lad
FROM cmp_verdict WHERE group_key IN ('type=read, size=4096', 'type=read, size=65536', 'type=read, size=131072')
ORDER BY group_key;
