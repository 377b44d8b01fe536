-- requires: core/stages, report/io_selected, report/reports, slo/objectives
-- loaded: with every run

-- Service-level objectives on the selected I/O (analyze --slo 'read,4k: p99 <= 2ms').
-- The report CLI fills slo_objectives (reports/slo/objectives.py parses the text); these
-- views judge them: over the whole selection, per second, and by the worst I/Os.

-- slo_io: one row per (objective, selected I/O it applies to) with the judged duration.
--   slo_id, io_id, io_n
--   dur         the stage's duration for this I/O (ns)
--   second      whole seconds from the first selected I/O to this one's submit (0, 1, ...)
CREATE OR REPLACE VIEW slo_io AS
SELECT o.slo_id, i.io_id, i.io_n, s.dur,
       ((i.i_setup_ts - (SELECT start_ts FROM report_window)) // 1000000000)::BIGINT AS second
FROM slo_objectives o
JOIN io_selected i ON (o.io_type IS NULL OR i.io_type = o.io_type)
                  AND (o.size_lo IS NULL OR i.size_bytes BETWEEN o.size_lo AND o.size_hi)
                  AND (o.comm IS NULL OR i.comm = o.comm)
JOIN io_stage_definitions d ON d.stage_set = o.stage_set AND d.stage = o.stage
JOIN io_stage_durations s ON s.io_n = i.io_n AND s.def_no = d.def_no
WHERE s.dur IS NOT NULL;

-- slo_value: one row per (objective, second or the whole run): the statistic's value.
--   slo_id
--   second      NULL for the whole selection, else the second (see slo_io)
--   ios         I/Os judged
--   value_ns    the statistic (ns)
CREATE OR REPLACE VIEW slo_value AS
WITH r AS (
    -- nearest rank, as quantile_disc (and so report_stage_stats) computes it: the value at
    -- position ceil(q * n), counted from the smallest (the quantile differs per objective,
    -- and quantile_disc wants a constant)
    SELECT x.slo_id, x.second, x.dur,
           row_number() OVER (PARTITION BY x.slo_id ORDER BY x.dur) AS k_all,
           count(*) OVER (PARTITION BY x.slo_id) AS n_all,
           row_number() OVER (PARTITION BY x.slo_id, x.second ORDER BY x.dur) AS k_s,
           count(*) OVER (PARTITION BY x.slo_id, x.second) AS n_s
    FROM slo_io x
), g AS (
    SELECT r.slo_id, NULL::BIGINT AS second, count(*) AS ios, avg(r.dur) AS mean_ns, max(r.dur) AS max_ns,
           max(r.dur) FILTER (WHERE r.k_all = greatest(ceil(o.quantile * r.n_all), 1)) AS q_ns
    FROM r JOIN slo_objectives o USING (slo_id) GROUP BY r.slo_id
    UNION ALL
    SELECT r.slo_id, r.second, count(*), avg(r.dur), max(r.dur),
           max(r.dur) FILTER (WHERE r.k_s = greatest(ceil(o.quantile * r.n_s), 1))
    FROM r JOIN slo_objectives o USING (slo_id) GROUP BY r.slo_id, r.second
)
SELECT g.slo_id, g.second, g.ios,
       CASE o.statistic WHEN 'mean' THEN round(g.mean_ns)::BIGINT WHEN 'max' THEN g.max_ns ELSE g.q_ns END AS value_ns
FROM g JOIN slo_objectives o USING (slo_id);

-- slo_results: one row per objective: met or missed over the whole selection, and how
-- many seconds missed it.
--   slo_id, text, stage_set, stage, statistic, limit_ns   as in slo_objectives
--   ios              I/Os judged (0: the objective matched nothing)
--   value_ns         the statistic over the whole selection (ns; NULL when ios = 0)
--   met              value_ns <= limit_ns (NULL when ios = 0)
--   seconds, seconds_missed   seconds with judged I/Os, and of those the ones over the limit
--   worst_second, worst_value_ns   the second with the highest value, and that value
CREATE OR REPLACE VIEW slo_results AS
WITH per_s AS (
    SELECT slo_id, count(*) AS seconds,
           count(*) FILTER (WHERE v.value_ns > o.limit_ns) AS seconds_missed,
           arg_max(v.second, (v.value_ns, -v.second)) AS worst_second, max(v.value_ns) AS worst_value_ns  -- ties: the first
    FROM slo_value v JOIN slo_objectives o USING (slo_id) WHERE v.second IS NOT NULL GROUP BY slo_id
)
SELECT o.slo_id, o.text, o.stage_set, o.stage, o.statistic, o.limit_ns,
       coalesce(a.ios, 0) AS ios, a.value_ns, a.value_ns <= o.limit_ns AS met,
       coalesce(p.seconds, 0) AS seconds, coalesce(p.seconds_missed, 0) AS seconds_missed,
       p.worst_second, p.worst_value_ns
FROM slo_objectives o
LEFT JOIN slo_value a ON a.slo_id = o.slo_id AND a.second IS NULL
LEFT JOIN per_s p ON p.slo_id = o.slo_id;

-- slo_per_second: one row per (objective, second): the statistic in that second.
--   slo_id, second, ios, value_ns (ns), met (value_ns <= limit_ns)
CREATE OR REPLACE VIEW slo_per_second AS
SELECT v.slo_id, v.second, v.ios, v.value_ns, v.value_ns <= o.limit_ns AS met
FROM slo_value v JOIN slo_objectives o USING (slo_id) WHERE v.second IS NOT NULL;

-- slo_worst_ios: the 10 slowest I/Os of each objective (by the judged duration), with
-- what a user needs to find them in the timeline and see where their time went.
--   slo_id, rank (1 = slowest), io_id
--   dur_ns          the judged duration (ns)
--   at_s            seconds from the first selected I/O to its submit
--   io_type, size_bytes, queue_key ('<host>/c<ctrl>/q<qid>'), cpu, comm, pid
--   stages          its top-level stages of the objective's set, in order: [{stage, dur_ns}]
CREATE OR REPLACE VIEW slo_worst_ios AS
WITH w AS (
    SELECT slo_id, io_id, io_n, dur, row_number() OVER (PARTITION BY slo_id ORDER BY dur DESC, io_id) AS rank
    FROM slo_io
    QUALIFY rank <= 10
)
SELECT w.slo_id, w.rank, w.io_id, w.dur AS dur_ns,
       (i.i_setup_ts - (SELECT start_ts FROM report_window)) / 1e9 AS at_s,
       i.io_type, i.size_bytes, i.queue_key,
       i.cpu, i.comm, i.pid,
       (SELECT list({'stage': d.stage, 'dur_ns': s.dur} ORDER BY d.seq)
        FROM io_stage_durations s JOIN io_stage_definitions d USING (def_no)
        JOIN slo_objectives o ON o.slo_id = w.slo_id
        WHERE s.io_n = w.io_n AND d.stage_set = o.stage_set AND d.parent IS NULL AND d.stage <> 'end_to_end') AS stages
FROM w JOIN io_selected i ON i.io_id = w.io_id;
