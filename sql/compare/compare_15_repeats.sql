-- Compare layer, repeats: when a side is several runs of one condition (`just compare
-- base1,base2,base3 run1,run2,run3`), the change of a mean must also stand out against
-- how much the runs themselves differ. The bootstrap (compare_20_bootstrap.sql) pools the I/Os
-- of a side and knows only the spread between I/Os; run-to-run variation (the lab's base
-- network time moves 2-4 ms between runs) is the spread between the runs' own means.

-- cmp_rep_stats: one row per (side, run, group, stage set, stage): that run's own mean.
--   run ('base' / 'run'), rep, group_key, stage_set, stage, n, mean_ns
CREATE OR REPLACE VIEW cmp_rep_stats AS
SELECT run, rep, group_key, stage_set, stage, count(*) AS n, avg(dur) AS mean_ns
FROM cmp_io_stage GROUP BY ALL;

-- cmp_t975: two-sided 95% quantile of Student's t by whole degrees of freedom (1..30;
-- above 30 the normal 1.96 is within 4%).  df, t
CREATE OR REPLACE TABLE cmp_t975 AS
SELECT * FROM (VALUES (1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (5, 2.571), (6, 2.447),
    (7, 2.365), (8, 2.306), (9, 2.262), (10, 2.228), (11, 2.201), (12, 2.179), (13, 2.160),
    (14, 2.145), (15, 2.131), (16, 2.120), (17, 2.110), (18, 2.101), (19, 2.093), (20, 2.086),
    (21, 2.080), (22, 2.074), (23, 2.069), (24, 2.064), (25, 2.060), (26, 2.056), (27, 2.052),
    (28, 2.048), (29, 2.045), (30, 2.042)) AS t(df, t);

-- cmp_between_runs: one row per (group, stage set, stage) in both sides: the change of
-- the mean against run-to-run variation. Each run is one observation of its condition
-- (its I/Os are not independent draws of it): Welch's t interval on the runs' means.
--   group_key, stage_set, stage
--   reps_base, reps_run       runs per side
--   sd_base_ns, sd_run_ns     standard deviation of the runs' means (NULL with one run)
--   change_ns                 mean of the run side's run means - the base side's (ns)
--   df                        Welch-Satterthwaite degrees of freedom (rounded down)
--   change_lo_ns, change_hi_ns   95% t interval of the change (NULL unless each side has
--                             >= 2 runs: one run per side says nothing of run-to-run noise)
--   significant               the interval excludes 0 (NULL when it is NULL)
CREATE OR REPLACE VIEW cmp_between_runs AS
WITH s AS (
    SELECT group_key, stage_set, stage, run, count(*) AS reps, avg(mean_ns) AS m,
           stddev_samp(mean_ns) AS sd
    FROM cmp_rep_stats GROUP BY ALL
), p AS (
    SELECT b.group_key, b.stage_set, b.stage, b.reps AS reps_base, r.reps AS reps_run,
           b.sd AS sd_base_ns, r.sd AS sd_run_ns, r.m - b.m AS change_ns,
           CASE WHEN b.reps >= 2 AND r.reps >= 2 THEN b.sd * b.sd / b.reps + r.sd * r.sd / r.reps END AS se2,
           CASE WHEN b.reps >= 2 AND r.reps >= 2 THEN
                (b.sd * b.sd / b.reps + r.sd * r.sd / r.reps) ^ 2
                / nullif((b.sd * b.sd / b.reps) ^ 2 / (b.reps - 1) + (r.sd * r.sd / r.reps) ^ 2 / (r.reps - 1), 0) END AS df_exact
    FROM s b JOIN s r ON b.run = 'base' AND r.run = 'run' AND b.group_key = r.group_key
     AND b.stage_set = r.stage_set AND b.stage = r.stage
)
SELECT p.group_key, p.stage_set, p.stage, p.reps_base, p.reps_run, p.sd_base_ns, p.sd_run_ns, p.change_ns,
       greatest(floor(coalesce(p.df_exact, 1e9)), 1)::INTEGER AS df,
       p.change_ns - coalesce(t.t, 1.96) * sqrt(p.se2) AS change_lo_ns,
       p.change_ns + coalesce(t.t, 1.96) * sqrt(p.se2) AS change_hi_ns,
       CASE WHEN p.se2 IS NOT NULL THEN p.change_ns - coalesce(t.t, 1.96) * sqrt(p.se2) > 0
                                     OR p.change_ns + coalesce(t.t, 1.96) * sqrt(p.se2) < 0 END AS significant
FROM p LEFT JOIN cmp_t975 t ON t.df = greatest(floor(coalesce(p.df_exact, 1e9)), 1);
