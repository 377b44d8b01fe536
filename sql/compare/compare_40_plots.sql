-- Plot layer of compare.html (reports/compare/plot_data.py reads it; the HTML only draws
-- it). Aggregates over cmp_io_stage: size depends on groups and stages, not on I/Os.

-- cmp_plot_cdf: one row per (run, group, stage set, stage, percent 1..100): the points of
-- each run's cumulative distribution of the stage, to draw base and run on one axis.
--   run          'base' or 'run'
--   group_key, stage_set, stage, seq, parent   (as in cmp_io_stage)
--   pct          1..100 (percent of the run's I/Os at or below dur_ns)
--   dur_ns       that percentile (nearest-rank, ns)
CREATE OR REPLACE VIEW cmp_plot_cdf AS
WITH l AS (
    SELECT run, group_key, stage_set, stage, any_value(seq) AS seq, any_value(parent) AS parent,
           quantile_disc(dur, [0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1,
                               0.11, 0.12, 0.13, 0.14, 0.15, 0.16, 0.17, 0.18, 0.19, 0.2,
                               0.21, 0.22, 0.23, 0.24, 0.25, 0.26, 0.27, 0.28, 0.29, 0.3,
                               0.31, 0.32, 0.33, 0.34, 0.35, 0.36, 0.37, 0.38, 0.39, 0.4,
                               0.41, 0.42, 0.43, 0.44, 0.45, 0.46, 0.47, 0.48, 0.49, 0.5,
                               0.51, 0.52, 0.53, 0.54, 0.55, 0.56, 0.57, 0.58, 0.59, 0.6,
                               0.61, 0.62, 0.63, 0.64, 0.65, 0.66, 0.67, 0.68, 0.69, 0.7,
                               0.71, 0.72, 0.73, 0.74, 0.75, 0.76, 0.77, 0.78, 0.79, 0.8,
                               0.81, 0.82, 0.83, 0.84, 0.85, 0.86, 0.87, 0.88, 0.89, 0.9,
                               0.91, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97, 0.98, 0.99, 1.0]) AS qs
    FROM cmp_io_stage GROUP BY run, group_key, stage_set, stage
)
SELECT run, group_key, stage_set, stage, seq, parent, pct, qs[pct] AS dur_ns
FROM l, range(1, 101) r(pct);

-- cmp_plot_presence: one row per (group, stage set, stage) of either run: what a log time
-- axis can show of the stage in each run, and why not.
--   group_key, stage_set, stage, seq, parent
--   base_ios, run_ios             I/Os with a known duration in each run
--   base_positive, run_positive   of those, durations > 0
--   status        'ok' (both runs have a duration > 0), 'base_only' / 'run_only' (one run
--                 lacks the stage), 'all_zero' (every duration of both runs is 0), or
--                 'not_positive' (a run has durations, none > 0)
CREATE OR REPLACE VIEW cmp_plot_presence AS
WITH s AS (
    SELECT group_key, stage_set, stage, any_value(seq) AS seq, any_value(parent) AS parent,
           count(*) FILTER (WHERE run = 'base') AS base_ios, count(*) FILTER (WHERE run = 'run') AS run_ios,
           count(*) FILTER (WHERE run = 'base' AND dur > 0) AS base_positive,
           count(*) FILTER (WHERE run = 'run' AND dur > 0) AS run_positive,
           count(*) FILTER (WHERE dur = 0) AS zero, count(*) AS n
    FROM cmp_io_stage GROUP BY group_key, stage_set, stage
)
SELECT group_key, stage_set, stage, seq, parent, base_ios, run_ios, base_positive, run_positive,
       CASE WHEN base_ios = 0 THEN 'run_only' WHEN run_ios = 0 THEN 'base_only'
            WHEN base_positive > 0 AND run_positive > 0 THEN 'ok'
            WHEN zero = n THEN 'all_zero' ELSE 'not_positive' END AS status
FROM s;
