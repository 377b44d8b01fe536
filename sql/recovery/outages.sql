-- requires: core/join, core/recovery_works
-- loaded: with every run
-- input: run_hosts, raw_workqueue  the host folders and event files (sql/views.py)

-- Errors and recovery on the initiator: when a controller stopped answering, what the driver
-- did about it and what it cost the I/O. Sources: the driver's recovery works
-- (recovery_work_functions, sql/core/recovery_works.sql) and the commands' own statuses (io_rows,
-- io_attempt_rows of sql/core/join.sql). A command that times out (or a failed keep-alive, a
-- broken connection) starts the error recovery: queues torn down, the commands in flight
-- cancelled (status 0x371) and requeued; the reconnect work then runs every reconnect delay
-- until the controller is back, and the requeued I/Os go out again. Loaded with every run:
-- compare's side facts (sql/compare/side_info.sql) count the outages.

-- recovery_runs: one row per run of a recovery work (ns, on the run's reference clock).
--   host, function, work (the work item's address: one per controller and kind)
--   queued_ts    when it was queued (NULL: before the trace); for the error recovery, when the
--                driver saw the failure
--   start_ts, end_ts   when it ran (end NULL: the trace stopped first)
CREATE OR REPLACE TABLE recovery_runs AS
WITH w AS (
    SELECT r.host, f.function, r.work, r.event, r.ts + coalesce(c.shift_ns, 0) AS ts
    FROM raw_workqueue r
    JOIN recovery_work_functions f ON f.host = r.host AND f.address = r.function
    LEFT JOIN initiator_clock c ON c.host = r.host
), s AS (SELECT * FROM w WHERE event = 'workqueue_execute_start')
SELECT s.host, s.function, s.work, q.ts AS queued_ts, s.ts AS start_ts, e.ts AS end_ts
FROM s
ASOF LEFT JOIN (SELECT host, work, ts FROM w WHERE event = 'workqueue_queue_work') q
    ON q.host = s.host AND q.work = s.work AND q.ts <= s.ts
ASOF LEFT JOIN (SELECT host, work, ts FROM w WHERE event = 'workqueue_execute_end') e
    ON e.host = s.host AND e.work = s.work AND e.ts >= s.ts;

-- controller_outages: one row per error recovery or reset of a controller: from its last answer
-- before the failure to its first answer after the reconnect (ns, reference clock).
--   host, outage_n (1.. per host in time order)
--   ctrl_id          the controller (nvmeN's N): of the commands the recovery cancelled, else
--                    of the commands held; NULL when none was in flight
--   kind             'error_recovery' or 'reset' (the work that began it)
--   detected_ts      when the driver saw the failure (the recovery queued: an I/O timeout, a
--                    failed keep-alive, a broken connection)
--   teardown_ns      how long the recovery ran (queues torn down, commands cancelled)
--   reconnect_attempts   reconnect runs until the next outage or the trace's end
--   recovered_ts     the end of the last of them (NULL: none ran)
--   last_answer_ts   the controller's last successful completion before detected_ts
--   first_answer_ts  its first successful completion after the recovery began (NULL: none
--                    before the trace stopped)
--   outage_ns        first_answer_ts - last_answer_ts: how long the controller gave no answer
--   cancelled        commands the recovery cancelled (io_attempt_rows and failed io rows
--                    completed while it ran)
--   ios_held         I/Os submitted before first_answer_ts that completed after it: the I/O
--                    that waited for the controller
--   held_ns          their time inside the outage, summed (each from the later of its first
--                    submission and last_answer_ts, to first_answer_ts)
CREATE OR REPLACE TABLE controller_outages AS
WITH starts AS (
    SELECT host, work, CASE function WHEN 'nvme_reset_ctrl_work' THEN 'reset' ELSE 'error_recovery' END AS kind,
           coalesce(queued_ts, start_ts) AS detected_ts, start_ts, end_ts,
           row_number() OVER (PARTITION BY host ORDER BY start_ts) AS outage_n,
           lead(coalesce(queued_ts, start_ts)) OVER (PARTITION BY host ORDER BY start_ts) AS next_ts
    FROM recovery_runs WHERE function IN ('nvme_tcp_error_recovery_work', 'nvme_reset_ctrl_work')
), failed AS (   -- every command that completed with an error: attempts and io rows
    SELECT initiator_host AS host, ctrl_id, i_complete_rq_ts AS ts FROM io_attempt_rows
    UNION ALL
    SELECT initiator_host, ctrl_id, i_complete_rq_ts FROM io_rows WHERE status <> 0
), cancelled AS (
    SELECT s.host, s.outage_n, count(f.ts) AS n, mode(f.ctrl_id) AS ctrl_id
    FROM starts s LEFT JOIN failed f ON f.host = s.host AND f.ts BETWEEN s.detected_ts AND coalesce(s.end_ts, s.start_ts)
    GROUP BY ALL
), reconnects AS (
    -- a reconnect belongs to the outage it follows on the same host (its work item lives in the
    -- same controller as the recovery's: of several controllers, the nearest address)
    SELECT host, outage_n, count(*) AS attempts, max(end_ts) AS recovered_ts
    FROM (SELECT s.host, s.outage_n, r.end_ts
          FROM starts s JOIN recovery_runs r ON r.host = s.host AND r.function = 'nvme_tcp_reconnect_ctrl_work'
              AND r.start_ts >= s.start_ts AND r.start_ts < coalesce(s.next_ts, 9223372036854775807)
          QUALIFY abs(r.work::HUGEINT - s.work::HUGEINT)
                  = min(abs(r.work::HUGEINT - s.work::HUGEINT)) OVER (PARTITION BY r.host, r.start_ts))
    GROUP BY ALL
), ok AS (
    SELECT initiator_host AS host, ctrl_id, i_complete_rq_ts AS ts FROM io_rows
    WHERE status = 0 AND i_complete_rq_ts IS NOT NULL
), bounds AS (
    SELECT s.*, c.n AS cancelled, c.ctrl_id, coalesce(r.attempts, 0) AS reconnect_attempts, r.recovered_ts,
           (SELECT max(o.ts) FROM ok o WHERE o.host = s.host AND o.ts < s.detected_ts
                AND (c.ctrl_id IS NULL OR o.ctrl_id = c.ctrl_id)) AS last_answer_ts,
           (SELECT min(o.ts) FROM ok o WHERE o.host = s.host AND o.ts > s.start_ts
                AND (c.ctrl_id IS NULL OR o.ctrl_id = c.ctrl_id)) AS first_answer_ts
    FROM starts s LEFT JOIN cancelled c USING (host, outage_n) LEFT JOIN reconnects r USING (host, outage_n)
)
SELECT b.host, b.outage_n, b.ctrl_id, b.kind, b.detected_ts, b.end_ts - b.start_ts AS teardown_ns,
       b.reconnect_attempts, b.recovered_ts, b.last_answer_ts, b.first_answer_ts,
       b.first_answer_ts - b.last_answer_ts AS outage_ns, b.cancelled,
       count(i.io_id) AS ios_held,
       coalesce(sum(b.first_answer_ts - greatest(i.first_setup_ts, b.last_answer_ts)), 0)::BIGINT AS held_ns
FROM bounds b
LEFT JOIN io_rows i ON i.initiator_host = b.host AND (b.ctrl_id IS NULL OR i.ctrl_id = b.ctrl_id)
    AND i.first_setup_ts < b.first_answer_ts AND i.i_complete_rq_ts >= b.first_answer_ts
GROUP BY ALL
ORDER BY b.host, b.outage_n;

-- nvme_status_names: the NVMe statuses a failed command's status field (nvme_complete_rq's
-- status: SCT << 8 | SC) most often holds, named as the NVMe base specification does.
--   status (SCT << 8 | SC), text
CREATE OR REPLACE TABLE nvme_status_names AS
SELECT * FROM (VALUES
    (1, 'invalid command opcode'), (2, 'invalid field in command'), (3, 'command id conflict'),
    (4, 'data transfer error'), (5, 'aborted: power loss'), (6, 'internal error'),
    (7, 'aborted: abort requested'), (8, 'aborted: submission queue deleted'),
    (11, 'invalid namespace or format'), (12, 'command sequence error'), (32, 'namespace not ready'),
    (33, 'reservation conflict'), (34, 'format in progress'), (128, 'LBA out of range'),
    (129, 'capacity exceeded'), (640, 'write fault'), (641, 'unrecovered read error'),
    (642, 'end-to-end guard check error'), (643, 'end-to-end application tag check error'),
    (644, 'end-to-end reference tag check error'), (645, 'compare failure'), (646, 'access denied'),
    (768, 'internal path error'), (769, 'asymmetric access persistent loss'),
    (770, 'asymmetric access inaccessible'), (771, 'asymmetric access transition'),
    (864, 'controller pathing error'), (880, 'host pathing error (no path)'),
    (881, 'aborted by the host (controller reset or recovery)')
) AS t(status, text);

-- command_errors: one row per (host, controller, NVMe status) of the commands that failed:
-- the attempts that were tried again and the I/Os that failed for good.
--   host, ctrl_id, status (the 15-bit status field: SCT << 8 | SC, DNR and More bits cleared)
--   status_text   the status's name (NVMe base specification; 'status 0x...' when not listed)
--   commands      commands that failed with it;  retried  of them tried again;  failed  the
--                 I/Os that ended with it
CREATE OR REPLACE TABLE command_errors AS
WITH f AS (
    SELECT initiator_host AS host, ctrl_id, status & 2047 AS status, 1 AS retried FROM io_attempt_rows
    UNION ALL
    SELECT initiator_host, ctrl_id, status & 2047, 0 FROM io_rows WHERE status <> 0
)
SELECT f.host, f.ctrl_id, f.status, coalesce(n.text, printf('status 0x%03x', f.status)) AS status_text,
       count(*) AS commands, sum(f.retried)::BIGINT AS retried, count(*) - sum(f.retried)::BIGINT AS failed
FROM f LEFT JOIN nvme_status_names n ON n.status = f.status
GROUP BY ALL ORDER BY f.host, f.ctrl_id, commands DESC;

-- retried_io_summary: one row per initiator host: the I/Os that took more than one command.
--   host, ios (its I/Os), retried (of them sent more than once), failed_attempts (the commands
--   that failed before them)
--   lost_ns, lost_max_ns   from each retried I/O's first submission to its last: the time its
--                          failed attempts cost it, summed and the largest (ns)
CREATE OR REPLACE VIEW retried_io_summary AS
SELECT initiator_host AS host, count(*) AS ios, count(*) FILTER (WHERE attempts > 1) AS retried,
       coalesce(sum(attempts - 1), 0)::BIGINT AS failed_attempts,
       coalesce(sum(i_setup_ts - first_setup_ts) FILTER (WHERE attempts > 1), 0)::BIGINT AS lost_ns,
       max(i_setup_ts - first_setup_ts) FILTER (WHERE attempts > 1) AS lost_max_ns
FROM io_rows GROUP BY initiator_host;

-- recovery_recorded: one row per initiator host: whether its recovery works were recorded.
--   host
--   asked      the capture was asked to (capture key recovery=1)
--   works      the work functions recorded (host.json recovery.works)
--   why_not    why none was (host.json recovery.why_not; 'not asked': recovery=0 or a capture
--              older than the key), NULL when recorded
CREATE OR REPLACE VIEW recovery_recorded AS
SELECT h.host, coalesce(json_type(h.host_json, '$.recovery') = 'OBJECT', false) AS asked,
       coalesce((SELECT list(f.function ORDER BY f.function) FROM recovery_work_functions f WHERE f.host = h.host),
                []::VARCHAR[]) AS works,
       CASE WHEN json_type(h.host_json, '$.recovery') IS DISTINCT FROM 'OBJECT' THEN 'not asked'
            ELSE h.host_json->>'$.recovery.why_not' END AS why_not
FROM run_hosts h WHERE h.host_json->>'$.role' = 'initiator';
