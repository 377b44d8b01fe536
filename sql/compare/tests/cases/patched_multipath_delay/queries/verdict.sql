-- the verdict per group, and the path it names
SELECT group_key, stage_set, verdict, cause_id, degraded_path, bottleneck_stage, detail_stage, cause,
       round(e2e_lad, 2) AS e2e_lad, round(stage_change_ns / 1e3) AS stage_change_us
FROM cmp_verdict ORDER BY group_key;
