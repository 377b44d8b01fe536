-- requires: core/stage_definitions, core/sampling, core/join, core/stages, core/inflight_bins, report/io_selected

-- report_window: one row: the time the selected io span, used for rates.
--   start_ts, end_ts   first submit and last completion (ns, initiator clock)
--   dur                end_ts - start_ts (ns)
CREATE OR REPLACE VIEW report_window AS
SELECT min(coalesce(i_bio_queue_ts, i_setup_ts)) AS start_ts,
       max(coalesce(i_rq_complete_ts, i_complete_rq_ts)) AS end_ts,
       greatest(max(coalesce(i_rq_complete_ts, i_complete_rq_ts)) - min(coalesce(i_bio_queue_ts, i_setup_ts)), 1) AS dur
FROM io_selected;

-- report_groups: one row per group of selected io.
--   group_key, group_json   as in io_selected
--   count        io in the group;  matched  io joined to a target command
--   bytes        sum of io sizes
--   time_start_ts  grouping by time: the group's bucket start (ns, initiator clock), the
--                order groups are shown in; NULL otherwise (groups shown by count)
--   rate_dur_ns  the time rates divide by (ns): report_window.dur, or for a time group its
--                own bucket clipped to report_window (the first and last are partial)
--   iops         count / rate_dur_ns (per second), times sampling_run.scale (a sampled
--                capture: the estimate for every command, not the traced ones)
--   mb_s         bytes / rate_dur_ns (10^6 bytes per second), scaled likewise
--   est_count    count times sampling_run.scale (= count unless sampled)
CREATE OR REPLACE VIEW report_groups AS
WITH g AS (
    SELECT group_key, any_value(group_json) AS group_json, count(*) AS count,
           count(*) FILTER (WHERE match_state = 'matched') AS matched,
           sum(size_bytes)::BIGINT AS bytes,
           any_value(time_bucket_start_ts) AS time_start_ts,
           CASE WHEN any_value(time_bucket_start_ts) IS NULL THEN any_value(w.dur)
                ELSE greatest(least(any_value(time_bucket_end_ts), any_value(w.end_ts))
                              - greatest(any_value(time_bucket_start_ts), any_value(w.start_ts)), 1)
           END AS rate_dur_ns
    FROM io_selected, report_window w
    GROUP BY group_key
)
SELECT group_key, group_json, count, matched, bytes, time_start_ts, rate_dur_ns,
       count * 1e9 / rate_dur_ns * sr.scale AS iops, bytes * 1e3 / rate_dur_ns * sr.scale AS mb_s,
       round(count * sr.scale)::BIGINT AS est_count
FROM g, sampling_run sr;

