-- with both hosts traced: how far the initiator-only estimates are from the target's stages
SELECT stage, stage_set, measured_as, ios, ios_total, round(within_share, 3) AS within_share,
       round(median_abs_diff_ns / 1e3) AS median_abs_diff_us, round(p90_abs_diff_ns / 1e3) AS p90_abs_diff_us,
       round(est_mean_ns / 1e3) AS est_mean_us, round(measured_mean_ns / 1e3) AS measured_mean_us
FROM initiator_only_check ORDER BY stage;
