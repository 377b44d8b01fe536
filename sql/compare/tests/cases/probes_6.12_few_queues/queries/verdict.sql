-- the verdict per group, with the most amplified stage (the paper's LAD localization)
SELECT group_key, stage_set, verdict, cause_id, bottleneck_stage, detail_stage, direction, network_direction, cause,
       round(e2e_lad, 2) AS e2e_lad, round(stage_change_ns / 1e3) AS stage_change_us, round(share, 2) AS share,
       amplified_stage, round(amplified_lad, 1) AS amplified_lad
FROM cmp_verdict ORDER BY group_key;
