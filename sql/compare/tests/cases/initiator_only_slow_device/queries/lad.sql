-- LAD of mean/p50/p99 per initiator_only stage (the target not traced), rounded: us and 2 decimals
SELECT group_key, stage, statistic, n_base, n_run, round(base_ns / 1e3) AS base_us, round(run_ns / 1e3) AS run_us,
       round(lad, 2) AS lad, round(lad_lo, 2) AS lad_lo, round(lad_hi, 2) AS lad_hi,
       round(change_lo_ns / 1e3) AS change_lo_us, round(change_hi_ns / 1e3) AS change_hi_us, significant
FROM cmp_lad WHERE stage_set = 'initiator_only' ORDER BY group_key, seq, statistic;
