-- requires: core/stage_definitions, core/stages, report/io_selected, report/reports
-- loaded: with every run

-- Plot layer of report.html (reports/report/plot_data.py reads these views; the HTML only
-- draws them). Every view is an aggregate over the selected io (io_selected): its size
-- depends on groups, stages, bins and buckets, never on the number of I/Os.

-- plot_stage_presence: one row per (group, stage set, stage) for every stage_definitions
-- row of a set the run has (io_stages), whether or not the group's I/Os have that stage:
-- what a chart can draw of the stage, and why not.
--   group_key, stage_set, stage, seq, parent   (see io_selected, stage_definitions)
--   ios           selected I/Os of the group with a known duration of the stage
--   positive      of those, durations > 0 (what a log time axis can show)
--   zero          durations = 0;  negative  durations < 0 (offset-based stages only)
--   status        'ok' (some duration > 0), 'missing' (no I/O has both milestones),
--                 'all_zero' (every duration is 0: the two events coincide), or
--                 'not_positive' (durations, but none > 0)
CREATE OR REPLACE VIEW plot_stage_presence AS
WITH sets AS (SELECT DISTINCT stage_set FROM io_stage_definitions),
d AS (
    SELECT g.group_key, d.stage_set, d.stage, d.seq, d.parent
    FROM report_groups g, stage_definitions d JOIN sets USING (stage_set)
), s AS (
    SELECT c.group_key, d.stage_set, d.stage, c.ios, c.positive, c.zero, c.negative
    FROM (SELECT sel.group_key, s.def_no, count(*) AS ios,
                 count(*) FILTER (WHERE s.dur > 0) AS positive,
                 count(*) FILTER (WHERE s.dur = 0) AS zero,
                 count(*) FILTER (WHERE s.dur < 0) AS negative
          FROM io_stage_durations s JOIN io_selected sel USING (io_n)
          WHERE s.dur IS NOT NULL
          GROUP BY ALL) c
    JOIN io_stage_definitions d USING (def_no)
)
SELECT d.group_key, d.stage_set, d.stage, d.seq, d.parent,
       coalesce(s.ios, 0) AS ios, coalesce(s.positive, 0) AS positive,
       coalesce(s.zero, 0) AS zero, coalesce(s.negative, 0) AS negative,
       CASE WHEN coalesce(s.ios, 0) = 0 THEN 'missing'
            WHEN s.positive > 0 THEN 'ok'
            WHEN s.zero = s.ios THEN 'all_zero'
            ELSE 'not_positive' END AS status
FROM d LEFT JOIN s USING (group_key, stage_set, stage);

-- plot_tail_breakdown: one row per (group, stage set, stage, cohort): where the time of
-- the slowest I/Os goes, next to that of the typical ones. A cohort is a set of the
-- group's I/Os chosen by their end_to_end of the same stage set:
--   cohort        'median': end_to_end between its p45 and p55 (nearest-rank);
--                 'tail': end_to_end at or above its p99
--   group_key, stage_set, stage, seq, parent   (see stage_definitions)
--   cohort_ios    I/Os in the cohort
--   e2e_lo_ns, e2e_hi_ns   the cohort's bounds of end_to_end (ns)
--   n             cohort I/Os with a known duration of the stage
--   mean_ns       the stage's mean over them (ns)
--   share         mean_ns / the cohort's mean end_to_end (fraction; NULL when that is 0)
CREATE OR REPLACE VIEW plot_tail_breakdown AS
WITH e AS (
    SELECT s.io_n, d.stage_set, sel.group_key, s.dur
    FROM io_stage_durations s JOIN io_selected sel USING (io_n)
    JOIN io_stage_definitions d ON d.def_no = s.def_no AND d.stage = 'end_to_end'
    WHERE s.dur IS NOT NULL
), q AS (
    SELECT group_key, stage_set, p[1] AS p45, p[2] AS p55, p[3] AS p99 FROM (
        -- one quantile state (a copy of the durations) for the three fractions
        SELECT group_key, stage_set, quantile_disc(dur, [0.45, 0.55, 0.99]) AS p FROM e GROUP BY ALL)
), members AS MATERIALIZED (
    -- a few per cent of the I/Os: materialized, so that the stages are joined to them before
    -- grouping (DuckDB otherwise groups every io_stages row first: 7.5 of 10.5 CPU-s at 773 k I/Os)
    SELECT e.io_n, e.group_key, e.stage_set, 'median' AS cohort, e.dur
    FROM e JOIN q USING (group_key, stage_set) WHERE e.dur BETWEEN q.p45 AND q.p55
    UNION ALL
    SELECT e.io_n, e.group_key, e.stage_set, 'tail', e.dur
    FROM e JOIN q USING (group_key, stage_set) WHERE e.dur >= q.p99
), bounds AS (
    SELECT group_key, stage_set, cohort, count(*) AS cohort_ios,
           min(dur) AS e2e_lo_ns, max(dur) AS e2e_hi_ns, avg(dur) AS e2e_mean_ns
    FROM members GROUP BY ALL
), st AS (
    SELECT m.group_key, m.stage_set, m.cohort, d.stage, any_value(d.seq) AS seq,
           any_value(d.parent) AS parent, count(*) AS n, avg(s.dur) AS mean_ns
    FROM members m JOIN io_stage_durations s ON s.io_n = m.io_n
    JOIN io_stage_definitions d ON d.def_no = s.def_no AND d.stage_set = m.stage_set
    WHERE s.dur IS NOT NULL
    GROUP BY ALL
)
SELECT st.group_key, st.stage_set, st.stage, st.seq, st.parent, st.cohort, b.cohort_ios,
       b.e2e_lo_ns, b.e2e_hi_ns, st.n, st.mean_ns,
       st.mean_ns / nullif(b.e2e_mean_ns, 0) AS share