-- report_unmeasured: one row per (group, stage set) whose top-level stages the run cannot all
-- measure (stage_coverage.measurable false: a one-host run, a host whose events lack a
-- milestone). Its measured top-level stages then do not sum to end_to_end; the remainder per
-- I/O (end_to_end minus the measured top-level stages) is the time the left-out stages took
-- together. No row when every top-level stage is measurable.
--   group_key, stage_set
--   stages       the top-level stages left out (list, in stage_definitions order)
--   label        why, short: 'no target trace' (a one-host run) or 'milestones missing'
--   reason       why, in full (stage_coverage.reason of each; distinct ones joined by '; ')
--   count        selected io with end_to_end and every measured top-level stage known
--   mean_ns      mean remainder per I/O (ns)
--   min_ns, max_ns   smallest and largest remainder (ns)
CREATE OR REPLACE VIEW report_unmeasured AS
WITH gaps AS (
    SELECT c.stage_set, list(c.stage ORDER BY c.seq) AS stages,
           string_agg(DISTINCT c.reason, '; ' ORDER BY c.reason) AS reason,
           CASE WHEN bool_and(c.reason LIKE 'the run has no % trace')
                THEN 'no ' || string_agg(DISTINCT regexp_extract(c.reason, '^the run has no (.*) trace$', 1), ' or ')
                     || ' trace'
                ELSE 'milestones missing' END AS label
    FROM stage_coverage c JOIN stage_definitions d USING (stage_set, stage)
    WHERE NOT c.measurable AND d.parent IS NULL AND d.stage <> 'end_to_end'
    GROUP BY c.stage_set
), per_io AS (
    SELECT sel.group_key, d.stage_set,
           max(s.dur) FILTER (WHERE d.stage = 'end_to_end') AS e2e,
           sum(s.dur) FILTER (WHERE d.parent IS NULL AND d.stage <> 'end_to_end'
                                AND NOT list_contains(g.stages, d.stage)) AS measured_sum,
           count(*) FILTER (WHERE d.parent IS NULL AND d.stage <> 'end_to_end'
                              AND NOT list_contains(g.stages, d.stage) AND s.dur IS NULL) AS unknown
    FROM io_stage_durations s JOIN io_selected sel USING (io_n)
    JOIN io_stage_definitions d USING (def_no) JOIN gaps g USING (stage_set)
    GROUP BY s.io_n, sel.group_key, d.stage_set
), r AS (
    SELECT group_key, stage_set, e2e - coalesce(measured_sum, 0) AS rest
    FROM per_io WHERE e2e IS NOT NULL AND unknown = 0
)
SELECT g.group_key, s.stage_set, any_value(s.stages) AS stages, any_value(s.label) AS label,
       any_value(s.reason) AS reason, count(r.rest) AS count,
       round(avg(r.rest))::BIGINT AS mean_ns, min(r.rest)::BIGINT AS min_ns, max(r.rest)::BIGINT AS max_ns
FROM (SELECT DISTINCT group_key FROM io_selected) g CROSS JOIN gaps s
LEFT JOIN r ON r.group_key IS NOT DISTINCT FROM g.group_key AND r.stage_set = s.stage_set
GROUP BY g.group_key, s.stage_set;

-- report_stage_values: one row per (group, stage set, stage, distinct duration) over selected
-- io whose stage duration is known: the distribution the statistics, the histogram and the
-- CDF below read, as value counts. Percentiles come from it by rank (nearest rank: the value
-- at position ceil(q * count) counted from the smallest, as quantile_disc picks it), never
-- from a quantile aggregate: such an aggregate keeps every duration of its group in memory
-- and cannot spill (at 100 M events one held 93 M durations, past the 2 GB limit), while this
-- GROUP BY spills and holds one row per distinct value.
--   group_key, stage_set, stage
--   dur          ns
--   n            selected io with this duration
--   upto         io of the group and stage with a duration <= dur (the rank, counted from the
--                smallest, of the last of the n equal values)
--   total        io of the group and stage with a known duration
CREATE OR REPLACE VIEW report_stage_values AS
-- counted and ranked per (group number, def_no) as two INTEGERs, named after: on the group_key
-- string the value counts and their window took 1.3-1.5 s against 0.8 s at 10 M events, 2.6-3.2
-- (two BIGINTs) against 1.7-1.9 s at 20 M; one BIGINT key is fast at 10 M and 6.1 s at 20 M;
-- the same rows each way. Counted once per cut (io_stage_cuts) and given to each definition of
-- it after: on the real high-rate capture 23 cuts for 34 definitions.
WITH groups AS (
    SELECT group_key, (row_number() OVER ())::INTEGER AS group_no
    FROM (SELECT DISTINCT group_key FROM io_selected)
), v AS (
    SELECT g.group_no, s.def_no::INTEGER AS def_no, s.dur, count(*) AS n
    FROM io_stage_durations s JOIN io_selected sel USING (io_n)
    JOIN groups g ON g.group_key IS NOT DISTINCT FROM sel.group_key   -- a NULL key is a group too
    WHERE s.dur IS NOT NULL AND s.def_no IN (SELECT cut_def_no FROM io_stage_cuts)   -- once per cut
    GROUP BY ALL
), r AS (
    SELECT group_no, def_no, dur, n,
           sum(n) OVER (PARTITION BY group_no, def_no ORDER BY dur
                        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)::BIGINT AS upto,
           sum(n) OVER (PARTITION BY group_no, def_no)::BIGINT AS total
    FROM v
)
SELECT g.group_key, d.stage_set, d.stage, r.dur, r.n, r.upto, r.total
FROM r JOIN groups g USING (group_no)
JOIN io_stage_cuts c ON c.cut_def_no = r.def_no JOIN io_stage_definitions d ON d.def_no = c.def_no;

