-- requires: fleet/histogram, fleet/params
-- input: fleet_runs, fleet_io, fleet_stage_hist, fleet_verdicts  the fleet's Iceberg tables (reports/fleet/tables.py documents them; reports/fleet/scan.py registers their scans)

-- The fleet report (`ntscope fleet report`): per subject (target, initiator, tenant or class),
-- stage and period, how many I/Os and their p50 / p99 read from the merged histograms; the
-- worst runs; what regressed between a baseline window and the window. Only runs whose `runs`
-- rows were committed count (an ingest commits them last: a run it did not finish is not
-- there).

-- fleet_visible: one row per run the fleet holds (its runs rows committed).
--   run_id, run_name, start_utc, kernel_release (the initiators', comma-separated), mode
CREATE OR REPLACE VIEW fleet_visible AS
SELECT run_id, min(run_name) AS run_name, min(start_utc) AS start_utc,
       string_agg(DISTINCT kernel_release, ',' ORDER BY kernel_release) FILTER (WHERE role = 'initiator') AS kernel_release,
       min(mode) AS mode
FROM fleet_runs GROUP BY run_id;

-- fleet_summary: one row: the visible runs, and their earliest and latest capture start.
--   runs, first_utc, last_utc
CREATE OR REPLACE VIEW fleet_summary AS
SELECT count(*) AS runs, min(start_utc) AS first_utc, max(start_utc) AS last_utc FROM fleet_visible;

-- fleet_subject_hist: one row per (run, subject, stage set, stage, minute, bucket) of the visible
-- runs inside the window: the histogram counts keyed by fleet_params.subject.
--   run_id, subject_value ('?' when unknown: an I/O without a target, a tenant not recorded),
--   stage_set, stage, minute, bucket, count
CREATE OR REPLACE VIEW fleet_subject_hist AS
SELECT h.run_id,
       coalesce(CASE p.subject WHEN 'target' THEN h.target_host WHEN 'initiator' THEN h.initiator_host
                               WHEN 'tenant' THEN h.tenant WHEN 'class' THEN h.class END, '?') AS subject_value,
       h.stage_set, h.stage, h.minute, h.bucket, h.count
FROM fleet_stage_hist h SEMI JOIN fleet_visible v USING (run_id) CROSS JOIN fleet_params p;

-- fleet_stage_set: one row: the stage set the text and HTML lead with: ntprof when some visible
-- run has it, else stock, else the first by name (the JSON holds every set).
--   stage_set
CREATE OR REPLACE VIEW fleet_stage_set AS
SELECT stage_set FROM (SELECT DISTINCT stage_set FROM fleet_subject_hist)
ORDER BY CASE stage_set WHEN 'ntprof' THEN 0 WHEN 'stock' THEN 1 ELSE 2 END, stage_set LIMIT 1;

-- fleet_hist_groups: the histogram rows the report reads, each under the group it is read in:
--   kind    'period'  per subject value and period of the window (grp: '<subject>|<period start>')
--           'run'     per run and subject value in the window, end_to_end only ('<run_id>|<subject>')
--           'base', 'window'   per subject value in the baseline window and in the window (both
--                     only with a baseline: fleet_params)
--   grp, stage_set, stage, bucket, count
CREATE OR REPLACE VIEW fleet_hist_groups AS
WITH w AS (
    SELECT h.*, p.period,
           (p.since_utc IS NULL OR h.minute >= p.since_utc) AND (p.until_utc IS NULL OR h.minute < p.until_utc) AS in_window,
           (p.baseline_since_utc IS NOT NULL OR p.baseline_until_utc IS NOT NULL)
             AND (p.baseline_since_utc IS NULL OR h.minute >= p.baseline_since_utc)
             AND (p.baseline_until_utc IS NULL OR h.minute < p.baseline_until_utc) AS in_base,
           p.baseline_since_utc IS NOT NULL OR p.baseline_until_utc IS NOT NULL AS has_base
    FROM fleet_subject_hist h CROSS JOIN fleet_params p
)
SELECT 'period' AS kind, subject_value || '|' || strftime(date_trunc(period, minute), '%Y-%m-%dT%H:%M:%SZ') AS grp,
       stage_set, stage, bucket, count FROM w WHERE in_window
UNION ALL
SELECT 'run', run_id || '|' || subject_value, stage_set, stage, bucket, count FROM w WHERE in_window AND stage = 'end_to_end'
UNION ALL
SELECT 'base', subject_value, stage_set, stage, bucket, count FROM w WHERE in_base
UNION ALL
SELECT 'window', subject_value, stage_set, stage, bucket, count FROM w WHERE in_window AND has_base;

-- fleet_hist_percentiles: one row per (kind, group, stage set, stage) of fleet_hist_groups: its
-- I/Os, and p50 and p99 as the merged histogram reads them back (nearest rank: the bucket
-- holding the ceil(p * n)-th duration, read back within fleet_hist_alpha() of it).
--   kind, grp, stage_set, stage, ios, p50_ns, p99_ns
CREATE OR REPLACE VIEW fleet_hist_percentiles AS
WITH b AS (
    SELECT kind, grp, stage_set, stage, bucket, sum(count) AS n FROM fleet_hist_groups GROUP BY ALL
), c AS (
    SELECT *, sum(n) OVER (PARTITION BY kind, grp, stage_set, stage ORDER BY bucket) AS cum,
           sum(n) OVER (PARTITION BY kind, grp, stage_set, stage) AS total
    FROM b
)
SELECT kind, grp, stage_set, stage, any_value(total)::BIGINT AS ios,
       fleet_bucket_ns(min(bucket) FILTER (WHERE cum >= ceil(0.50 * total))) AS p50_ns,
       fleet_bucket_ns(min(bucket) FILTER (WHERE cum >= ceil(0.99 * total))) AS p99_ns
FROM c GROUP BY ALL;

-- fleet_periods: one row per (subject value, period, stage set, stage) in the window.
--   subject_value, period_start (TIMESTAMP), stage_set, stage, ios, p50_ns, p99_ns
CREATE OR REPLACE VIEW fleet_periods AS
SELECT split_part(grp, '|', 1) AS subject_value, split_part(grp, '|', 2)::TIMESTAMP AS period_start,
       stage_set, stage, ios, p50_ns, p99_ns
FROM fleet_hist_percentiles WHERE kind = 'period'
ORDER BY subject_value, period_start, stage_set, stage;

-- fleet_run_e2e: one row per (visible run in the window, subject value, stage set): its
-- end_to_end p99 and I/Os (from its histograms), how many findings it has (fleet_verdicts) and
-- the worst of them.
--   run_id, run_name, start_utc, subject_value, stage_set, ios, p99_ns, findings, worst_finding
CREATE OR REPLACE VIEW fleet_run_e2e AS
WITH f AS (
    SELECT run_id, count(*) AS findings,
           arg_max(kind || ' ' || subject || ' ' || coalesce(value, ''), (CASE severity WHEN 'error' THEN 2 ELSE 1 END, subject)) AS worst_finding
    FROM fleet_verdicts GROUP BY run_id
)
SELECT split_part(p.grp, '|', 1) AS run_id, v.run_name, v.start_utc, split_part(p.grp, '|', 2) AS subject_value,
       p.stage_set, p.ios, p.p99_ns, coalesce(f.findings, 0) AS findings, f.worst_finding
FROM fleet_hist_percentiles p
JOIN fleet_visible v ON v.run_id = split_part(p.grp, '|', 1)
LEFT JOIN f ON f.run_id = v.run_id
WHERE p.kind = 'run';

-- fleet_worst_runs: per subject value and stage set, the fleet_params.worst_runs runs with the
-- highest end_to_end p99 (ties: more I/Os first).
--   subject_value, stage_set, rank (1..), run_id, run_name, start_utc, ios, p99_ns, findings, worst_finding
CREATE OR REPLACE VIEW fleet_worst_runs AS
SELECT * FROM (
    SELECT subject_value, stage_set,
           row_number() OVER (PARTITION BY subject_value, stage_set ORDER BY p99_ns DESC, ios DESC, run_id) AS rank,
           run_id, run_name, start_utc, ios, p99_ns, findings, worst_finding
    FROM fleet_run_e2e)
WHERE rank <= (SELECT worst_runs FROM fleet_params)
ORDER BY subject_value, stage_set, rank;

-- fleet_regressions: one row per (subject value, stage set, stage) with I/O in both the
-- baseline window and the window (fleet_params; none without a baseline): each window's p50
-- and p99 from the merged histograms, their ratio (LAD, window / baseline: compare's statistic
-- of a percentile), and whether it moved by compare's minimums ('slower', 'faster' or 'no
-- change'; the histograms' 1% error is below the 10% minimum).
--   subject_value, stage_set, stage, base_ios, run_ios, base_p50_ns, run_p50_ns, p50_lad,
--   base_p99_ns, run_p99_ns, p99_lad, p50_change, p99_change
CREATE OR REPLACE VIEW fleet_regressions AS
WITH j AS (
    SELECT b.grp AS subject_value, b.stage_set, b.stage, b.ios AS base_ios, r.ios AS run_ios,
           b.p50_ns AS base_p50_ns, r.p50_ns AS run_p50_ns, r.p50_ns / nullif(b.p50_ns, 0) AS p50_lad,
           b.p99_ns AS base_p99_ns, r.p99_ns AS run_p99_ns, r.p99_ns / nullif(b.p99_ns, 0) AS p99_lad
    FROM (SELECT * FROM fleet_hist_percentiles WHERE kind = 'base') b
    JOIN (SELECT * FROM fleet_hist_percentiles WHERE kind = 'window') r USING (grp, stage_set, stage)
)
SELECT j.*,
       CASE WHEN abs(run_p50_ns - base_p50_ns) >= p.min_abs_change_ns AND abs(coalesce(p50_lad, 1) - 1) >= p.min_rel_change
            THEN CASE WHEN run_p50_ns > base_p50_ns THEN 'slower' ELSE 'faster' END ELSE 'no change' END AS p50_change,
       CASE WHEN abs(run_p99_ns - base_p99_ns) >= p.min_abs_change_ns AND abs(coalesce(p99_lad, 1) - 1) >= p.min_rel_change
            THEN CASE WHEN run_p99_ns > base_p99_ns THEN 'slower' ELSE 'faster' END ELSE 'no change' END AS p99_change
FROM j CROSS JOIN fleet_params p
ORDER BY subject_value, stage_set, stage;
