-- requires: compare/bootstrap

-- Plot layer of compare.html (reports/compare/plot_data.py reads it; the HTML only draws
-- it). Over cmp_rank_points and cmp_sample_parts: size depends on groups and stages, not on
-- I/Os.

-- cmp_plot_cdf: one row per (run, group, stage set, stage, percent 1..100): the points of
-- each run's cumulative distribution of the stage, to draw base and run on one axis.
--   run          'base' or 'run'
--   group_key, stage_set, stage, seq, parent   (as in cmp_io_stage)
--   pct          1..100 (percent of the run's I/Os at or below dur_ns)
--   dur_ns       that percentile (nearest-rank, ns)
-- The duration at rank ceil(pct * n / 100) (cmp_rank_points), as report_stage_cdf
-- (sql/report/reports.sql) computes them: no quantile aggregate holding every duration. Every
-- definition of a cut gets its cut's points (cmp_sample_parts.cut_part_id).
CREATE OR REPLACE VIEW cmp_plot_cdf AS
SELECT s.run, s.group_key, s.stage_set, s.stage, s.seq, s.parent, r.pct, r.dur AS dur_ns
FROM cmp_rank_points r JOIN cmp_sample_parts s ON s.cut_part_id = r.part_id;

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
    -- from the parts (a few dozen rows), which count each run's durations
    SELECT group_key, stage_set, stage, any_value(seq) AS seq, any_value(parent) AS parent,
           coalesce(sum(n) FILTER (WHERE run = 'base'), 0)::BIGINT AS base_ios,
           coalesce(sum(n) FILTER (WHERE run = 'run'), 0)::BIGINT AS run_ios,
           coalesce(sum(positive) FILTER (WHERE run = 'base'), 0)::BIGINT AS base_positive,
           coalesce(sum(positive) FILTER (WHERE run = 'run'), 0)::BIGINT AS run_positive,
           sum(zero)::BIGINT AS zero, sum(n)::BIGINT AS n
    FROM cmp_sample_parts GROUP BY group_key, stage_set, stage
)
SELECT group_key, stage_set, stage, seq, parent, base_ios, run_ios, base_positive, run_positive,
       CASE WHEN base_ios = 0 THEN 'run_only' WHEN run_ios = 0 THEN 'base_only'
            WHEN base_positive > 0 AND run_positive > 0 THEN 'ok'
            WHEN zero = n THEN 'all_zero' ELSE 'not_positive' END AS status
FROM s;

-- cmp_plot_top_groups(set_name, k): the k groups of the RUN side with the most I/Os (from the
-- sample parts' counts of end_to_end in stage set set_name): the groups compare.html draws.
--   group_key
CREATE OR REPLACE MACRO cmp_plot_top_groups(set_name, k) AS TABLE
SELECT group_key FROM cmp_sample_parts WHERE run = 'run' AND stage = 'end_to_end' AND stage_set = set_name
GROUP BY group_key ORDER BY sum(n) DESC, group_key LIMIT k;
