-- requires: core/sampling, core/events, core/commands

-- Is a sample fair? On a sampled initiator with block events (the default block=all) the
-- block layer saw every request, sampled or not, so the sampled commands' block latency can
-- be set beside everyone's. A fair rule (the generation counter: capture/README.md, "Why not
-- the tag") leaves the two alike; a rule whose choice follows the load (a filter on other
-- fields, a tag rule on a kernel that hands tags out by queue depth) makes them differ, and
-- the report's latencies would not be those of all commands.

-- sample_block_check: one row per sampled initiator host with linked block requests.
--   host                 host directory name
--   sampled_requests     complete read/write block requests linked to a traced nvme_setup_cmd
--   all_requests         complete read/write block requests on the same devices (every one)
--   sampled_p50_ns, all_p50_ns   median block_rq_issue -> block_rq_complete (ns)
--   sampled_p90_ns, all_p90_ns   90th percentile of the same (ns)
--   p50_ratio            sampled_p50_ns / all_p50_ns (1: alike)
--   fair                 false when at least 100 requests were sampled and p50_ratio is
--                        outside 0.8 .. 1.25; NULL below 100 (too few to judge)
CREATE OR REPLACE VIEW sample_block_check AS
WITH sampled_hosts AS (
    SELECT host FROM sampling WHERE sample_n > 1 AND role = 'initiator'
), linked AS (
    SELECT DISTINCT b.req_key, b.host, b.dev, b.complete_ts - b.issue_ts AS dur
    FROM host_block_link_rows l
    JOIN block_requests b ON b.host = l.host AND b.dev = l.dev AND b.sector = l.sector AND b.issue_ts = l.issue_ts
    WHERE l.host IN (SELECT host FROM sampled_hosts)
      AND b.state = 'complete' AND b.io_type IN ('read', 'write')
), devs AS (
    SELECT DISTINCT host, dev FROM linked
), everyone AS (
    SELECT b.host, b.complete_ts - b.issue_ts AS dur
    FROM block_requests b JOIN devs USING (host, dev)
    WHERE b.state = 'complete' AND b.io_type IN ('read', 'write')
), stats AS (
    SELECT 'sampled' AS who, host, dur FROM linked
    UNION ALL SELECT 'all', host, dur FROM everyone
), q AS (
    SELECT who, host, n, p[1] AS p50, p[2] AS p90 FROM (
        SELECT who, host, count(*) AS n, quantile_disc(dur, [0.5, 0.9]) AS p FROM stats GROUP BY who, host)
), r AS (
    SELECT s.host, s.n AS sampled_requests, a.n AS all_requests,
           s.p50 AS sampled_p50_ns, a.p50 AS all_p50_ns, s.p90 AS sampled_p90_ns, a.p90 AS all_p90_ns,
           CASE WHEN a.p50 > 0 THEN s.p50::DOUBLE / a.p50 END AS p50_ratio
    FROM q s JOIN q a ON a.host = s.host AND s.who = 'sampled' AND a.who = 'all'
)
SELECT *, CASE WHEN sampled_requests >= 100 THEN p50_ratio BETWEEN 0.8 AND 1.25 END AS fair FROM r;

-- sample_outside_completions: one row per sampled initiator: its nvme_complete_rq events that
-- are not commands of the sample. A sampled capture records every completion on purpose (on
-- 6.1 an R2T write's completion reports its transfer tag as cid, so completions are paired
-- through the block request, not by cid: nvme_commands).
--   host
--   by_rule    completions whose cid is outside the sample rule
--   by_block   completions whose cid passed the rule but whose block request was issued
--              inside the trace with no sampled submit to claim it (nvme_commands'
--              unsampled_in_trace: the transfer tag of an unsampled R2T write, on 6.1)
CREATE OR REPLACE VIEW sample_outside_completions AS
WITH used AS (
    SELECT DISTINCT host, complete_ts, complete_cpu FROM nvme_commands WHERE complete_ts IS NOT NULL
)
SELECT e.host,
       count(*) FILTER (WHERE (e.cid & s.sample_mask) <> 0) AS by_rule,
       count(*) FILTER (WHERE (e.cid & s.sample_mask) = 0 AND u.host IS NULL) AS by_block
FROM events e
JOIN sampling s ON s.host = e.host AND s.sample_n > 1 AND s.role = 'initiator'
LEFT JOIN used u ON u.host = e.host AND u.complete_ts = e.ts AND u.complete_cpu = e.cpu
WHERE e.event = 'nvme_complete_rq'
GROUP BY e.host;
