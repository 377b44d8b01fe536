-- requires: compare/params, compare/input

-- Compare layer, repeats: when a side is several runs of one condition (`just compare
-- base1,base2,base3 run1,run2,run3`), the change of a mean must also stand out against
-- how much the runs themselves differ. The bootstrap (compare/bootstrap.sql) pools the I/Os
-- of a side and knows only the spread between I/Os; run-to-run variation (the lab's base
-- network time moves 2-4 ms between runs) is the spread between the runs' own means.

-- cmp_rep_stats: one row per (side, run, group, stage set, stage): that run's own mean.
--   run ('base' / 'run'), rep, group_key, stage_set, stage, n, mean_ns
CREATE OR REPLACE VIEW cmp_rep_stats AS
SELECT run, rep, group_key, stage_set, stage, count(*) AS n, avg(dur) AS mean_ns
FROM cmp_io_stage GROUP BY ALL;

-- cmp_t_coverage(t, nu): P(|T| <= t) for Student's t with nu (whole) degrees of freedom, the
-- closed form for integer nu (Abramowitz & Stegun 26.7.3-4): with theta = atan(t / sqrt(nu)),
-- odd nu: 2/pi (theta + sin cos (1 + sum_k prod_j 2j/(2j+1) cos^2k)), even nu: sin (1 + sum_k
-- prod_j (2j-1)/(2j) cos^2k); the products written with lgamma.
CREATE OR REPLACE MACRO cmp_t_coverage(t, nu) AS (
    CASE WHEN nu % 2 = 1 THEN
        2 / pi() * (atan(t / sqrt(nu)) + sin(atan(t / sqrt(nu))) * cos(atan(t / sqrt(nu)))
            * CASE WHEN nu = 1 THEN 0 ELSE 1 + coalesce(list_sum(list_transform(range(1, (nu - 1) // 2),
                  lambda k: exp(2 * (k * ln(2) + lgamma(k + 1)) - lgamma(2 * k + 2)) * cos(atan(t / sqrt(nu))) ^ (2 * k))), 0) END)
    ELSE
        sin(atan(t / sqrt(nu))) * (1 + coalesce(list_sum(list_transform(range(1, nu // 2),
            lambda k: exp(lgamma(2 * k + 1) - 2 * (k * ln(2) + lgamma(k + 1))) * cos(atan(t / sqrt(nu))) ^ (2 * k))), 0))
    END);

-- cmp_t_quantile: one row per whole degrees of freedom 1..200: the two-sided quantile t of
-- Student's t at cmp_params.confidence (P(|T| <= t) = confidence; at 0.95: 12.706 at 1, 2.042
-- at 30, the printed tables' values), by bisection on log t (60 halvings of 0.01..1e6).
-- Above 200 degrees of freedom the quantile at 200 (within 1.5% of the normal's at 0.999).
--   df, t
CREATE OR REPLACE TABLE cmp_t_quantile AS
WITH RECURSIVE b(df, lo, hi, i) AS (
    SELECT df, ln(0.01), ln(1e6), 0 FROM range(1, 201) r(df)
    UNION ALL
    SELECT df, CASE WHEN cmp_t_coverage(exp((lo + hi) / 2), df) < c.confidence THEN (lo + hi) / 2 ELSE lo END,
               CASE WHEN cmp_t_coverage(exp((lo + hi) / 2), df) < c.confidence THEN hi ELSE (lo + hi) / 2 END, i + 1
    FROM b, cmp_params c WHERE i < 60
)
SELECT df::INTEGER AS df, exp((lo + hi) / 2) AS t FROM b WHERE i = 60;

-- cmp_between_runs: one row per (group, stage set, stage) in both sides: the change of
-- the mean against run-to-run variation. Each run is one observation of its condition
-- (its I/Os are not independent draws of it): Welch's t interval on the runs' means.
--   group_key, stage_set, stage
--   reps_base, reps_run       runs per side
--   sd_base_ns, sd_run_ns     standard deviation of the runs' means (NULL with one run)
--   change_ns                 mean of the run side's run means - the base side's (ns)
--   df                        Welch-Satterthwaite degrees of freedom (rounded down)
--   change_lo_ns, change_hi_ns   t interval of the change at cmp_params.confidence (NULL unless each side has
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
       p.change_ns - t.t * sqrt(p.se2) AS change_lo_ns,
       p.change_ns + t.t * sqrt(p.se2) AS change_hi_ns,
       CASE WHEN p.se2 IS NOT NULL THEN p.change_ns - t.t * sqrt(p.se2) > 0
                                     OR p.change_ns + t.t * sqrt(p.se2) < 0 END AS significant
FROM p JOIN cmp_t_quantile t ON t.df = least(greatest(floor(coalesce(p.df_exact, 1e9)), 1), 200);
