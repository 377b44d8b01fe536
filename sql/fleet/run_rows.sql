-- requires: core/hosts, core/join, core/stages, core/pipeline_stats, recovery/outages, fleet/histogram

-- One run's rows of the fleet tables (fleet/tables.py: runs, io, stage_hist, verdicts), from the
-- views `ntscope analyze` reads: the same numbers. Loaded by `ntscope fleet ingest` on the
-- run's connection after its analysis. Wall-clock times: the run's trace times (ns, the
-- reference initiator's clock) placed on the initiator's host.json start_utc (the capture
-- wrote it just before the trace began: the second it started, to within a second), 1970-01-01
-- when host.json lacks it.

-- fleet_run: one row: the run's identity and its wall-clock anchor.
--   run_id        '<run name>@<earliest host start_utc, ISO 8601>' (host.json run and
--                 start_utc; the folder name without host.json): the same run ingested again
--                 has the same id, and replaces its rows
--   run_name      host.json run, else the folder
--   start_utc     the earliest host's capture start (TIMESTAMP, UTC; NULL: not recorded)
--   anchor_utc, origin_ts   the reference initiator's (initiator_clock) capture start and
--                 first trace time (ns): the same instant on the two clocks
CREATE OR REPLACE TABLE fleet_run AS
WITH h AS (
    SELECT r.host, coalesce(r.host_json->>'run', regexp_extract(r.dir, '([^/]+)/[^/]+$', 1)) AS run_name,
           TRY_CAST(r.host_json->>'start_utc' AS TIMESTAMP) AS start_utc
    FROM run_hosts r
), ref AS (
    SELECT o.host, o.first_ts FROM hosts o JOIN initiator_clock c USING (host)
    WHERE o.role = 'initiator' AND coalesce(c.shift_ns, 0) = 0 ORDER BY o.host LIMIT 1
)
SELECT min(h.run_name) || '@' || coalesce(strftime(min(h.start_utc), '%Y-%m-%dT%H:%M:%SZ'), 'unknown') AS run_id,
       min(h.run_name) AS run_name, min(h.start_utc) AS start_utc,
       (SELECT h2.start_utc FROM h h2 JOIN ref USING (host)) AS anchor_utc,
       (SELECT first_ts FROM ref) AS origin_ts
FROM h;

-- fleet_wall(ns): a reference-clock time (ns) as a UTC TIMESTAMP (fleet_run's anchor)
CREATE OR REPLACE MACRO fleet_wall(ns) AS
    (SELECT coalesce(anchor_utc, TIMESTAMP '1970-01-01') + to_microseconds(((ns - coalesce(origin_ts, 0)) / 1000)::BIGINT)
     FROM fleet_run);

-- fleet_runs_rows: one row per host of the run (the fleet table runs).
--   run_id, run_name, host, role, hostname, kernel_release, mode (analysis_mode),
--   trace_clock, start_utc, end_utc (TIMESTAMP), duration_s, events, lost_events,
--   ios (an initiator's I/Os; NULL on a target), outages (an initiator's controller outages),
--   capture (host.json's capture settings as JSON text: events, filters, sample, probes,
--   block_events, buffer_kb_per_cpu, recovery, tenants, net_flows, nvme_acks; NULL without
--   host.json), ntscope_version (the capture's)
CREATE OR REPLACE VIEW fleet_runs_rows AS
SELECT f.run_id, f.run_name, h.host, h.role, r.host_json->>'hostname' AS hostname,
       r.host_json->>'kernel_release' AS kernel_release, (SELECT mode FROM analysis_mode) AS mode,
       h.trace_clock, TRY_CAST(r.host_json->>'start_utc' AS TIMESTAMP) AS start_utc,
       TRY_CAST(r.host_json->>'end_utc' AS TIMESTAMP) AS end_utc,
       TRY_CAST(r.host_json->>'duration_s' AS DOUBLE) AS duration_s, h.events, h.lost_events,
       CASE WHEN h.role = 'initiator' THEN (SELECT count(*) FROM io WHERE io.initiator_host = h.host) END AS ios,
       CASE WHEN h.role = 'initiator' THEN (SELECT count(*) FROM controller_outages o WHERE o.host = h.host) END AS outages,
       CASE WHEN r.host_json IS NOT NULL THEN json_object(
           'events', r.host_json->'events', 'block_events', r.host_json->'block_events',
           'filters', r.host_json->'filters', 'sample', r.host_json->'sample', 'probes', r.host_json->'probes',
           'buffer_kb_per_cpu', r.host_json->'buffer_kb_per_cpu', 'recovery', r.host_json->'recovery',
           'tenants', r.host_json->'tenants'->'enabled', 'net_flows', r.host_json->'net_flows',
           'nvme_acks', r.host_json->'nvme_acks')::VARCHAR END AS capture,
       r.host_json->>'ntscope_version' AS ntscope_version
FROM hosts h JOIN run_hosts r USING (host) CROSS JOIN fleet_run f
ORDER BY h.host;

-- fleet_io_rows: one row per I/O of the run (the fleet table io): io's columns a fleet asks
-- by, with its wall-clock submission.
--   run_id, day (DATE of submit_utc), submit_utc (TIMESTAMP), initiator_host, target_host,
--   tenant, class, cgroup, namespace, path, disk, io_type, size_bytes, qid, cpu, comm,
--   match_state, status, attempts
--   end_to_end_ns   its end_to_end (ns) in the run's primary stage set
--   io_id           io.io_id (unique within the run)
CREATE OR REPLACE VIEW fleet_io_rows AS
WITH e2e AS (
    SELECT d.io_n, d.dur FROM io_stage_durations d JOIN io_stage_definitions s USING (def_no)
    WHERE s.stage = 'end_to_end' AND s.stage_set = (SELECT stage_set FROM primary_stage_set)
)
SELECT f.run_id, fleet_wall(coalesce(i.first_setup_ts, i.i_setup_ts))::DATE AS day,
       fleet_wall(coalesce(i.first_setup_ts, i.i_setup_ts)) AS submit_utc,
       i.initiator_host, i.target_host, i.tenant, i.class, i.cgroup, i.namespace, i.path, i.disk,
       i.io_type, i.size_bytes, i.qid, i.cpu, i.comm, i.match_state, i.status, i.attempts,
       e.dur AS end_to_end_ns, i.io_id
FROM io i LEFT JOIN e2e e USING (io_n) CROSS JOIN fleet_run f;

-- fleet_stage_hist_rows: one row per (host pair, tenant, class, stage set, stage, minute,
-- bucket) of the run (the fleet table stage_hist): how many of its I/Os' stage durations fell
-- in that bucket (fleet/histogram.sql).
--   run_id, day (DATE of minute), initiator_host, target_host, tenant, class, stage_set, stage,
--   minute (TIMESTAMP, the minute of the I/O's submission), bucket, count
CREATE OR REPLACE VIEW fleet_stage_hist_rows AS
SELECT f.run_id, fleet_wall(coalesce(i.first_setup_ts, i.i_setup_ts))::DATE AS day,
       i.initiator_host, i.target_host, i.tenant, i.class, s.stage_set, s.stage,
       date_trunc('minute', fleet_wall(coalesce(i.first_setup_ts, i.i_setup_ts))) AS minute,
       fleet_bucket(d.dur) AS bucket, count(*) AS count
FROM io_stage_durations d JOIN io_stage_definitions s USING (def_no) JOIN io i USING (io_n) CROSS JOIN fleet_run f
WHERE d.dur IS NOT NULL
GROUP BY ALL;

-- fleet_verdict_rows: one row per finding of the run's analysis a fleet ranks runs by (the
-- fleet table verdicts).
--   run_id, kind ('pipeline': a pipeline_stats warning or error; 'outage': a controller
--   outage), subject (the stat's name, or '<host>/nvme<N>'), severity ('warning', 'error'),
--   value (the stat's value, or the outage in seconds, as text), detail (its meaning)
CREATE OR REPLACE VIEW fleet_verdict_rows AS
SELECT f.run_id, 'pipeline' AS kind, p.name AS subject, p.severity, p.value::VARCHAR AS value, p.meaning AS detail
FROM pipeline_stats p CROSS JOIN fleet_run f WHERE p.severity IN ('warning', 'error')
UNION ALL
SELECT f.run_id, 'outage', o.host || '/nvme' || coalesce(o.ctrl_id::VARCHAR, '?'), 'error',
       printf('%.3f', o.outage_ns / 1e9),
       printf('%s: no answer for %.3f s, %d I/Os held', o.kind, o.outage_ns / 1e9, o.ios_held)
FROM controller_outages o CROSS JOIN fleet_run f;
