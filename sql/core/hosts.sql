-- requires: none
-- input: run_hosts, raw_<system>  the run's host folders and event files (sql/views.py)

-- host_event_counts: one row per (host, system, event) present in the run.
--   host    host directory name;  system  trace system;  event  event name
--   events  number of events;  first_ts / last_ts  first and last event ts (ns, that host's clock)
CREATE OR REPLACE VIEW host_event_counts AS
WITH u AS (
    SELECT host, 'nvme' AS system, event, ts FROM raw_nvme
    UNION ALL SELECT host, 'nvmet', event, ts FROM raw_nvmet
    UNION ALL SELECT host, 'block', event, ts FROM raw_block
    UNION ALL SELECT host, 'nvme_tcp', event, ts FROM raw_nvme_tcp
    UNION ALL SELECT host, 'nvmet_tcp', event, ts FROM raw_nvmet_tcp
    UNION ALL SELECT host, 'ntscope_nvme_tcp', event, ts FROM raw_ntscope_nvme_tcp
    UNION ALL SELECT host, 'ntscope_nvmet_tcp', event, ts FROM raw_ntscope_nvmet_tcp
)
SELECT host, system, event, count(*)::BIGINT AS events, min(ts) AS first_ts, max(ts) AS last_ts
FROM u GROUP BY ALL;

-- host_event_types: one row per (host, system, event) the host's trace can hold: every event
-- type it recorded (metadata.json lists them, those that never fired included), else those with
-- events. A table.
--   host, system, event
CREATE OR REPLACE TABLE host_event_types AS
SELECT host, e->>'system' AS system, e->>'event' AS event
FROM (SELECT host, unnest(from_json(metadata_json->'events', '["JSON"]')) AS e FROM run_hosts)
WHERE e->>'system' IS NOT NULL
UNION
SELECT host, system, event FROM host_event_counts;

-- hosts: one row per host of the run.
--   host         host directory name
--   role         'initiator' or 'target' (or 'unknown')
--   role_source  'host.json' when capture wrote the role, else 'inferred' (nvme/nvme_tcp
--                events => initiator, nvmet/nvmet_tcp => target)
--   events       events of all systems read on this host
--   first_ts, last_ts  trace window (ns, this host's clock)
--   trace_clock  trace clock from metadata.json or host.json (NULL if neither says)
--   lost_events  events lost (metadata.json lost_events_per_cpu summed over CPUs, else
--                host.json overrun + commit_overrun + dropped; NULL if neither says), plus
--                probe_misses
--   digest       NVMe/TCP digests of this host's connections: 'none', 'header', 'data' or
--                'header,data' (host.json nvme_tcp_digest, from the capture key digest=;
--                no kernel shows them in sysfs); NULL when not recorded
--   probe_misses hits of the capture's probes the kernel did not record (host.json
--                probes.misses, from kprobe_profile: a probe that fired while another probe's
--                handler ran on that CPU); NULL without probes
CREATE OR REPLACE TABLE hosts AS
WITH c AS (
    SELECT host,
           sum(events)::BIGINT AS events, min(first_ts) AS first_ts, max(last_ts) AS last_ts,
           bool_or(system IN ('nvme', 'nvme_tcp', 'ntscope_nvme_tcp')) AS has_host_nvme,
           bool_or(system IN ('nvmet', 'nvmet_tcp', 'ntscope_nvmet_tcp')) AS has_target_nvme
    FROM host_event_counts GROUP BY host
), lost AS (
    -- metadata.json (convert): lost_events_per_cpu {"<cpu>": {"lost_events": n, ...}}
    SELECT host,
           coalesce(
               (SELECT sum(TRY_CAST(json_extract_string(metadata_json, '$.lost_events_per_cpu."' || k || '".lost_events') AS BIGINT))
                FROM (SELECT unnest(json_keys(metadata_json, '$.lost_events_per_cpu')) AS k)),
               -- host.json (capture): {"overrun", "commit_overrun", "dropped"} from trace-cmd --stat
               TRY_CAST(host_json->>'$.lost_events.overrun' AS BIGINT)
               + TRY_CAST(host_json->>'$.lost_events.commit_overrun' AS BIGINT)
               + TRY_CAST(host_json->>'$.lost_events.dropped' AS BIGINT)) AS ring_lost,
           TRY_CAST(host_json->>'$.probes.misses' AS BIGINT) AS probe_misses
    FROM run_hosts
)
SELECT r.host,
       coalesce(r.host_json->>'role',
                CASE WHEN c.has_host_nvme THEN 'initiator'
                     WHEN c.has_target_nvme THEN 'target' ELSE 'unknown' END) AS role,
       CASE WHEN r.host_json->>'role' IS NOT NULL THEN 'host.json' ELSE 'inferred' END AS role_source,
       coalesce(c.events, 0) AS events, c.first_ts, c.last_ts,
       coalesce(r.metadata_json->>'trace_clock', r.host_json->>'trace_clock') AS trace_clock,
       CASE WHEN lost.ring_lost IS NOT NULL OR lost.probe_misses IS NOT NULL
            THEN coalesce(lost.ring_lost, 0) + coalesce(lost.probe_misses, 0) END::BIGINT AS lost_events,
       CASE WHEN json_type(r.host_json, '$.nvme_tcp_digest') = 'OBJECT' THEN
            coalesce(nullif(concat_ws(',',
                CASE WHEN TRY_CAST(r.host_json->>'$.nvme_tcp_digest.header' AS BOOLEAN) THEN 'header' END,
                CASE WHEN TRY_CAST(r.host_json->>'$.nvme_tcp_digest.data' AS BOOLEAN) THEN 'data' END), ''), 'none')
       END AS digest,
       lost.probe_misses::BIGINT AS probe_misses
FROM run_hosts r LEFT JOIN c USING (host) LEFT JOIN lost USING (host);

-- converter_losses: one row per kind of record the converter could not turn into event rows,
-- per host, from its metadata.json (convert). The report's numbers do not hold these records:
-- pipeline_stats names each (data_loss:*) and `analyze --strict` exits 1.
--   host    host directory name
--   kind    'skipped_event_type' (an event type whose format cannot be written as a table),
--           'unknown_event_id' (records whose event id has no format in the trace),
--           'damaged_page' (pages skipped as damaged, convert --salvage), 'missing_bytes' (event
--           data beyond the end of a truncated file), 'short_record' (records shorter than their
--           format), 'skipped_buffer' (an instance that was not converted)
--   detail  system:event, the event id or the instance name; '' for a host's total
--   amount  records (pages for damaged_page; bytes for missing_bytes and skipped_buffer)
--   reason  the converter's reason, or what the kind means
CREATE OR REPLACE VIEW converter_losses AS
WITH m AS (SELECT host, metadata_json AS j FROM run_hosts WHERE metadata_json IS NOT NULL),
types AS (SELECT host, unnest(json_extract(j, '$.skipped_event_types[*]')) AS t FROM m),
ids AS (SELECT host, j, unnest(json_keys(j, '$.unknown_event_ids')) AS k FROM m),
cpus AS (SELECT host, unnest(json_extract(j, '$.cpus[*]')) AS c FROM m),
buffers AS (SELECT host, unnest(json_extract(j, '$.skipped_buffers[*]')) AS b FROM m),
l AS (
    SELECT host, 'skipped_event_type' AS kind, (t->>'system') || ':' || (t->>'event') AS detail,
           TRY_CAST(t->>'records' AS BIGINT) AS amount, t->>'reason' AS reason
    FROM types
    UNION ALL
    SELECT host, 'unknown_event_id', k, TRY_CAST(j->'unknown_event_ids'->>k AS BIGINT),
           'records whose event id has no format in the trace'
    FROM ids
    UNION ALL
    SELECT host, 'damaged_page', '', sum(coalesce(json_array_length(c, '$.damaged_pages'), 0))::BIGINT,
           'pages skipped as damaged (convert --salvage)'
    FROM cpus GROUP BY host
    UNION ALL
    SELECT host, 'missing_bytes', '', sum(coalesce(TRY_CAST(c->>'missing_bytes' AS BIGINT), 0))::BIGINT,
           'event data beyond the end of the file (a truncated trace)'
    FROM cpus GROUP BY host
    UNION ALL
    SELECT host, 'short_record', '', TRY_CAST(j->>'short_records' AS BIGINT),
           'records shorter than their event format'
    FROM m
    UNION ALL
    SELECT host, 'skipped_buffer', b->>'name', TRY_CAST(b->>'bytes' AS BIGINT), b->>'reason'
    FROM buffers
)
SELECT host, kind, detail, amount, reason FROM l
WHERE amount > 0 OR kind IN ('skipped_event_type', 'skipped_buffer');

-- input_checks: one row per inconsistency in what the run directory holds (none for a
-- good run). The hosts must be different traces, recorded together for one run, each in
-- a role its events agree with. Every row is an error in pipeline_stats, and compare
-- gives no verdict on such a run.
--   check     'same_trace' (two hosts hold the same trace file), 'role_unknown' (host.json
--             names a role that is neither initiator nor target), 'role_contradicts_events'
--             (host.json's role has none of its events, only the other role's),
--             'different_runs' (host.json names different runs), 'not_recorded_together'
--             (host.json capture windows do not overlap)
--   host      the host, or 'A,B' for a pair / every host concerned
--   value     the offending value (text)
--   meaning   what is wrong and the fix
CREATE OR REPLACE VIEW input_checks AS
WITH ev AS (
    SELECT host, bool_or(system IN ('nvme', 'nvme_tcp')) AS has_initiator_events,
           bool_or(system IN ('nvmet', 'nvmet_tcp')) AS has_target_events
    FROM host_event_counts GROUP BY host
), h AS (
    SELECT r.host, r.host_json->>'role' AS json_role,
           r.metadata_json->'source'->>'sha256' AS sha256,
           r.host_json->>'run' AS run_name,
           TRY_CAST(r.host_json->>'start_utc' AS TIMESTAMP) AS start_utc,
           TRY_CAST(r.host_json->>'end_utc' AS TIMESTAMP) AS end_utc,
           coalesce(ev.has_initiator_events, false) AS has_initiator_events,
           coalesce(ev.has_target_events, false) AS has_target_events
    FROM run_hosts r LEFT JOIN ev USING (host)
)
SELECT 'same_trace' AS "check", a.host || ',' || b.host AS host, 'sha256 ' || a.sha256 AS value,
       'hosts ' || a.host || ' and ' || b.host || ' hold the same trace file: one host''s trace.dat was copied twice; '
       || 'fix: copy each host''s own trace.dat into its folder' AS meaning
FROM h a JOIN h b ON a.host < b.host AND a.sha256 = b.sha256
UNION ALL
SELECT 'role_unknown', host, json_role,
       'host.json of ' || host || ' says role ''' || json_role || ''', which is neither initiator nor target; '
       || 'fix: set "role" to "initiator" or "target" in ' || host || '/host.json (capture writes it)'
FROM h WHERE json_role IS NOT NULL AND json_role NOT IN ('initiator', 'target')
UNION ALL
SELECT 'role_contradicts_events', host, json_role,
       'host.json of ' || host || ' says ' || json_role || ', but its trace has only '
       || CASE json_role WHEN 'initiator' THEN 'target (nvmet)' ELSE 'initiator (nvme)' END
       || ' NVMe events; fix: the host folders or their host.json were swapped: put each trace with its own host.json'
FROM h
WHERE (json_role = 'initiator' AND NOT has_initiator_events AND has_target_events)
   OR (json_role = 'target' AND NOT has_target_events AND has_initiator_events)
UNION ALL
SELECT 'different_runs', string_agg(host || '=' || run_name, ',' ORDER BY host),
       string_agg(DISTINCT run_name, ',' ORDER BY run_name),
       'host.json files name different runs: the hosts were recorded for different runs; '
       || 'fix: put the traces of one run together (just capture ... run=NAME on each host)'
FROM h WHERE run_name IS NOT NULL
HAVING count(DISTINCT run_name) > 1
UNION ALL
SELECT 'not_recorded_together', string_agg(host, ',' ORDER BY host),
       'latest start ' || max(start_utc) || ' after earliest end ' || min(end_utc),
       'the hosts'' capture windows (host.json start_utc..end_utc) do not overlap: they were not recorded '
       || 'during the same workload; fix: record both hosts while the workload runs'
FROM h WHERE start_utc IS NOT NULL AND end_utc IS NOT NULL
HAVING count(*) > 1 AND max(start_utc) > min(end_utc) + INTERVAL 1 MINUTE;

-- input_error_stats: input_checks as pipeline_stats names them, one row per check: what
-- compare reads of a run's pipeline_stats (its input_errors), without the rest of it. A view.
--   name      'input_error:<check>:<host>' (the pipeline_stats name)
--   value, meaning   as in input_checks
CREATE OR REPLACE VIEW input_error_stats AS
SELECT 'input_error:' || "check" || ':' || host AS name, value, meaning FROM input_checks;

-- host_numbers: one row per host: a small integer standing for its name in packed keys.
--   host     host directory name
--   host_n   0.. in name order
CREATE OR REPLACE TABLE host_numbers AS
SELECT host, (row_number() OVER (ORDER BY host) - 1)::BIGINT AS host_n FROM hosts;

-- packed_key(h, a, b, c): four integers as one BIGINT (h in 0..32767 in the top bits, a, b, c
-- in 0..65535 below), NULL when a part is NULL or out of range. The equality key of ASOF
-- joins on (host, controller, queue, command id) and the like: DuckDB's ASOF join on one
-- integer key took half the time of the same join on the parts with the host's name (0.41 ->
-- 0.20 s on a real patched capture). The parts are u16 in the kernel's events (qid, cid,
-- cntlid) or small (a controller instance, a CPU, host_numbers.host_n): a part out of range
-- comes from a damaged event, which then matches nothing instead of another command.
CREATE OR REPLACE MACRO packed_key(h, a, b, c) AS
    CASE WHEN h BETWEEN 0 AND 32767 AND a BETWEEN 0 AND 65535 AND b BETWEEN 0 AND 65535
              AND c BETWEEN 0 AND 65535
         THEN (h::BIGINT << 48) | (a::BIGINT << 32) | (b::BIGINT << 16) | c::BIGINT END;

-- lifetime_key(h, a, b, c): the key a command's lifetime is paired in, (host number,
-- controller, queue, cid), as one BIGINT: h in 0..4095 in the top bits, then a, b, c in 17 bits
-- each, 0..65535 or 65536 for NULL (a column the trace lacks: such events pair among themselves,
-- as on the parts); NULL when a part is out of range (a damaged event). Unlike packed_key it
-- keeps NULL parts apart from one another, so a window may partition on it alone.
CREATE OR REPLACE MACRO lifetime_key(h, a, b, c) AS
    CASE WHEN h BETWEEN 0 AND 4095 AND coalesce(a, 0) BETWEEN 0 AND 65535
              AND coalesce(b, 0) BETWEEN 0 AND 65535 AND coalesce(c, 0) BETWEEN 0 AND 65535
         THEN (h::BIGINT << 51) | (coalesce(a, 65536)::BIGINT << 34) | (coalesce(b, 65536)::BIGINT << 17)
              | coalesce(c, 65536)::BIGINT END;

-- block_key(dev_no, sector): a block request's key (its device's number and first sector) as
-- one BIGINT: dev_no in 0..65535 in the top bits, the sector in the 47 bits below (0..2^47 - 2,
-- 64 PiB; 2^47 - 1 stands for a NULL sector); NULL when out of range (a damaged event).
CREATE OR REPLACE MACRO block_key(dev_no, sector) AS
    CASE WHEN dev_no BETWEEN 0 AND 65535 AND coalesce(sector, 0) BETWEEN 0 AND 140737488355326
         THEN (dev_no::BIGINT << 47) | coalesce(sector, 140737488355327)::BIGINT END;