FROM st JOIN bounds b USING (group_key, stage_set, cohort);

-- plot_latency_heatmap: one row per (group, stage set, stage, time bin, log2 bucket) holding
-- at least one I/O: how the latency distribution moves over the run. An I/O counts in the
-- bin of its completion (block_rq_complete, else nvme_complete_rq). Only end_to_end.
-- Bins are report_timeseries' (report/reports.sql: about 100 over report_window, >= 1 ms);
-- buckets are report_stage_histogram's.
--   group_key, stage_set, stage
--   bin           bin number from report_window.start_ts
--   bin_start_ns, bin_end_ns  the bin's bounds as offsets from report_window.start_ts (ns)
--   bin_ns        bin width (ns)
--   bucket        k: [2^k, 2^(k+1)) us; -1: below 1 us; -2: negative
--   lo_ns, hi_ns  bucket bounds (ns; lo_ns NULL for negative durations)
--   count         I/Os
CREATE OR REPLACE VIEW plot_latency_heatmap AS
WITH w AS (
    SELECT start_ts, greatest(dur // 100, 1000000) AS bin_ns FROM report_window
), q AS (
    SELECT sel.group_key, d.stage_set, d.stage,
           (coalesce(sel.i_rq_complete_ts, sel.i_complete_rq_ts) - w.start_ts) // w.bin_ns AS bin, w.bin_ns,
           CASE WHEN s.dur < 0 THEN -2 WHEN s.dur < 1000 THEN -1
                ELSE floor(log2(s.dur / 1000.0))::INTEGER END AS bucket
    FROM io_stage_durations s JOIN io_selected sel USING (io_n)
    JOIN io_stage_definitions d ON d.def_no = s.def_no AND d.stage = 'end_to_end', w
    WHERE s.dur IS NOT NULL
      AND coalesce(sel.i_rq_complete_ts, sel.i_complete_rq_ts) IS NOT NULL
)
SELECT group_key, stage_set, stage, bin, bin * any_value(bin_ns) AS bin_start_ns,
       (bin + 1) * any_value(bin_ns) AS bin_end_ns, any_value(bin_ns) AS bin_ns,
       bucket,
       CASE WHEN bucket = -2 THEN NULL WHEN bucket = -1 THEN 0 ELSE (1000 * 2 ^ bucket)::BIGINT END AS lo_ns,
       CASE WHEN bucket = -2 THEN 0 WHEN bucket = -1 THEN 1000 ELSE (1000 * 2 ^ (bucket + 1))::BIGINT END AS hi_ns,
       count(*) AS count
FROM q GROUP BY group_key, stage_set, stage, bin, bucket;

-- plot_queue_timeseries: one row per (queue, time bin) for EVERY bin of the run:
-- report_timeseries with the bins where a queue had nothing in flight filled with zeros
-- (a line through them goes down to 0 instead of bridging the gap).
--   queue, bin, bin_start_ns, bin_ns, completions, bytes, iops, mb_s, inflight_avg
--                as in report_timeseries (0 where the queue was idle)
--   queue_completions   completions of the queue over the whole run (to rank queues)
CREATE OR REPLACE VIEW plot_queue_timeseries AS
WITH t AS (SELECT * FROM report_timeseries),
bins AS (SELECT b.bin, (SELECT any_value(bin_ns) FROM t) AS bin_ns
         FROM range(0, (SELECT max(bin) + 1 FROM t)) b(bin)),
queues AS (SELECT queue, sum(completions)::BIGINT AS queue_completions FROM t GROUP BY queue)
SELECT q.queue, b.bin, b.bin * b.bin_ns AS bin_start_ns, b.bin_ns,
       coalesce(t.completions, 0) AS completions, coalesce(t.bytes, 0) AS bytes,
       coalesce(t.iops, 0) AS iops, coalesce(t.mb_s, 0) AS mb_s, coalesce(t.inflight_avg, 0) AS inflight_avg,
       q.queue_completions
FROM queues q CROSS JOIN bins b LEFT JOIN t USING (queue, bin);