-- stage_stats_over(VALUES), stage_histogram_over(VALUES), stage_cdf_over(VALUES): the three
-- table macros below read a relation shaped like report_stage_values (a view or table name):
-- the views report_stage_stats, report_stage_histogram and report_stage_cdf apply them to
-- report_stage_values; the report applies them to selected_stage_values, the same rows kept
-- once for its selection (sql/report/selection.sql), instead of computing the distinct durations again
-- for each of the three (1.3 M distinct values on a 108 k-I/O real capture: 4.7 s -> 2.6 s).

-- report_stage_stats: one row per (group, stage set, stage) over selected io whose stage
-- duration is known. Percentiles are of that stage alone (they do not add up).
--   group_key, stage_set, stage, seq, parent, direction   (see stage_definitions)
--   count                 io with a known duration
--   mean_ns, min_ns, max_ns
--   p10_ns p50_ns p70_ns p80_ns p90_ns p95_ns p99_ns p999_ns   (nearest-rank, ns)
--   p9999_ns              p99.99 when count >= 10000, else NULL
--   stddev_ns             sample standard deviation of the durations (ns; n - 1 in the
--                         denominator, from exact integer sums); NULL when count < 2
-- A percentile q = k / 10000 is the smallest duration whose upto reaches ceil(q * total),
-- i.e. upto * 10000 >= k * total: integers, no rounding of q * total.
CREATE OR REPLACE MACRO stage_stats_over(values_rel) AS TABLE
WITH a AS (
    SELECT group_key, stage_set, stage, any_value(total) AS count,
           round(sum(dur::HUGEINT * n) / any_value(total))::BIGINT AS mean_ns,
           min(dur) AS min_ns, max(dur) AS max_ns,
           min(dur) FILTER (WHERE upto * 10000 >= 1000 * total) AS p10_ns,
           min(dur) FILTER (WHERE upto * 10000 >= 5000 * total) AS p50_ns,
           min(dur) FILTER (WHERE upto * 10000 >= 7000 * total) AS p70_ns,
           min(dur) FILTER (WHERE upto * 10000 >= 8000 * total) AS p80_ns,
           min(dur) FILTER (WHERE upto * 10000 >= 9000 * total) AS p90_ns,
           min(dur) FILTER (WHERE upto * 10000 >= 9500 * total) AS p95_ns,
           min(dur) FILTER (WHERE upto * 10000 >= 9900 * total) AS p99_ns,
           min(dur) FILTER (WHERE upto * 10000 >= 9990 * total) AS p999_ns,
           min(dur) FILTER (WHERE upto * 10000 >= 9999 * total) AS p9999_ns,
           CASE WHEN any_value(total) > 1 THEN
               sqrt(greatest(any_value(total) * sum(dur::HUGEINT * dur * n) - sum(dur::HUGEINT * n) ^ 2, 0)::DOUBLE
                    / (any_value(total)::DOUBLE * (any_value(total) - 1))) END AS stddev_ns
    FROM query_table(values_rel) GROUP BY group_key, stage_set, stage
)
SELECT a.group_key, a.stage_set, a.stage, d.seq, d.parent, d.direction, a.count, a.mean_ns, a.min_ns,
       a.max_ns, a.p10_ns, a.p50_ns, a.p70_ns, a.p80_ns, a.p90_ns, a.p95_ns, a.p99_ns, a.p999_ns,
       CASE WHEN a.count >= 10000 THEN a.p9999_ns END AS p9999_ns, a.stddev_ns
FROM a JOIN stage_definitions d USING (stage_set, stage);

