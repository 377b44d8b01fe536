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
)
SELECT host, system, event, count(*)::BIGINT AS events, min(ts) AS first_ts, max(ts) AS last_ts
FROM u GROUP BY ALL;

-- hosts: one row per host of the run.
--   host         host directory name
--   role         'initiator' or 'target' (or 'unknown')
--   role_source  'host.json' when capture wrote the role, else 'inferred' (nvme/nvme_tcp
--                events => initiator, nvmet/nvmet_tcp => target)
--   events       events of all systems read on this host
--   first_ts, last_ts  trace window (ns, this host's clock)
--   trace_clock  trace clock from metadata.json or host.json (NULL if neither says)
--   lost_events  events lost (metadata.json lost_events_per_cpu summed over CPUs, else
--                host.json overrun + commit_overrun + dropped; NULL if neither says)
CREATE OR REPLACE VIEW hosts AS
WITH c AS (
    SELECT host,
           sum(events)::BIGINT AS events, min(first_ts) AS first_ts, max(last_ts) AS last_ts,
           bool_or(system IN ('nvme', 'nvme_tcp')) AS has_host_nvme,
           bool_or(system IN ('nvmet', 'nvmet_tcp')) AS has_target_nvme
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
               + TRY_CAST(host_json->>'$.lost_events.dropped' AS BIGINT)) AS lost_events
    FROM run_hosts
)
SELECT r.host,
       coalesce(r.host_json->>'role',
                CASE WHEN c.has_host_nvme THEN 'initiator'
                     WHEN c.has_target_nvme THEN 'target' ELSE 'unknown' END) AS role,
       CASE WHEN r.host_json->>'role' IS NOT NULL THEN 'host.json' ELSE 'inferred' END AS role_source,
       coalesce(c.events, 0) AS events, c.first_ts, c.last_ts,
       coalesce(r.metadata_json->>'trace_clock', r.host_json->>'trace_clock') AS trace_clock,
       lost.lost_events::BIGINT AS lost_events
FROM run_hosts r LEFT JOIN c USING (host) LEFT JOIN lost USING (host);
