-- requires: core/hosts
-- input: run_hosts, raw_<system>  the run's host folders and event files (sql/views.py)

-- Sampled captures (capture/README.md, "Capture at real rates"): `ntscope-capture sample=N`
-- records on each host only the commands whose 16-bit command id has the bits of a mask
-- zero (kernel filter '!(cid & mask)'), the same commands on both hosts. Since 0.2 the mask
-- is the generation counter's low log2(N) bits (bits 12-15: every Nth use of each tag; N > 16
-- adds the tag's low bits); older captures used the tag's low bits (mask N - 1), whose share
-- varies with how blk-mq walks its tags. host.json "sample.mask" says which. Latencies and
-- percentiles are those of the sampled commands; counts, IOPS and MB/s must be scaled. The
-- scale is measured, not assumed: host.json io_counters holds the NVMe namespaces'
-- /sys/block/<dev>/stat I/O counts at the start and end of the recording, so scale = I/Os
-- the device completed / I/O submits traced (N only when a host has no counters).

-- sampling: one row per host: how it was sampled and the scale its counts take.
--   host, role     host directory name and its role (see hosts)
--   sample_n       N of sample=N (1: every command)
--   sample_mask    a command is in the sample when cid & sample_mask = 0: host.json
--                  sample.mask (0x7000 for N = 8; N - 1 in captures before 0.2)
--   sample_source  'host.json' (capture wrote "sample"), 'inferred' (no host.json sample, at
--                  least 64 I/O submits, and the OR of their cids has zero bits a rule
--                  explains: the generation counter's low bits from bit 12 up while a higher
--                  counter bit is set (N = 2^k; N = 16 and up, all four zero, is not inferred:
--                  made-up traces look like that), else the tag's low bits (N = lowest set
--                  bit, the rule before 0.2)), or 'none'
--   rule           the rule as text ('cid & 0x7000 == 0'), NULL when not sampled
--   block_events   'all' or 'none' (host.json block_events; NULL if not recorded)
--   filters_applied  host.json filters.applied: false when the kernel refused a filter
--   io_submits     I/O commands submitted in the trace (qid > 0: nvme_setup_cmd on the
--                  initiator, nvmet_req_init on the target)
--   device_ios     initiator: I/Os (reads + writes + discards + flushes) the traced NVMe
--                  namespaces completed during the recording (host.json io_counters); NULL
--                  on the target or without counters
--   host_scale     device_ios / io_submits when sampled and both are known, else sample_n
CREATE OR REPLACE TABLE sampling AS
WITH submits AS (
    SELECT host, count(*) AS io_submits, bit_or(cid) AS cid_or,
           list(DISTINCT disk) FILTER (WHERE disk IS NOT NULL AND disk <> '') AS disks
    FROM (SELECT host, cid, disk FROM raw_nvme WHERE event = 'nvme_setup_cmd' AND qid > 0
          UNION ALL
          SELECT host, cid, NULL FROM raw_nvmet WHERE event = 'nvmet_req_init' AND qid > 0)
    GROUP BY host
), counters AS (
    SELECT r.host,
           sum(TRY_CAST(ioc->>'$.end.reads' AS BIGINT) - TRY_CAST(ioc->>'$.start.reads' AS BIGINT)
               + TRY_CAST(ioc->>'$.end.writes' AS BIGINT) - TRY_CAST(ioc->>'$.start.writes' AS BIGINT)
               + TRY_CAST(ioc->>'$.end.discards' AS BIGINT) - TRY_CAST(ioc->>'$.start.discards' AS BIGINT)
               + TRY_CAST(ioc->>'$.end.flushes' AS BIGINT) - TRY_CAST(ioc->>'$.start.flushes' AS BIGINT)) AS device_ios
    FROM run_hosts r
    CROSS JOIN unnest(CAST(r.host_json->'$.io_counters' AS JSON[])) AS u(ioc)
    JOIN submits s ON s.host = r.host
    WHERE list_contains(s.disks, ioc->>'$.dev')
    GROUP BY r.host
), declared AS (
    SELECT r.host, h.role,
           TRY_CAST(r.host_json->>'$.sample.n' AS BIGINT) AS json_n,
           TRY_CAST(r.host_json->>'$.sample.mask' AS BIGINT) AS json_mask,
           r.host_json->>'$.sample.rule' AS json_rule,
           r.host_json->>'$.block_events' AS block_events,
           TRY_CAST(r.host_json->>'$.filters.applied' AS BOOLEAN) AS filters_applied,
           coalesce(s.io_submits, 0) AS io_submits, s.cid_or
    FROM run_hosts r JOIN hosts h USING (host) LEFT JOIN submits s USING (host)
), bits AS (
    -- the OR of the traced ids, split: generation counter (bits 12-15) and tag (bits 0-11)
    SELECT *, io_submits >= 64 AND cid_or IS NOT NULL AS enough,
           cid_or >> 12 AS gen_or, cid_or & 4095 AS tag_or
    FROM declared
), inferred AS (
    SELECT *,
           CASE WHEN NOT enough THEN 0
                WHEN (gen_or & 1) = 0 AND gen_or > 0 THEN ((gen_or & -gen_or) - 1) << 12
                WHEN tag_or > 0 AND (tag_or & 1) = 0 THEN (tag_or & -tag_or) - 1
                ELSE 0 END AS inferred_mask
    FROM bits
), chosen AS (
    SELECT *,
           CASE WHEN json_n IS NOT NULL THEN json_n
                WHEN inferred_mask > 0 THEN 1 << bit_count(inferred_mask)
                ELSE 1 END AS sample_n,
           CASE WHEN json_n IS NOT NULL THEN coalesce(json_mask, json_n - 1)
                ELSE inferred_mask END AS sample_mask,
           CASE WHEN json_n IS NOT NULL THEN 'host.json'
                WHEN inferred_mask > 0 THEN 'inferred'
                ELSE 'none' END AS sample_source
    FROM inferred
)
SELECT c.host, c.role, c.sample_n, c.sample_mask, c.sample_source,
       CASE WHEN c.sample_n <= 1 THEN NULL
            WHEN c.json_n IS NOT NULL AND c.json_rule IS NOT NULL THEN c.json_rule
            WHEN c.sample_mask < 4096 THEN 'cid & ' || c.sample_mask || ' == 0'
            ELSE printf('cid & 0x%x == 0', c.sample_mask) END AS rule,
       c.block_events, c.filters_applied, c.io_submits,
       CASE WHEN c.role = 'initiator' THEN k.device_ios END AS device_ios,
       CASE WHEN c.sample_n > 1 AND c.role = 'initiator' AND k.device_ios > 0 AND c.io_submits > 0
            THEN k.device_ios::DOUBLE / c.io_submits
            ELSE c.sample_n::DOUBLE END AS host_scale
