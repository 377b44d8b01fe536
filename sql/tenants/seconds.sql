-- requires: core/join, core/stages, core/tenants, report/io_selected, tenants/class_objectives

-- Per tenant and per class, second by second (TrackIops' per-tenant metrics, NeSt's classes):
-- what each got, the stage its time went to, and for each class whether its objectives held.
-- A second counts the I/Os that completed in it (as fio's and iostat's rates do), from the
-- run's first I/O (io_time_origin), over the report's selection (io_selected). An I/O's
-- latency is end_to_end: block_bio_queue to block_rq_complete, else nvme_setup_cmd to
-- nvme_complete_rq (the stock set's bounds, measured on the initiator).

-- tenant_io: one row per selected io with its second and latency.
--   io_n, tenant, class, cgroup, file, namespace, target_device_key, queue_key, io_type, size_bytes
--   second       completion second from the run's first I/O (0..)
--   latency_ns   end_to_end (ns)
CREATE OR REPLACE VIEW tenant_io AS
SELECT s.io_n, coalesce(s.tenant, '?') AS tenant, s.class, s.cgroup, s.file, s.namespace, s.target_device_key,
       s.queue_key, s.io_type, s.size_bytes,
       ((coalesce(s.i_rq_complete_ts, s.i_complete_rq_ts) - o.t0_ns) // 1000000000)::BIGINT AS second,
       coalesce(s.i_rq_complete_ts, s.i_complete_rq_ts) - coalesce(s.i_bio_queue_ts, s.i_setup_ts) AS latency_ns
FROM io_selected s CROSS JOIN io_time_origin o
WHERE coalesce(s.i_rq_complete_ts, s.i_complete_rq_ts) IS NOT NULL;

-- tenant_run_seconds: one row: the whole seconds the run's I/O covers (a rate over a second
-- the run only partly covers is not a rate: its first and last are partial).
--   first_full, last_full   the first and last full second (NULL when none)
CREATE OR REPLACE VIEW tenant_run_seconds AS
SELECT CASE WHEN max(second) - min(second) >= 2 THEN min(second) + 1 END AS first_full,
       CASE WHEN max(second) - min(second) >= 2 THEN max(second) - 1 END AS last_full
FROM tenant_io;

-- owner_io: tenant_io once per owner kind: 'tenant' (every io) and 'file' (the ios of a file).
--   kind, name (the tenant or the file), class (the io's), and tenant_io's other columns
CREATE OR REPLACE VIEW owner_io AS
SELECT 'tenant' AS kind, tenant AS name, * FROM tenant_io
UNION ALL
SELECT 'file', file, * FROM tenant_io WHERE file IS NOT NULL;

-- owner_top_stage: one row per (kind, name, second): the primary set's top-level stage that
-- took the most of that second's I/O time (sum over the I/Os of their durations).
--   kind, name, second, top_stage, top_stage_share (its part of the top-level stages' sum, 0..1)
CREATE OR REPLACE VIEW owner_top_stage AS
WITH d AS (
    SELECT t.kind, t.name, t.second, def.stage, sum(s.dur) AS ns
    FROM owner_io t
    JOIN io_stage_durations s ON s.io_n = t.io_n
    JOIN io_stage_definitions def ON def.def_no = s.def_no
    WHERE def.stage_set = (SELECT stage_set FROM primary_stage_set) AND def.parent IS NULL
      AND def.stage <> 'end_to_end' AND s.dur IS NOT NULL
    GROUP BY ALL
)
SELECT kind, name, second, arg_max(stage, (ns, stage)) AS top_stage, max(ns) / nullif(sum(ns), 0) AS top_stage_share
FROM d GROUP BY ALL;

-- owner_seconds: one row per (kind, name, second) with I/O.
--   kind, name, class (the first io's; a file may serve several), second
--   full_second  false: the run's first or last second, partial
--   ios, iops    I/Os completed (= I/Os per second)
--   bytes, mb_s  data bytes, 10^6 bytes per second
--   mean_us, p99_us, max_us   end_to_end latency (us; p99 nearest rank)
--   top_stage, top_stage_share   owner_top_stage
CREATE OR REPLACE VIEW owner_seconds AS
SELECT t.kind, t.name, any_value(t.class) AS class, t.second,
       t.second BETWEEN coalesce(r.first_full, -1) AND coalesce(r.last_full, -2) AS full_second,
       count(*) AS ios, count(*)::DOUBLE AS iops, sum(t.size_bytes)::BIGINT AS bytes,
       sum(t.size_bytes) / 1e6 AS mb_s,
       avg(t.latency_ns) / 1e3 AS mean_us, quantile_disc(t.latency_ns, 0.99) / 1e3 AS p99_us,
       max(t.latency_ns) / 1e3 AS max_us,
       any_value(ts.top_stage) AS top_stage, any_value(ts.top_stage_share) AS top_stage_share
FROM owner_io t CROSS JOIN tenant_run_seconds r
LEFT JOIN owner_top_stage ts ON ts.kind = t.kind AND ts.name = t.name AND ts.second = t.second
GROUP BY t.kind, t.name, t.second, r.first_full, r.last_full;

-- tenant_seconds: owner_seconds of the tenants (tenant_seconds.parquet), name as tenant.
CREATE OR REPLACE VIEW tenant_seconds AS
SELECT * EXCLUDE (kind, name), name AS tenant FROM owner_seconds WHERE kind = 'tenant';

-- file_seconds: owner_seconds of the files (file_seconds.parquet), name as file.
CREATE OR REPLACE VIEW file_seconds AS
SELECT * EXCLUDE (kind, name), name AS file FROM owner_seconds WHERE kind = 'file';

-- owner_summary: one row per (kind, name) over the selection (tenants.json tenants and files).
--   kind, name, class, cgroups (their paths, sorted), tenants, files, namespaces, target_devices
--   ios, bytes, seconds (with I/O), mean_us, p99_us
--   iops, mb_s    over the run's full seconds (NULL when it has none)
CREATE OR REPLACE VIEW owner_summary AS
SELECT t.kind, t.name, any_value(t.class) AS class,
       coalesce(list_sort(list_distinct(list(t.cgroup) FILTER (WHERE t.cgroup IS NOT NULL))), []) AS cgroups,
       coalesce(list_sort(list_distinct(list(t.tenant))), []) AS tenants,
       coalesce(list_sort(list_distinct(list(t.file) FILTER (WHERE t.file IS NOT NULL))), []) AS files,
       coalesce(list_sort(list_distinct(list(t.namespace) FILTER (WHERE t.namespace IS NOT NULL))), []) AS namespaces,
       coalesce(list_sort(list_distinct(list(t.target_device_key) FILTER (WHERE t.target_device_key IS NOT NULL))), []) AS target_devices,
       count(*) AS ios, sum(t.size_bytes)::BIGINT AS bytes, count(DISTINCT t.second) AS seconds,
       avg(t.latency_ns) / 1e3 AS mean_us, quantile_disc(t.latency_ns, 0.99) / 1e3 AS p99_us,
       count(*) FILTER (WHERE t.second BETWEEN r.first_full AND r.last_full)
           / nullif(r.last_full - r.first_full + 1, 0)::DOUBLE AS iops,
       sum(t.size_bytes) FILTER (WHERE t.second BETWEEN r.first_full AND r.last_full)
           / nullif(r.last_full - r.first_full + 1, 0) / 1e6 AS mb_s
FROM owner_io t CROSS JOIN tenant_run_seconds r
GROUP BY t.kind, t.name, r.first_full, r.last_full;

-- class_objective_seconds: one row per (class objective, second the class had I/O, or a full
-- second it had none): the second's value and whether it met the objective.
--   class, objective_n, text, metric, second, ios
--   value        latency: the statistic (us); iops: I/Os; mb_s: 10^6 bytes
--   bound        latency: limit (us); iops / mb_s: the minimum
--   met          value <= bound (latency) or >= bound (rates); NULL for a rate in a partial second
CREATE OR REPLACE VIEW class_objective_seconds AS
WITH lat AS (
    SELECT o.class, o.objective_n, t.second, s.dur,
           row_number() OVER (PARTITION BY o.class, o.objective_n, t.second ORDER BY s.dur) AS k,
           count(*) OVER (PARTITION BY o.class, o.objective_n, t.second) AS n
    FROM class_objectives o
    JOIN io_stage_definitions def ON def.stage_set = o.stage_set AND def.stage = o.stage
    JOIN tenant_io t ON t.class = o.class
    JOIN io_stage_durations s ON s.io_n = t.io_n AND s.def_no = def.def_no
    WHERE o.metric = 'latency' AND s.dur IS NOT NULL
), lat_v AS (
    SELECT l.class, l.objective_n, l.second, count(*) AS ios,
           CASE any_value(o.statistic) WHEN 'mean' THEN avg(l.dur) WHEN 'max' THEN max(l.dur)
                ELSE max(l.dur) FILTER (WHERE l.k = greatest(ceil(o.quantile * l.n), 1)) END / 1e3 AS value,
           any_value(o.limit_ns) / 1e3 AS bound
    FROM lat l JOIN class_objectives o USING (class, objective_n)
    GROUP BY l.class, l.objective_n, l.second, o.quantile
), secs AS (
    -- every full second, so that a class with no I/O in one misses a rate objective there
    SELECT unnest(range(r.first_full, r.last_full + 1)) AS second FROM tenant_run_seconds r WHERE r.first_full IS NOT NULL
), rate_v AS (
    SELECT o.class, o.objective_n, s.second, count(t.io_n) AS ios,
           CASE o.metric WHEN 'iops' THEN count(t.io_n)::DOUBLE ELSE coalesce(sum(t.size_bytes), 0) / 1e6 END AS value,
           o.min_rate AS bound
    FROM class_objectives o CROSS JOIN secs s
    LEFT JOIN tenant_io t ON t.class = o.class AND t.second = s.second
    WHERE o.metric IN ('iops', 'mb_s')
    GROUP BY o.class, o.objective_n, s.second, o.metric, o.min_rate
)
SELECT o.class, o.objective_n, o.text, o.metric, v.second, v.ios, v.value, v.bound, v.value <= v.bound AS met
FROM lat_v v JOIN class_objectives o USING (class, objective_n)
UNION ALL
SELECT o.class, o.objective_n, o.text, o.metric, v.second, v.ios, v.value, v.bound, v.value >= v.bound
FROM rate_v v JOIN class_objectives o USING (class, objective_n);

-- class_seconds: one row per (class, second) a class objective was judged in
-- (class_seconds.parquet): met when every objective judged there was.
--   class, second, ios (the class's I/Os completed), objectives (judged), missed (how many
--   missed), met, missed_texts (the missed objectives' texts)
CREATE OR REPLACE VIEW class_seconds AS
SELECT class, second, max(ios) AS ios, count(*) AS objectives, count(*) FILTER (WHERE NOT met) AS missed,
       bool_and(met) AS met, list(text ORDER BY objective_n) FILTER (WHERE NOT met) AS missed_texts
FROM class_objective_seconds WHERE met IS NOT NULL
GROUP BY ALL;

-- class_blame: one row per (class second that missed, other traffic that shared its path in
-- that second): whose I/O went through the same transport queue or the same target device
-- (the shared queues and the shared drive), the classes' interference lifted to classes.
-- Ranked by bytes: on a shared drive and link the big transfers are what a small I/O waits behind.
--   class, second           the missed second
--   other                   the other traffic: its class, else 'tenant:<name>' (no class)
--   shared                  'queue' (a transport queue of the class's I/O that second) or
--                           'target_device' (its target's backing device)
--   ios, bytes              the other traffic's I/Os and bytes completed there that second
--   share                   its part of all the other traffic's bytes on that path that second
--   blame_rank              1 = the most bytes, per (class, second, shared)
CREATE OR REPLACE VIEW class_blame AS
WITH missed AS (SELECT class, second FROM class_seconds WHERE NOT met),
mine AS (
    SELECT DISTINCT m.class, m.second, 'queue' AS shared, t.queue_key AS path
    FROM missed m JOIN tenant_io t ON t.class = m.class AND t.second = m.second
    UNION
    SELECT DISTINCT m.class, m.second, 'target_device', t.target_device_key
    FROM missed m JOIN tenant_io t ON t.class = m.class AND t.second = m.second WHERE t.target_device_key IS NOT NULL
), other AS (
    SELECT y.class, y.second, y.shared, coalesce(t.class, 'tenant:' || t.tenant) AS other,
           count(*) AS ios, sum(t.size_bytes)::BIGINT AS bytes
    FROM mine y JOIN tenant_io t ON t.second = y.second
         AND (CASE y.shared WHEN 'queue' THEN t.queue_key ELSE t.target_device_key END) = y.path
    WHERE t.class IS DISTINCT FROM y.class
    GROUP BY ALL
)
SELECT class, second, other, shared, ios, bytes,
       bytes / nullif(sum(bytes) OVER (PARTITION BY class, second, shared), 0) AS share,
       row_number() OVER (PARTITION BY class, second, shared ORDER BY bytes DESC, other) AS blame_rank
FROM other;

-- class_limits: one row per (class, cgroup of its tenants) with the cgroup's io.* settings
-- next to what the class got over the run: the configured limits beside the received rate.
--   class, tenant, host, cgroup, io_max, io_weight, io_latency, io_prio_class   (cgroup_names)
--   ios, iops, mb_s    the cgroup's I/O over the selection (rates over the run's full seconds)
CREATE OR REPLACE VIEW class_limits AS
SELECT t.class, t.tenant, ct.host, t.cgroup, n.io_max, n.io_weight, n.io_latency, n.io_prio_class,
       count(*) AS ios,
       count(*) FILTER (WHERE t.second BETWEEN r.first_full AND r.last_full)
           / nullif(r.last_full - r.first_full + 1, 0)::DOUBLE AS iops,
       sum(t.size_bytes) FILTER (WHERE t.second BETWEEN r.first_full AND r.last_full)
           / nullif(r.last_full - r.first_full + 1, 0) / 1e6 AS mb_s
FROM tenant_io t CROSS JOIN tenant_run_seconds r
JOIN io_selected s ON s.io_n = t.io_n
JOIN cgroup_tenants ct ON ct.host = s.initiator_host AND ct.cgroup_id = s.cgroup_id
LEFT JOIN cgroup_names n ON n.host = ct.host AND n.cgroup_id = ct.cgroup_id
GROUP BY t.class, t.tenant, ct.host, t.cgroup, n.io_max, n.io_weight, n.io_latency, n.io_prio_class, r.first_full, r.last_full;

-- namespace_devices: one row per (namespace, target device) the selection's I/O went to: which
-- namespaces sit on one drive (several namespaces on one target_device share it).
--   namespace        '<subsystem NQN>/ns<nsid>' ('?' unknown)
--   target_device    the target's backing device ('?' unmatched: no target trace)
--   namespaces_on_device   how many namespaces the selection reached on that device
--   ios, bytes
CREATE OR REPLACE VIEW namespace_devices AS
SELECT coalesce(namespace, '?') AS namespace, coalesce(target_device_key, '?') AS target_device,
       count(DISTINCT coalesce(namespace, '?')) OVER (PARTITION BY coalesce(target_device_key, '?')) AS namespaces_on_device,
       ios, bytes
FROM (SELECT namespace, target_device_key, count(*) AS ios, sum(size_bytes)::BIGINT AS bytes FROM tenant_io GROUP BY ALL);

-- tenant_attribution: one row per initiator host: whether its I/Os' cgroups were recorded
-- (capture key tenants=, host.json tenants), and why not.
--   host, asked (tenants=1 at capture), cgroup_root, probe (the probe event, NULL: not placed)
--   why_not          host.json tenants.why_not (NULL: nothing missing)
--   cgroups_named    cgroups host.json or cgroup_mkdir named
--   ios, ios_with_cgroup   the host's I/Os, and those whose cgroup is known
CREATE OR REPLACE VIEW tenant_attribution AS
SELECT h.host, coalesce(json_type(r.host_json, '$.tenants') = 'OBJECT', false) AS asked,
       r.host_json->>'$.tenants.cgroup_root' AS cgroup_root, r.host_json->>'$.tenants.probe.event' AS probe,
       r.host_json->>'$.tenants.why_not' AS why_not,
       (SELECT count(*) FROM cgroup_names n WHERE n.host = h.host) AS cgroups_named,
       (SELECT count(*) FROM io WHERE io.initiator_host = h.host) AS ios,
       (SELECT count(*) FROM io WHERE io.initiator_host = h.host AND io.cgroup_id IS NOT NULL) AS ios_with_cgroup
FROM hosts h JOIN run_hosts r USING (host) WHERE h.role = 'initiator';

-- cgroup_io: one row per (host, cgroup) of cgroup_tenants: its tenant, class and I/Os in the selection.
--   host, cgroup_id, cgroup, tenant, class, ios
CREATE OR REPLACE VIEW cgroup_io AS
SELECT ct.host, ct.cgroup_id, ct.cgroup, ct.tenant, ct.class, count(s.io_n) AS ios
FROM cgroup_tenants ct LEFT JOIN io_selected s ON s.initiator_host = ct.host AND s.cgroup_id = ct.cgroup_id
GROUP BY ALL;

-- class_objective_results: one row per class objective over the selection's seconds.
--   class, objective_n, text, metric, bound (as in class_objective_seconds)
--   seconds, seconds_missed, missed_seconds (the seconds that missed, in order)
--   worst_second, worst_value   the second farthest from the bound, and its value
CREATE OR REPLACE VIEW class_objective_results AS
SELECT o.class, o.objective_n, o.text, o.metric, any_value(s.bound) AS bound,
       count(s.second) AS seconds, count(s.second) FILTER (WHERE NOT s.met) AS seconds_missed,
       coalesce(list(s.second ORDER BY s.second) FILTER (WHERE NOT s.met), []) AS missed_seconds,
       CASE WHEN o.metric = 'latency' THEN arg_max(s.second, s.value) ELSE arg_min(s.second, s.value) END AS worst_second,
       CASE WHEN o.metric = 'latency' THEN max(s.value) ELSE min(s.value) END AS worst_value
FROM class_objectives o LEFT JOIN class_objective_seconds s ON s.class = o.class AND s.objective_n = o.objective_n AND s.met IS NOT NULL
GROUP BY o.class, o.objective_n, o.text, o.metric;