-- report_stage_stats: stage_stats_over the report's selected stage values (report_stage_values).
CREATE OR REPLACE VIEW report_stage_stats AS FROM stage_stats_over('report_stage_values');

-- stage_percentiles_over(VALUES, PER_MILLION): one row per (group, stage set, stage, chosen
-- percentile): the report's --percentiles. VALUES is shaped like report_stage_values;
-- PER_MILLION a list of the percentiles as integers per million (p99.9 = 999000), so that
-- the rank test stays in integers as in stage_stats_over.
--   group_key, stage_set, stage
--   per_million   the percentile (per million)
--   dur_ns        its duration (nearest rank, ns): the smallest dur with upto * 10^6 >= per_million * total
CREATE OR REPLACE MACRO stage_percentiles_over(values_rel, per_million) AS TABLE
SELECT v.group_key, v.stage_set, v.stage, q.k AS per_million,
       min(v.dur) FILTER (WHERE v.upto * 1000000 >= q.k * v.total) AS dur_ns
FROM query_table(values_rel) v CROSS JOIN (SELECT unnest(per_million)::BIGINT AS k) q
GROUP BY ALL;

-- report_stage_histogram: one row per (group, stage set, stage, log2 bucket), bcc style.
--   group_key, stage_set, stage, seq
--   bucket      k: durations in [2^k, 2^(k+1)) microseconds (k = -1: below 1 us,
--               negative durations, possible for offset-based stages, in bucket -2)
--   lo_ns, hi_ns  bucket bounds (ns)
--   count       io in the bucket
CREATE OR REPLACE MACRO stage_histogram_over(values_rel) AS TABLE
WITH q AS (
    SELECT group_key, stage_set, stage, n,
           CASE WHEN dur < 0 THEN -2 WHEN dur < 1000 THEN -1
                ELSE floor(log2(dur / 1000.0))::INTEGER END AS bucket
    FROM query_table(values_rel)
), b AS (
    SELECT group_key, stage_set, stage, bucket, sum(n)::BIGINT AS count FROM q GROUP BY ALL
)
SELECT b.group_key, b.stage_set, b.stage, d.seq, b.bucket,
       CASE WHEN bucket = -2 THEN NULL WHEN bucket = -1 THEN 0 ELSE (1000 * 2 ^ bucket)::BIGINT END AS lo_ns,
       CASE WHEN bucket = -2 THEN 0 WHEN bucket = -1 THEN 1000 ELSE (1000 * 2 ^ (bucket + 1))::BIGINT END AS hi_ns,
       b.count
FROM b JOIN stage_definitions d USING (stage_set, stage);

-- report_stage_histogram: stage_histogram_over the report's selected stage values.
CREATE OR REPLACE VIEW report_stage_histogram AS FROM stage_histogram_over('report_stage_values');

