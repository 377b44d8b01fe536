-- cmp_samples: one row per (run, group, stage set, stage, sample): the durations the
-- bootstrap draws from, numbered 1..n in (rep, io_id) order (deterministic).
--   run, group_key, stage_set, stage, seq, parent, direction
--   k      sample number 1..n;  n  samples of this (run, group, stage)
--   dur    ns
CREATE OR REPLACE VIEW cmp_samples AS
SELECT run, group_key, stage_set, stage, seq, parent, direction, dur,
       row_number() OVER w AS k, count(*) OVER (PARTITION BY run, group_key, stage_set, stage) AS n
FROM cmp_io_stage
WINDOW w AS (PARTITION BY run, group_key, stage_set, stage ORDER BY rep, io_id);

-- cmp_stage_stats: one row per (run, group, stage set, stage): the point statistics.
--   run, group_key, stage_set, stage, seq, parent, direction
--   n                       io with a known duration
--   mean_ns, p50_ns, p99_ns (nearest-rank percentiles, ns)
CREATE OR REPLACE VIEW cmp_stage_stats AS
SELECT run, group_key, stage_set, stage, any_value(seq) AS seq, any_value(parent) AS parent,
       any_value(direction) AS direction, count(*) AS n,
       avg(dur) AS mean_ns, quantile_disc(dur, 0.5) AS p50_ns, quantile_disc(dur, 0.99) AS p99_ns
FROM cmp_io_stage GROUP BY ALL;

-- cmp_bootstrap: one row per (run, group, stage set, stage, resample): the statistics of
-- one bootstrap resample. Resample r draws min(n, max_draws) samples with replacement;
-- draw j takes sample 1 + hash(seed, run, group, stage, r, j) mod n, so the same seed
-- gives the same resamples on every machine running this DuckDB.
--   run, group_key, stage_set, stage, r (1..resamples)
--   mean_ns, p50_ns, p99_ns   of the resample (ns)
CREATE OR REPLACE VIEW cmp_bootstrap AS
WITH sizes AS (
    SELECT run, group_key, stage_set, stage, any_value(n) AS n FROM cmp_samples GROUP BY ALL
), draws AS (
    SELECT s.run, s.group_key, s.stage_set, s.stage, r.r, j.j,
           1 + (hash(p.seed, s.run, s.group_key, s.stage_set, s.stage, r.r, j.j) % s.n::UBIGINT)::BIGINT AS k
    FROM sizes s, cmp_params p,
         range(1, p.resamples + 1) r(r),
         range(1, least(s.n, p.max_draws) + 1) j(j)
)
SELECT d.run, d.group_key, d.stage_set, d.stage, d.r,
       avg(x.dur) AS mean_ns, quantile_disc(x.dur, 0.5) AS p50_ns, quantile_disc(x.dur, 0.99) AS p99_ns
FROM draws d JOIN cmp_samples x USING (run, group_key, stage_set, stage, k)
GROUP BY ALL;

-- cmp_lad: one row per (group, stage set, stage, statistic) present in both runs: the
-- Latency Amplification Degree LAD = T_run / T_base and the absolute change, with
-- 95% bootstrap confidence intervals (percentile method over resamples paired by r; the two
-- runs are resampled independently).
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
--   between_change_lo_ns, between_change_hi_ns   the run-to-run 95% interval of the mean's
--                      change (cmp_between_runs; NULL unless both sides have >= 2 runs)
CREATE OR REPLACE VIEW cmp_lad AS
WITH boot AS (
    SELECT b.group_key, b.stage_set, b.stage, u.statistic,
           u.base_v, u.run_v
    FROM (SELECT group_key, stage_set, stage, r,
                 max(mean_ns) FILTER (WHERE run = 'base') AS base_mean, max(mean_ns) FILTER (WHERE run = 'run') AS run_mean,
                 max(p50_ns)  FILTER (WHERE run = 'base') AS base_p50,  max(p50_ns)  FILTER (WHERE run = 'run') AS run_p50,
                 max(p99_ns)  FILTER (WHERE run = 'base') AS base_p99,  max(p99_ns)  FILTER (WHERE run = 'run') AS run_p99
          FROM cmp_bootstrap GROUP BY ALL) b,
         LATERAL (VALUES ('mean', b.base_mean, b.run_mean), ('p50', b.base_p50, b.run_p50),
                         ('p99', b.base_p99, b.run_p99)) u(statistic, base_v, run_v)
    WHERE u.base_v IS NOT NULL AND u.run_v IS NOT NULL
), ci AS (
    SELECT group_key, stage_set, stage, statistic,
           quantile_cont(run_v / nullif(base_v, 0), 0.025) AS lad_lo,
           quantile_cont(run_v / nullif(base_v, 0), 0.975) AS lad_hi,
           quantile_cont(run_v - base_v, 0.025) AS change_lo_ns,
           quantile_cont(run_v - base_v, 0.975) AS change_hi_ns
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