FROM chosen c LEFT JOIN counters k USING (host);

-- sampling_run: one row for the run: the factor reports multiply counts, IOPS and MB/s by.
--   sampled        true when any host traced a sample
--   sample_n       the largest N of the hosts
--   rule           the hosts' rule ('cid & 0x7000 == 0'); several, comma-joined, when they differ
--   consistent     every host used the same N and mask (else the join loses commands: see
--                  sampling_stats)
--   scale          initiator device I/Os / initiator I/O submits (summed over initiators)
--                  when the counters exist, else sample_n; 1 when not sampled
--   scale_source   'io_counters', 'nominal' (N: no counters) or 'not sampled'
--   meaning        one sentence for the report header
CREATE OR REPLACE VIEW sampling_run AS
WITH ini AS (
    SELECT sum(device_ios) AS device_ios, sum(io_submits) AS io_submits
    FROM sampling WHERE role = 'initiator' AND device_ios > 0
), s AS (
    SELECT max(sample_n) AS sample_n,
           count(DISTINCT sample_n) = 1 AND count(DISTINCT sample_mask) = 1 AS consistent,
           string_agg(DISTINCT rule, ', ' ORDER BY rule) AS rule
    FROM sampling
)
SELECT s.sample_n > 1 AS sampled, s.sample_n, s.rule, s.consistent,
       CASE WHEN s.sample_n <= 1 THEN 1.0
            WHEN ini.device_ios > 0 AND ini.io_submits > 0 THEN ini.device_ios::DOUBLE / ini.io_submits
            ELSE s.sample_n::DOUBLE END AS scale,
       CASE WHEN s.sample_n <= 1 THEN 'not sampled'
            WHEN ini.device_ios > 0 AND ini.io_submits > 0 THEN 'io_counters'
            ELSE 'nominal' END AS scale_source,
       CASE WHEN s.sample_n <= 1 THEN 'every command traced'
            ELSE 'sampled: 1 in ' || s.sample_n || ' commands traced (' || s.rule || '); counts, IOPS and MB/s x '
                 || round(CASE WHEN ini.device_ios > 0 AND ini.io_submits > 0 THEN ini.device_ios::DOUBLE / ini.io_submits
                               ELSE s.sample_n END, 2)
                 || CASE WHEN ini.device_ios > 0 AND ini.io_submits > 0
                         THEN ' (' || ini.device_ios || ' device I/Os / ' || ini.io_submits || ' traced)'
                         ELSE ' (nominal: no io_counters in host.json)' END
                 || '; latencies are those of the sampled commands' END AS meaning
FROM s, ini;

