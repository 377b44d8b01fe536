-- requires: compare/params, compare/repeats, compare/bootstrap

-- Compare layer: LAD and its intervals from the bootstrap (compare/bootstrap.sql).

-- the interval's tail quantile, (1 - confidence) / 2: a variable, since quantile_cont takes a constant
SET VARIABLE cmp_tail = (SELECT (1 - confidence) / 2 FROM cmp_params);

-- cmp_lad: one row per (group, stage set, stage, statistic) present in both runs: the
-- Latency Amplification Degree LAD = T_run / T_base and the absolute change, with
-- bootstrap confidence intervals at cmp_params.confidence (percentile method over resamples
-- paired by r; the two runs are resampled independently; m-out-of-n resamples rescaled, see
-- cmp_bootstrap).
--   group_key, stage_set, stage, seq, parent, direction
--   statistic          'mean', 'p50' or 'p99'
--   n_base, n_run      samples in each run
--   base_ns, run_ns    the statistic in each run (ns)
--   lad, lad_lo, lad_hi            point estimate and CI (NULL when base_ns <= 0)
--   change_ns, change_lo_ns, change_hi_ns   run - base (ns) and its CI
--   significant        CI of the change excludes 0 and the change exceeds cmp_params'
--                      min_rel_change (relative to base) and min_abs_change_ns; with
--                      repeats on both sides (mean only) also cmp_between_runs' interval
--   reps_base, reps_run    runs per side (1 without repeats)
--   between_change_lo_ns, between_change_hi_ns   the run-to-run interval (cmp_params.confidence) of the mean's
--                      change (cmp_between_runs; NULL unless both sides have >= 2 runs)
CREATE OR REPLACE TABLE cmp_lad AS
WITH scaled AS (
    -- m-out-of-n resamples: the full-sample statistic + sqrt(m / n) x the resample's
    -- deviation from it (resamples of n draws are used as they are)
    SELECT b.group_key, b.stage_set, b.stage, b.run, b.r,
           CASE WHEN b.m = b.n THEN b.mean_ns ELSE t.mean_ns + sqrt(b.m / b.n) * (b.mean_ns - t.mean_ns) END AS mean_ns,
           CASE WHEN b.m = b.n THEN b.p50_ns ELSE t.p50_ns + sqrt(b.m / b.n) * (b.p50_ns - t.p50_ns) END AS p50_ns,
           CASE WHEN b.m = b.n THEN b.p99_ns ELSE t.p99_ns + sqrt(b.m / b.n) * (b.p99_ns - t.p99_ns) END AS p99_ns
    FROM cmp_bootstrap b JOIN cmp_stage_stats t USING (run, group_key, stage_set, stage)
), boot AS (
    SELECT b.group_key, b.stage_set, b.stage, u.statistic,
           u.base_v, u.run_v
    FROM (SELECT group_key, stage_set, stage, r,
                 max(mean_ns) FILTER (WHERE run = 'base') AS base_mean, max(mean_ns) FILTER (WHERE run = 'run') AS run_mean,
                 max(p50_ns)  FILTER (WHERE run = 'base') AS base_p50,  max(p50_ns)  FILTER (WHERE run = 'run') AS run_p50,
                 max(p99_ns)  FILTER (WHERE run = 'base') AS base_p99,  max(p99_ns)  FILTER (WHERE run = 'run') AS run_p99
          FROM scaled GROUP BY ALL) b,
         LATERAL (VALUES ('mean', b.base_mean, b.run_mean), ('p50', b.base_p50, b.run_p50),
                         ('p99', b.base_p99, b.run_p99)) u(statistic, base_v, run_v)
    WHERE u.base_v IS NOT NULL AND u.run_v IS NOT NULL
), ci AS (
    SELECT group_key, stage_set, stage, statistic,
           quantile_cont(run_v / nullif(base_v, 0), getvariable('cmp_tail')) AS lad_lo,
           quantile_cont(run_v / nullif(base_v, 0), 1 - getvariable('cmp_tail')) AS lad_hi,
           quantile_cont(run_v - base_v, getvariable('cmp_tail')) AS change_lo_ns,
           quantile_cont(run_v - base_v, 1 - getvariable('cmp_tail')) AS change_hi_ns
    FROM boot GROUP BY ALL
), pt AS (
    SELECT b.group_key, b.stage_set, b.stage, b.seq, b.parent, b.direction,
           b.n AS n_base, r.n AS n_run, u.statistic, u.base_ns, u.run_ns
    FROM cmp_stage_stats b JOIN cmp_stage_stats r USING (group_key, stage_set, stage),
         LATERAL (VALUES ('mean', b.mean_ns, r.mean_ns), ('p50', b.p50_ns::DOUBLE, r.p50_ns::DOUBLE),
                         ('p99', b.p99_ns::DOUBLE, r.p99_ns::DOUBLE)) u(statistic, base_ns, run_ns)
    WHERE b.run = 'base' AND r.run = 'run'
)
SELECT pt.group_key, pt.stage_set, pt.stage, pt.seq, pt.parent, pt.direction, pt.statistic,
       pt.n_base, pt.n_run, pt.base_ns, pt.run_ns,
       CASE WHEN pt.base_ns > 0 THEN pt.run_ns / pt.base_ns END AS lad,
       CASE WHEN pt.base_ns > 0 THEN ci.lad_lo END AS lad_lo,
       CASE WHEN pt.base_ns > 0 THEN ci.lad_hi END AS lad_hi,
       pt.run_ns - pt.base_ns AS change_ns, ci.change_lo_ns, ci.change_hi_ns,
       (ci.change_lo_ns > 0 OR ci.change_hi_ns < 0)
         AND abs(pt.run_ns - pt.base_ns) >= p.min_abs_change_ns
         AND (pt.base_ns <= 0 OR abs(pt.run_ns - pt.base_ns) >= p.min_rel_change * pt.base_ns)
         -- repeats on both sides: the mean's change must also clear run-to-run variation
         AND coalesce(br.significant, true) AS significant,
       coalesce(br.reps_base, 1) AS reps_base, coalesce(br.reps_run, 1) AS reps_run,
       br.change_lo_ns AS between_change_lo_ns, br.change_hi_ns AS between_change_hi_ns
FROM pt JOIN ci USING (group_key, stage_set, stage, statistic)
LEFT JOIN cmp_between_runs br ON pt.statistic = 'mean' AND br.group_key = pt.group_key
     AND br.stage_set = pt.stage_set AND br.stage = pt.stage, cmp_params p;