-- report_stage_cdf: one row per (group, stage set, stage, percent 1..100): the points of
-- each stage's cumulative distribution, for plotting.
--   group_key, stage_set, stage, seq
--   pct        1..100 (percent of io at or below dur_ns)
--   dur_ns     that percentile (nearest-rank, ns)
-- Each distinct duration holds the percents whose rank ceil(pct * total / 100) falls in its
-- run of equal values (upto - n, upto]: pct from 100 * (upto - n) // total + 1 to
-- 100 * upto // total; every percent lands on exactly one duration.
CREATE OR REPLACE MACRO stage_cdf_over(values_rel) AS TABLE
WITH p AS (
    SELECT group_key, stage_set, stage, dur,
           unnest(range(100 * (upto - n) // total + 1, 100 * upto // total + 1)) AS pct
    FROM query_table(values_rel)
)
SELECT p.group_key, p.stage_set, p.stage, d.seq, p.pct, p.dur AS dur_ns
FROM p JOIN stage_definitions d USING (stage_set, stage);

-- report_stage_cdf: stage_cdf_over the report's selected stage values.
CREATE OR REPLACE VIEW report_stage_cdf AS FROM stage_cdf_over('report_stage_values');

-- report_inflight_input: the selected io as intervals for inflight_bins: per transport queue,
-- nvme_setup_cmd .. nvme_complete_rq, bins of report_timeseries.
CREATE OR REPLACE VIEW report_inflight_input AS
SELECT queue_key AS resource, i_setup_ts AS s, i_complete_rq_ts AS e, size_bytes, w.start_ts AS t0,
       greatest(w.dur // 100, 1000000) AS bin_ns
FROM io_selected, report_window w WHERE i_setup_ts IS NOT NULL AND i_complete_rq_ts IS NOT NULL;

-- report_timeseries: one row per (queue, time bin) over the selected io: throughput and
-- in-flight commands (nvme_setup_cmd .. nvme_complete_rq) over time. About 100 bins.
--   queue        io.queue_key ('<initiator host>/c<ctrl_id>/q<qid>'), or 'all'
--   bin          bin number from the start of report_window
--   bin_start_ns offset of the bin from report_window.start_ts (ns)
--   bin_ns       bin width (ns)
--   completions  io completing in the bin;  bytes  their bytes
--   iops, mb_s   completions and bytes per second in the bin (MB = 10^6 bytes), times
--                sampling_run.scale on a sampled capture
--   inflight_avg time-averaged commands outstanding in the bin (scaled likewise)
CREATE OR REPLACE VIEW report_timeseries AS
WITH w AS (
    SELECT any_value(bin_ns) AS bin_ns FROM report_inflight_input
), done AS (
    SELECT resource, (e - t0) // bin_ns AS bin, count(*) AS completions, sum(size_bytes) AS bytes
    FROM report_inflight_input GROUP BY ALL
), q AS (
    SELECT b.resource AS queue, b.bin, w.bin_ns, coalesce(d.completions, 0) AS completions,
           coalesce(d.bytes, 0)::BIGINT AS bytes, b.busy_ns * 1.0 / w.bin_ns AS inflight_avg
    FROM inflight_bins('report_inflight_input') b CROSS JOIN w
    LEFT JOIN done d ON d.resource = b.resource AND d.bin = b.bin
    WHERE b.spanning > 0
), t AS (
    SELECT queue, bin, bin_ns, completions, bytes, inflight_avg FROM q
    UNION ALL
    SELECT 'all', bin, any_value(bin_ns), sum(completions)::BIGINT, sum(bytes)::BIGINT, sum(inflight_avg)
    FROM q GROUP BY bin
)
SELECT queue, bin, bin * bin_ns AS bin_start_ns, bin_ns, completions, bytes,
       completions * 1e9 / bin_ns * sr.scale AS iops, bytes * 1e3 / bin_ns * sr.scale AS mb_s,
       inflight_avg * sr.scale AS inflight_avg
FROM t, sampling_run sr;

-- report_clock: one row (none when no command pair was matched): the report's clock line.
-- One host pair: its clock_offset row. Several: no single offset (offset_ns, drift_ppm,
-- t0_ns NULL), the largest uncertainty, and a method naming how many pairs there are (each
-- is a row of clock_offset, the report's clock_pairs).
--   offset_ns, uncertainty_ns, drift_ppm, t0_ns, method   as in clock_offset
--   host_pairs   (initiator, target) host pairs with an offset
CREATE OR REPLACE VIEW report_clock AS
SELECT CASE WHEN count(*) = 1 THEN any_value(offset_ns) END AS offset_ns,
       max(uncertainty_ns) AS uncertainty_ns,
       CASE WHEN count(*) = 1 THEN any_value(drift_ppm) END AS drift_ppm,
       CASE WHEN count(*) = 1 THEN any_value(t0_ns) END AS t0_ns,
       CASE WHEN count(*) = 1 THEN any_value(method)
            ELSE count(*) || ' host pairs, one offset each (clock_pairs); report times are on '
                 || (SELECT any_value(reference_host) FROM initiator_clock) || '''s clock' END AS method,
       count(*) AS host_pairs
FROM clock_offset HAVING count(*) > 0;
