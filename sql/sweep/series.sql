-- requires: core/stage_definitions
-- input: sweep_source, sweep_run_info  each run's stage statistics (reports/sweep/load.py)

-- A run series (python -m ntscope sweep RUN...): the same workload at growing load (iodepth,
-- jobs, ...), the view of the paper's Figures 6 and 7: where the time goes at each point
-- and which stage amplifies as the load grows.
-- The loader (reports/sweep/load.py) fills two tables from each run's own views, computing
-- nothing:
--   sweep_run_info: one row per run: run_idx (0.. in series order), run (folder name),
--     run_dir, param (the ordering parameter, NULL when none), param_value (DOUBLE or NULL),
--     label (what the axis shows, distinct per run: '<param>=<value>' or the run's name, with
--     ' (<run folder name>)' when several runs share it; reports/sweep/load.py distinct_labels)
--   sweep_source: one row per (run, group, stage set, stage): run_idx, group_key, stage_set,
--     stage, seq, parent, count, mean_ns, p50_ns, p99_ns (report_stage_stats of that run,
--     grouped by type and size), iops and mb_s of the group (report_groups)

-- sweep_stage_set: one row: the stage set the series shows: the most preferred
-- (stage_sets.preference, as primary_stage_set) that every run has.
--   stage_set
CREATE OR REPLACE VIEW sweep_stage_set AS
SELECT stage_set FROM sweep_source JOIN stage_sets USING (stage_set)
GROUP BY stage_set HAVING count(DISTINCT run_idx) = (SELECT count(*) FROM sweep_run_info)
ORDER BY min(preference) LIMIT 1;

-- sweep_points: one row per (group, stage of the series' set, run): the stage at that
-- point of the series, and its amplification against the group's first point.
--   group_key, stage, seq, parent
--   run_idx, label, param_value     the point (sweep_run_info)
--   count                           I/Os with the stage
--   mean_ns, p50_ns, p99_ns         (ns)
--   iops, mb_s                      the group's rate at that point (per second, 10^6 B/s)
--   lad_mean, lad_p99               mean_ns / the first point's mean_ns (p99 likewise); NULL
--                                   when the first point's value is 0
--   first_run_idx                   the point the LAD divides by (the group's first run)
CREATE OR REPLACE VIEW sweep_points AS
WITH s AS (
    SELECT x.*, i.label, i.param_value
    FROM sweep_source x JOIN sweep_run_info i USING (run_idx)
    WHERE x.stage_set = (SELECT stage_set FROM sweep_stage_set)
), first AS (
    SELECT group_key, stage, arg_min(run_idx, run_idx) AS first_run_idx,
           arg_min(mean_ns, run_idx) AS first_mean_ns, arg_min(p99_ns, run_idx) AS first_p99_ns
    FROM s GROUP BY group_key, stage
)
SELECT s.group_key, s.stage, s.seq, s.parent, s.run_idx, s.label, s.param_value, s.count,
       s.mean_ns, s.p50_ns, s.p99_ns, s.iops, s.mb_s,
       s.mean_ns / nullif(f.first_mean_ns, 0) AS lad_mean,
       s.p99_ns / nullif(f.first_p99_ns, 0) AS lad_p99,
       f.first_run_idx
FROM s JOIN first f USING (group_key, stage);

-- sweep_most_amplified: one row per group: the stage (any level, end_to_end excepted) whose
-- mean amplified most from the first point to the last, the queue that builds up (the
-- paper's LAD localization across a series).
--   group_key, stage, lad_mean (at the last point), first_mean_ns, last_mean_ns (ns)
CREATE OR REPLACE VIEW sweep_most_amplified AS
WITH last AS (
    SELECT group_key, stage, arg_max(lad_mean, run_idx) AS lad_mean,
           arg_min(mean_ns, run_idx) AS first_mean_ns, arg_max(mean_ns, run_idx) AS last_mean_ns
    FROM sweep_points WHERE stage <> 'end_to_end' GROUP BY group_key, stage
)
SELECT group_key, stage, lad_mean, first_mean_ns, last_mean_ns FROM last
WHERE lad_mean IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY group_key ORDER BY lad_mean DESC, stage) = 1;