-- outside_sample(h, c): true when host h traced a sample and command id c is not in it.
-- Sampled initiators record every nvme_complete_rq on purpose (6.1 reports an R2T write's
-- transfer tag as its cid, so the completion is paired through the block request): the
-- completions of commands outside the sample are not commands of the run.
CREATE OR REPLACE MACRO outside_sample(h, c) AS
    coalesce((SELECT s.sample_n > 1 AND (c & s.sample_mask) <> 0 FROM sampling s WHERE s.host = h), false);

-- sampling_stats: rows for pipeline_stats (same columns), none when nothing was sampled.
--   seq, name, severity, value, meaning   as pipeline_stats
--   names: 'sampled', 'sample_scale', 'sample_mismatch' (error: hosts used different N or
--   rules),
--   'sample_rule_violations:<host>' (error: traced ids outside the rule: a filter was not
--   applied), 'filters_not_applied:<host>' (error: host.json says the kernel refused a
--   filter), 'sample_without_block:<host>' (warning). The initiator completions outside
--   the sample are counted after nvme_commands (sql/core/sample_check.sql).
CREATE OR REPLACE VIEW sampling_stats AS
WITH filtered AS (
    -- events of the kernel-filtered types: every traced cid must follow the rule
    SELECT e.host, count(*) FILTER (WHERE (e.cid & s.sample_mask) <> 0) AS violations, count(*) AS events
    FROM (SELECT host, 'nvme:' || event AS ev, cid FROM raw_nvme
          UNION ALL SELECT host, 'nvmet:' || event, cid FROM raw_nvmet
          UNION ALL SELECT host, 'nvme_tcp:' || event, cid FROM raw_nvme_tcp
          UNION ALL SELECT host, 'nvmet_tcp:' || event, cid FROM raw_nvmet_tcp) e
    JOIN sampling s ON s.host = e.host AND s.sample_n > 1
    JOIN run_hosts r ON r.host = e.host
    WHERE CASE WHEN s.sample_source = 'host.json'
               THEN list_contains(json_extract_string(r.host_json, '$.sample.filtered_events[*]'), e.ev)
               ELSE e.ev IN ('nvme:nvme_setup_cmd', 'nvmet:nvmet_req_init', 'nvmet:nvmet_req_complete') END
    GROUP BY e.host
), refused AS (
    SELECT host, string_agg(json_extract_string(e, '$.event'), ' ') AS events
    FROM (SELECT host, unnest(CAST(host_json->'$.filters.errors' AS JSON[])) AS e
          FROM run_hosts WHERE TRY_CAST(host_json->>'$.filters.applied' AS BOOLEAN) = false)
    GROUP BY host
), rows AS (
    SELECT 2 AS seq, 'sampled' AS name, 'info' AS severity,
           to_json('1 in ' || sample_n || ' (' || rule || ')') AS value, meaning
    FROM sampling_run WHERE sampled
    UNION ALL
    SELECT 3, 'sample_scale', CASE WHEN scale_source = 'nominal' THEN 'warning' ELSE 'info' END, to_json(round(scale, 4)),
           CASE WHEN scale_source = 'io_counters'
                THEN 'counts, IOPS and MB/s are multiplied by this: the NVMe namespaces'' completed I/Os (host.json io_counters) over the traced I/O submits'
                ELSE 'counts, IOPS and MB/s are multiplied by N: host.json has no io_counters (older capture), so the difference between the traced fraction and 1/N is not corrected' END
    FROM sampling_run WHERE sampled
    UNION ALL
    SELECT 3, 'sample_mismatch', 'error',
           to_json(string_agg(host || '=' || sample_n || CASE WHEN sample_n > 1 THEN ' (' || rule || ')' ELSE '' END, ',' ORDER BY host)),
           'the hosts traced different samples: commands of one host''s sample that the other host lacks show as unmatched; fix: record both hosts with the same sample=N and the same ntscope-capture'
    FROM sampling HAVING count(DISTINCT sample_n) > 1 OR count(DISTINCT sample_mask) > 1
    UNION ALL
    SELECT 3, 'sample_rule_violations:' || host, 'error', to_json(violations),
           'traced command ids outside the sample rule (of ' || events || ' filtered events): the kernel did not apply the sample filter to some event; the sample is not the same on both hosts (fix: check host.json filters, record again)'
    FROM filtered WHERE violations > 0
    UNION ALL
    SELECT 3, 'filters_not_applied:' || host, 'error', to_json(events),
           'host.json: the kernel refused the filter of these events, which were recorded unfiltered; fix: record again with a kernel that accepts it (capture/README.md)'
    FROM refused
    UNION ALL
    SELECT 4, 'sample_without_block:' || host, 'warning', to_json(block_events),
           'recorded with block=none: no block events, so no end_to_end, host_queue, host_completion or target_device stages'
    FROM sampling WHERE sample_n > 1 AND block_events = 'none'
)
SELECT seq, name, severity, value, meaning FROM rows;
