-- stage_definitions: one row per stage of one stage set. Users add their own rows
-- (INSERT INTO stage_definitions ...) before querying io_stages.
--   stage_set    'stock' (events of unpatched kernels), 'ntprof' (ntprof's names),
--                's_notation' (the paper's S1..S9 (S)/(C) stages); patched-kernel sets
--                use the nvme_tcp / nvmet_tcp events of kernel-patches/
--   stage        stage name; 'end_to_end' is each set's total, measured directly
--   seq          display order
--   parent       NULL: a top-level stage (top-level stages of a set sum to end_to_end);
--                else the stage this one subdivides (children sum to their parent)
--   side         'initiator', 'target' or 'both' (both: needs the clock offset unless
--                minus_* cancels it)
--   from_ms, to_ms        milestones (io_milestones.milestone) the stage spans
--   minus_from_ms, minus_to_ms   optional span subtracted (clock-free network time)
--   direction    'S' submission path, 'C' completion path, 'S+C' both
--   meaning      what the time is spent on
CREATE OR REPLACE TABLE stage_definitions AS
SELECT * FROM (VALUES
    -- ---- stock kernels: nvme/nvmet/block events only
    ('stock', 'end_to_end', 0, NULL, 'initiator', 'i:block_bio_queue', 'i:block_rq_complete', NULL, NULL, 'S+C',
     'application bio queued to block request completed on the initiator'),
    ('stock', 'host_queue', 1, NULL, 'initiator', 'i:block_bio_queue', 'i:nvme_setup_cmd', NULL, NULL, 'S',
     'initiator block layer: bio queued until nvme-tcp builds the command (blk-mq queueing, tag wait)'),
    ('stock', 'host_getrq', 2, 'host_queue', 'initiator', 'i:block_bio_queue', 'i:block_getrq', NULL, NULL, 'S',
     'bio queued until a request and tag were allocated'),
    ('stock', 'host_dispatch', 3, 'host_queue', 'initiator', 'i:block_getrq', 'i:nvme_setup_cmd', NULL, NULL, 'S',
     'request allocated until blk-mq dispatched it to nvme-tcp'),
    ('stock', 'fabric_total', 4, NULL, 'both', 'i:nvme_setup_cmd', 'i:nvme_complete_rq', 't:nvmet_req_init', 't:nvmet_req_complete', 'S+C',
     'clock-free: initiator command time minus target execution: both transports, both network stacks, the wire'),
    ('stock', 'fabric_submission', 5, 'fabric_total', 'both', 'i:nvme_setup_cmd', 't:nvmet_req_init', NULL, NULL, 'S',
     'command built on the initiator until the target parsed it (uses the clock offset: +- its uncertainty)'),
    ('stock', 'fabric_completion', 6, 'fabric_total', 'both', 't:nvmet_req_complete', 'i:nvme_complete_rq', NULL, NULL, 'C',
     'target completed until the initiator processed the response (uses the clock offset: +- its uncertainty)'),
    ('stock', 'target_exec', 7, NULL, 'target', 't:nvmet_req_init', 't:nvmet_req_complete', NULL, NULL, 'S+C',
     'target: command parsed until its completion was queued (nvmet core + backing device)'),
    ('stock', 'target_to_device', 8, 'target_exec', 'target', 't:nvmet_req_init', 't:block_rq_issue', NULL, NULL, 'S',
     'target: command parsed until the backing device request was issued'),
    ('stock', 'target_device', 9, 'target_exec', 'target', 't:block_rq_issue', 't:block_rq_complete', NULL, NULL, 'S+C',
     'backing device (e.g. null_blk, SSD) service time'),
    ('stock', 'target_from_device', 10, 'target_exec', 'target', 't:block_rq_complete', 't:nvmet_req_complete', NULL, NULL, 'C',
     'target: device completion until nvmet completed the command'),
    ('stock', 'host_completion', 11, NULL, 'initiator', 'i:nvme_complete_rq', 'i:block_rq_complete', NULL, NULL, 'C',
     'initiator: NVMe completion until the block request completed'),
    -- ---- ntprof names (patched kernels: nvme_tcp / nvmet_tcp events, kernel-patches/EVENTS.md)
    ('ntprof', 'end_to_end', 0, NULL, 'initiator', 'i:block_bio_queue', 'i:block_rq_complete', NULL, NULL, 'S+C',
     'application bio queued to block request completed on the initiator'),
    ('ntprof', 'blk_submission', 1, NULL, 'initiator', 'i:block_bio_queue', 'i:nvme_tcp_queue_rq', NULL, NULL, 'S',
     'block layer until nvme-tcp accepted the request (S1(S))'),
    ('ntprof', 'nvme_tcp_submission', 2, NULL, 'initiator', 'i:nvme_tcp_queue_rq', 'i:nvme_tcp_try_send', NULL, NULL, 'S',
     'nvme-tcp req_list and send_list wait until the command becomes the queue''s current send (S2(S)); the cut is not done_send_req: send-side events fire after the bytes are in the socket and can be stamped after the target already received them'),
    ('ntprof', 'network_transmission', 3, NULL, 'both', 'i:nvme_tcp_try_send', 'i:nvme_tcp_process_nvme_cqe', 't:nvmet_tcp_done_recv_pdu', 't:nvmet_tcp_setup_response_pdu#last', 'S+C',
     'clock-free: socket copies, both network stacks and the wire, submission and completion (S3-S5(S+C)); for R2T writes the R2T round trip sits in nvmet_tcp_submission'),
    ('ntprof', 'nstack_submission', 4, 'network_transmission', 'both', 'i:nvme_tcp_try_send', 't:nvmet_tcp_done_recv_pdu', NULL, NULL, 'S',
     'host stack, wire, target stack on the way in (uses the clock offset: +- its uncertainty)'),
    ('ntprof', 'nstack_completion', 5, 'network_transmission', 'both', 't:nvmet_tcp_setup_response_pdu#last', 'i:nvme_tcp_process_nvme_cqe', NULL, NULL, 'C',
     'target stack, wire, host stack on the way back (uses the clock offset: +- its uncertainty)'),
    ('ntprof', 'nvmet_tcp_submission', 6, NULL, 'target', 't:nvmet_tcp_done_recv_pdu', 't:nvmet_tcp_exec_req', NULL, NULL, 'S',
     'target transport: command PDU read until executed (data receive, R2T round trip for large writes) (S6(S))'),
    ('ntprof', 'nvmet_tcp_cmd_recv', 7, 'nvmet_tcp_submission', 'target', 't:nvmet_tcp_done_recv_pdu', 't:nvmet_tcp_r2t_wait_start', NULL, NULL, 'S',
     'target CPU: command PDU read until executed, or until its R2T was built (large writes)'),
    ('ntprof', 'nvmet_tcp_r2t_wait', 8, 'nvmet_tcp_submission', 'target', 't:nvmet_tcp_r2t_wait_start', 't:nvmet_tcp_exec_req', NULL, NULL, 'S',
     'large writes: R2T built until all H2CData arrived (the R2T to the initiator and the write data back: both network stacks, the wire, the initiator''s send); 0 for other commands'),
    ('ntprof', 'target_subsystem', 9, NULL, 'target', 't:nvmet_tcp_exec_req', 't:nvmet_tcp_queue_response#last', NULL, NULL, 'S+C',
     'target nvmet core, block layer, device (S7-S9)'),
    ('ntprof', 'nvmet_tcp_completion', 10, NULL, 'target', 't:nvmet_tcp_queue_response#last', 't:nvmet_tcp_setup_response_pdu#last', NULL, NULL, 'C',
     'target transport: response queued until its CapsuleResp PDU is built, data PDUs included (S6(C)); the cut is not try_send_response: send-side events fire after the bytes are in the socket and can be stamped after the host already received them'),
    ('ntprof', 'nvme_tcp_completion', 11, NULL, 'initiator', 'i:nvme_tcp_process_nvme_cqe', 'i:nvme_complete_rq', NULL, NULL, 'C',
     'nvme-tcp: response parsed until the NVMe completion (S2(C))'),
    ('ntprof', 'blk_completion', 12, NULL, 'initiator', 'i:nvme_complete_rq', 'i:block_rq_complete', NULL, NULL, 'C',
     'block layer completion (S1(C))'),
    -- ---- the paper's S-notation (same endpoints)
    ('s_notation', 'end_to_end', 0, NULL, 'initiator', 'i:block_bio_queue', 'i:block_rq_complete', NULL, NULL, 'S+C',
     'application bio queued to block request completed on the initiator'),
    ('s_notation', 'S1(S)', 1, NULL, 'initiator', 'i:block_bio_queue', 'i:nvme_tcp_queue_rq', NULL, NULL, 'S', 'blk-mq staging queue'),
    ('s_notation', 'S2(S)', 2, NULL, 'initiator', 'i:nvme_tcp_queue_rq', 'i:nvme_tcp_try_send', NULL, NULL, 'S', 'nvme-tcp transport queue until the command is taken off the send list'),
    ('s_notation', 'S3-S5(S+C)', 3, NULL, 'both', 'i:nvme_tcp_try_send', 'i:nvme_tcp_process_nvme_cqe', 't:nvmet_tcp_done_recv_pdu', 't:nvmet_tcp_setup_response_pdu#last', 'S+C',
     'network substrate: both TCP/IP stacks and the wire (clock-free)'),
    ('s_notation', 'S6(S)', 4, NULL, 'target', 't:nvmet_tcp_done_recv_pdu', 't:nvmet_tcp_exec_req', NULL, NULL, 'S', 'target transport receive'),
    ('s_notation', 'S7-S9(S+C)', 5, NULL, 'target', 't:nvmet_tcp_exec_req', 't:nvmet_tcp_queue_response#last', NULL, NULL, 'S+C', 'target block layer, NVMe, SSD'),
    ('s_notation', 'S6(C)', 6, NULL, 'target', 't:nvmet_tcp_queue_response#last', 't:nvmet_tcp_setup_response_pdu#last', NULL, NULL, 'C', 'target transport response queue until the response PDU is built (data PDUs included)'),
    ('s_notation', 'S2(C)', 7, NULL, 'initiator', 'i:nvme_tcp_process_nvme_cqe', 'i:nvme_complete_rq', NULL, NULL, 'C', 'nvme-tcp completion'),
    ('s_notation', 'S1(C)', 8, NULL, 'initiator', 'i:nvme_complete_rq', 'i:block_rq_complete', NULL, NULL, 'C', 'block layer completion')
) AS t(stage_set, stage, seq, parent, side, from_ms, to_ms, minus_from_ms, minus_to_ms, direction, meaning);

-- io_milestones: one row per (matched or not) io and point in its life.
--   io_id      io.io_id
--   milestone  'i:<event>' on the initiator, 't:<event>' on the target; for NVMe/TCP
--              events seen several times per command, '<event>' is the first
--              occurrence and '<event>#last' the last; 't:nvmet_tcp_exec_req' is the
--              target's exec_read_req or exec_write_req
--   ts         ns on the INITIATOR clock (target times minus io.offset_ns: differences
--              between two target milestones are exact, target-initiator ones carry the
--              clock uncertainty)
CREATE OR REPLACE VIEW io_milestones AS
WITH base AS (
    SELECT io_id, offset_ns,
           i_bio_queue_ts, i_getrq_ts, i_setup_ts, i_rq_issue_ts, i_complete_rq_ts, i_rq_complete_ts,
           t_init_ts, t_dev_queue_ts, t_dev_issue_ts, t_dev_complete_ts, t_complete_ts
    FROM io
), stock AS (
    UNPIVOT (
        SELECT io_id,
               i_bio_queue_ts AS "i:block_bio_queue", i_getrq_ts AS "i:block_getrq",
               i_setup_ts AS "i:nvme_setup_cmd", i_rq_issue_ts AS "i:block_rq_issue",
               i_complete_rq_ts AS "i:nvme_complete_rq", i_rq_complete_ts AS "i:block_rq_complete",
               t_init_ts - offset_ns AS "t:nvmet_req_init", t_dev_queue_ts - offset_ns AS "t:block_bio_queue",
               t_dev_issue_ts - offset_ns AS "t:block_rq_issue", t_dev_complete_ts - offset_ns AS "t:block_rq_complete",
               t_complete_ts - offset_ns AS "t:nvmet_req_complete"
        FROM base)
    ON COLUMNS(* EXCLUDE (io_id)) INTO NAME milestone VALUE ts
), itcp AS (
    -- initiator NVMe/TCP events: the command whose tag was allocated last before the event
    SELECT i.io_id, e.event, e.ts
    FROM (SELECT * FROM events WHERE system = 'nvme_tcp') e
    ASOF JOIN (SELECT io_id, initiator_host, ctrl_id, qid, cid,
                      coalesce(i_getrq_ts, i_setup_ts) AS start_ts FROM io) i
      ON i.initiator_host = e.host AND i.qid = e.qid AND i.cid = e.cid
     AND (e.ctrl_id IS NULL OR i.ctrl_id = e.ctrl_id) AND i.start_ts <= e.ts
), ttcp AS (
    -- target NVMe/TCP events: same (cntlid, qid, cid), aligned time from the initiator's
    -- submit (- uncertainty) until the initiator submits the next command with this cid:
    -- send-side target events fire after the bytes are in the socket, so they may be
    -- stamped after the initiator already processed the response
    SELECT i.io_id, e.event, e.ts - i.offset_ns AS ts
    FROM (SELECT * FROM events WHERE system = 'nvmet_tcp') e
    JOIN (SELECT *, lead(i_setup_ts) OVER (PARTITION BY initiator_host, ctrl_id, qid, cid
                                           ORDER BY i_setup_ts) AS next_setup_ts FROM io) i
      ON i.target_host = e.host AND i.cntlid = e.cntlid AND i.qid = e.qid AND i.cid = e.cid
     AND e.ts - i.offset_ns >= i.i_setup_ts - (SELECT uncertainty_ns FROM clock_offset)
     AND (i.next_setup_ts IS NULL OR e.ts - i.offset_ns < i.next_setup_ts)
), tcp AS (
    SELECT io_id, 'i:' || event AS milestone, min(ts) AS first_ts, max(ts) AS last_ts FROM itcp GROUP BY ALL
    UNION ALL
    SELECT io_id, 't:' || event, min(ts), max(ts) FROM ttcp GROUP BY ALL
    UNION ALL
    -- one name for "the target executes the command", read or write
    SELECT io_id, 't:nvmet_tcp_exec_req', min(ts), max(ts) FROM ttcp
    WHERE event IN ('nvmet_tcp_exec_read_req', 'nvmet_tcp_exec_write_req') GROUP BY io_id
    UNION ALL
    -- where the R2T round trip of a large write starts (R2T built); commands without one
    -- (reads, in-capsule writes) start it at execution, a zero-length wait
    SELECT io_id, 't:nvmet_tcp_r2t_wait_start',
           coalesce(min(ts) FILTER (WHERE event = 'nvmet_tcp_setup_r2t_pdu'),
                    min(ts) FILTER (WHERE event IN ('nvmet_tcp_exec_read_req', 'nvmet_tcp_exec_write_req'))), NULL
    FROM ttcp GROUP BY io_id
)
SELECT io_id, milestone, ts FROM stock
UNION ALL SELECT io_id, milestone, first_ts FROM tcp
UNION ALL SELECT io_id, milestone || '#last', last_ts FROM tcp WHERE last_ts IS NOT NULL;

-- io_stages: one row per (io, stage definition) of every stage set whose initiator
-- milestones the trace has (sets that need patched events vanish on stock kernels).
--   io_id, stage_set, stage, seq, parent, direction   as in stage_definitions
--   dur        ns; NULL when a milestone of this io is missing
--   missing    the first missing milestone, NULL when dur is known
CREATE OR REPLACE VIEW io_stages AS
WITH present AS (SELECT DISTINCT milestone FROM io_milestones),
used AS (
    SELECT stage_set, unnest([from_ms, to_ms, minus_from_ms, minus_to_ms]) AS ms FROM stage_definitions
),
defs AS (
    -- a set is reported when the trace has every initiator milestone it uses (patched sets
    -- need nvme_tcp events); its target stages stay NULL (missing) without a target trace
    SELECT d.* FROM stage_definitions d
    WHERE d.stage_set NOT IN (SELECT stage_set FROM used
                              WHERE ms LIKE 'i:%' AND ms NOT IN (SELECT milestone FROM present))
)
, ends AS (
    -- each milestone of each io, once per stage endpoint it is (aggregation, not 4 joins)
    SELECT m.io_id, d.stage_set, d.stage,
           max(m.ts) FILTER (WHERE m.milestone = d.from_ms) AS f,
           max(m.ts) FILTER (WHERE m.milestone = d.to_ms) AS t,
           max(m.ts) FILTER (WHERE m.milestone = d.minus_from_ms) AS mf,
           max(m.ts) FILTER (WHERE m.milestone = d.minus_to_ms) AS mt
    FROM io_milestones m
    JOIN (SELECT stage_set, stage, from_ms, to_ms, minus_from_ms, minus_to_ms,
                 unnest([from_ms, to_ms, minus_from_ms, minus_to_ms]) AS ms FROM defs) d
      ON d.ms = m.milestone
    GROUP BY m.io_id, d.stage_set, d.stage
)
SELECT i.io_id, d.stage_set, d.stage, d.seq, d.parent, d.direction,
       (e.t - e.f) - CASE WHEN d.minus_from_ms IS NULL THEN 0 ELSE e.mt - e.mf END AS dur,
       CASE WHEN e.f IS NULL THEN d.from_ms WHEN e.t IS NULL THEN d.to_ms
            WHEN d.minus_from_ms IS NOT NULL AND e.mf IS NULL THEN d.minus_from_ms
            WHEN d.minus_to_ms IS NOT NULL AND e.mt IS NULL THEN d.minus_to_ms END AS missing
FROM io i CROSS JOIN defs d
LEFT JOIN ends e ON e.io_id = i.io_id AND e.stage_set = d.stage_set AND e.stage = d.stage;

-- io_stage_check: one row per (io, stage set): do the top-level stages sum to end_to_end,
-- and do the children of each stage sum to it?
--   io_id, stage_set
--   end_to_end_ns     measured end-to-end (ns)
--   top_sum_ns        sum of the top-level stages (ns)
--   ok                true when every stage is known and the sums are equal
--   reason            NULL when ok; else 'missing <milestone>' or 'sum differs by N ns'
CREATE OR REPLACE VIEW io_stage_check AS
WITH s AS (
    SELECT io_id, stage_set,
           max(dur) FILTER (WHERE stage = 'end_to_end') AS end_to_end_ns,
           sum(dur) FILTER (WHERE parent IS NULL AND stage <> 'end_to_end')::BIGINT AS top_sum_ns,
           count(*) FILTER (WHERE parent IS NULL AND stage <> 'end_to_end' AND dur IS NULL) AS top_missing,
           min(missing) FILTER (WHERE parent IS NULL) AS first_missing
    FROM io_stages GROUP BY ALL
)
SELECT io_id, stage_set, end_to_end_ns, top_sum_ns,
       (top_missing = 0 AND end_to_end_ns IS NOT NULL AND top_sum_ns = end_to_end_ns) AS ok,
       CASE WHEN first_missing IS NOT NULL THEN 'missing ' || first_missing
            WHEN top_sum_ns <> end_to_end_ns THEN 'sum differs by ' || (top_sum_ns - end_to_end_ns) || ' ns'
       END AS reason
FROM s;
