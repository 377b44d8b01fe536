-- the verdict per group
SELECT group_key, stage_set, verdict, cause_id, bottleneck_stage, detail_stage, direction, network_direction, cause,
       round(e2e_lad, 2) AS e2e_lad, round(stage_change_ns / 1e3) AS stage_change_us, round(share, 2) AS share
FROM cmp_verdict ORDER BY group_key;
