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
           quantile_disc(dur, list_transform(range(1, 101), lambda i: i / 100)) AS qs  -- 1st..100th percentile
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
