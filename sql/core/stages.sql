-- requires: core/stage_definitions, core/hosts, core/events, core/join, core/nvme_acks
-- input: run_hosts  the run's host folders (sql/views.py)

-- stage_definitions, stage_categories, cause_ids: sql/core/stage_definitions.sql

-- initiator_tcp_events: the initiators' nvme_tcp events, ts on the run's reference clock
-- (initiator_clock; the events' own ts in a run with one initiator)
CREATE OR REPLACE VIEW initiator_tcp_events AS
SELECT e.* REPLACE (e.ts + coalesce(c.shift_ns, 0) AS ts)
FROM events e LEFT JOIN initiator_clock c ON c.host = e.host
WHERE e.system = 'nvme_tcp';

-- io_stock_milestones: one row per io: the times of the milestones io holds as columns (the
-- stock events' points), one column per milestone named by it. A view over io: the stages and
-- io.parquet read the times from these columns directly (a table of them unpivoted, gathered
-- back per io by io_stage_durations, took 1.9 s of the 10 M-event run's views against 0.9 s).
--   io_n             io.io_n
--   "i:<event>"      initiator points (ns, initiator clock)
--   "t:<event>"      target points, minus io.offset_ns (ns, initiator clock)
--   "i:tcp_ack"      the target's TCP acknowledged the command (io_nvme_acks.ack_ts; NULL
--                    without nvme_acks or when the ACK does not split the I/O)
--   "i:tcp_response_start"  its response left the target, as the initiator can tell
--                    (io_nvme_acks.response_start_ts; NULL when "i:tcp_ack" is)
--   "i:tcp_response" the response's last segment arrived (io_nvme_acks.response_ts; NULL when
--                    "i:tcp_ack" is)
CREATE OR REPLACE VIEW io_stock_milestones AS
SELECT io_n,
       i_bio_queue_ts AS "i:block_bio_queue", i_getrq_ts AS "i:block_getrq",
       i_setup_ts AS "i:nvme_setup_cmd", i_rq_issue_ts AS "i:block_rq_issue",
       i_complete_rq_ts AS "i:nvme_complete_rq", i_rq_complete_ts AS "i:block_rq_complete",
       t_init_ts - offset_ns AS "t:nvmet_req_init", t_dev_queue_ts - offset_ns AS "t:block_bio_queue",
       t_dev_issue_ts - offset_ns AS "t:block_rq_issue", t_dev_complete_ts - offset_ns AS "t:block_rq_complete",
       t_complete_ts - offset_ns AS "t:nvmet_req_complete", a.ack_ts AS "i:tcp_ack",
       a.response_start_ts AS "i:tcp_response_start", CASE WHEN a.ack_ts IS NOT NULL THEN a.response_ts END AS "i:tcp_response"
FROM io LEFT JOIN io_nvme_acks a USING (io_n);

-- stock_milestone_names: one row per milestone column of io_stock_milestones. A view.
--   milestone   the column's name
--   pos         its place among them (1..): the element of
--               list_value(*COLUMNS(* EXCLUDE (io_n))) over io_stock_milestones that holds it
CREATE OR REPLACE VIEW stock_milestone_names AS
SELECT column_name AS milestone, (column_index - 1)::INTEGER AS pos
FROM duckdb_columns()
WHERE table_name = 'io_stock_milestones' AND database_name = current_database()
  AND schema_name = current_schema() AND column_name <> 'io_n';

-- tcp_milestone_names: one row per NVMe/TCP milestone the run's events can give (patched
-- kernels; empty on stock ones): the numbers io_tcp_milestone_spans holds instead of names.
-- A table.
--   ms_no      1.. (by milestone)
--   milestone  'i:<event>' (initiator nvme_tcp event), 't:<event>' (target nvmet_tcp event),
--              or one of the two the target's events make: 't:nvmet_tcp_exec_req' (its
--              exec_read_req or exec_write_req) and 't:nvmet_tcp_r2t_wait_start'
--   system, event   the events it is made of (NULL for those two)
CREATE OR REPLACE TABLE tcp_milestone_names AS
WITH named AS (
    SELECT DISTINCT 'i:' || event AS milestone, system, event FROM events WHERE system = 'nvme_tcp'
    UNION
    SELECT DISTINCT 't:' || event, system, event FROM events WHERE system = 'nvmet_tcp'
    UNION ALL
    SELECT milestone, NULL, NULL FROM (VALUES ('t:nvmet_tcp_exec_req'), ('t:nvmet_tcp_r2t_wait_start')) v(milestone)
    WHERE EXISTS (SELECT 1 FROM events WHERE system = 'nvmet_tcp')
)
SELECT (row_number() OVER (ORDER BY milestone, event))::USMALLINT AS ms_no, milestone, system, event
FROM named;

-- io_initiator_tcp_events: one row per initiator NVMe/TCP event (initiator_tcp_events) and the
-- io it belongs to: the command whose tag was allocated last before the event on its
-- (host, controller, qid, cid). Empty on stock kernels.
--   io_n    io.io_n
--   ms_no   tcp_milestone_names.ms_no of the event
--   ts      ns, the initiator's clock
CREATE OR REPLACE VIEW io_initiator_tcp_events AS
WITH istart AS (
    -- slot: (host, controller, qid, cid) packed (packed_key); any_ctrl_slot: the same without
    -- the controller (0), for events that do not name one
    SELECT io_n, packed_key(n.host_n, ctrl_id, qid, cid) AS slot, packed_key(n.host_n, 0, qid, cid) AS any_ctrl_slot,
           coalesce(i_getrq_ts, i_setup_ts) AS start_ts
    FROM io JOIN host_numbers n ON n.host = io.initiator_host
    -- none without NVMe/TCP events (stock kernels): the ASOF join below would sort every io
    WHERE EXISTS (SELECT 1 FROM initiator_tcp_events)
), itcp_events AS (
    -- the event's milestone number, not its name: the ASOF joins below sort what they carry
    SELECT m.ms_no, e.ts, e.ctrl_id IS NULL AS no_ctrl,
           packed_key(n.host_n, coalesce(e.ctrl_id, 0), e.qid, e.cid) AS slot
    FROM initiator_tcp_events e JOIN host_numbers n ON n.host = e.host
    JOIN tcp_milestone_names m ON m.system = 'nvme_tcp' AND m.event = e.event
)
-- initiator NVMe/TCP events: the command whose tag was allocated last before the event
-- (of the event's controller when it names one: two ASOF joins, since an OR in the
-- condition would make it a nested loop)
SELECT i.io_n, e.ms_no, e.ts
FROM (SELECT * FROM itcp_events WHERE NOT no_ctrl) e
ASOF JOIN istart i ON i.slot = e.slot AND i.start_ts <= e.ts
UNION ALL
SELECT i.io_n, e.ms_no, e.ts
FROM (SELECT * FROM itcp_events WHERE no_ctrl) e
ASOF JOIN istart i ON i.any_ctrl_slot = e.slot AND i.start_ts <= e.ts;

-- io_target_tcp_events: one row per target NVMe/TCP event and the io it belongs to: the io of
-- the same (cntlid, qid, cid) whose window holds the event's time, aligned to the initiator's
-- clock: from the io's submit (- the offset's uncertainty) until the initiator submits the next
-- command with that cid (or its trace ends). Empty on stock kernels.
--   io_n    io.io_n
--   ms_no   tcp_milestone_names.ms_no of the event
--   ts      ns, the initiator's clock (the target's ts - io.offset_ns)
CREATE OR REPLACE VIEW io_target_tcp_events AS
WITH ios AS (
    -- each io's window for target events of its (cntlid, qid, cid), on the target clock:
    -- from its submit (- the offset's uncertainty) until the next submit of that cid, or for
    -- the cid's last use until the initiator's trace ends (+ the uncertainty): a target that
    -- records longer sees later commands with this cid (say, an unmount's writes)
    -- slot: the io's (initiator host, controller, qid, cid) packed (packed_key)
    SELECT io_n, initiator_host_n, packed_key(initiator_host_n, ctrl_id, qid, cid) AS slot, ctrl_id,
           target_host, target_host_n, cntlid, i_setup_ts, offset_ns, offset_uncertainty_ns, next_ts, pos,
           i_setup_ts + offset_ns - offset_uncertainty_ns AS start_t,
           next_ts + offset_ns AS end_t
    FROM (SELECT io.*, n.host_n AS initiator_host_n, tn.host_n AS target_host_n,
                 coalesce(lead(i_setup_ts) OVER w, h.last_ts + sh.s + io.offset_uncertainty_ns) AS next_ts,
                 row_number() OVER w AS pos
          FROM io
          JOIN hosts h ON h.host = io.initiator_host
          JOIN host_numbers n ON n.host = io.initiator_host
          JOIN host_numbers tn ON tn.host = io.target_host
          JOIN (SELECT host, coalesce(shift_ns, 0) AS s FROM initiator_clock) sh ON sh.host = io.initiator_host
          WHERE i_setup_ts IS NOT NULL AND cntlid IS NOT NULL
            -- none without target NVMe/TCP events (stock kernels): the window sorts every io
            AND EXISTS (SELECT 1 FROM events WHERE system = 'nvmet_tcp')
          -- the slot's packed_key, not the host's name: windows partition faster on one integer
          WINDOW w AS (PARTITION BY packed_key(n.host_n, io.ctrl_id, io.qid, io.cid) ORDER BY i_setup_ts))
), tev AS (
    -- numbers for the target host and the milestone, as for the initiator's events above
    SELECT c.target_host_n, e.cntlid, m.ms_no, e.ts, packed_key(c.initiator_host_n, c.ctrl_id, e.qid, e.cid) AS slot
    FROM (SELECT * FROM events WHERE system = 'nvmet_tcp') e
    JOIN tcp_milestone_names m ON m.system = 'nvmet_tcp' AND m.event = e.event
    JOIN (SELECT DISTINCT target_host, target_host_n, cntlid, initiator_host_n, ctrl_id FROM ios) c
      ON c.target_host = e.host AND c.cntlid = e.cntlid
), span AS (
    -- windows are in submit order and overlap only by the uncertainty: the ones that may
    -- hold an event run from after the last window that ended by then to the last one
    -- begun by then (two ASOF joins instead of a range join per cid, quadratic in its reuse)
    SELECT t.*, k.pos AS last_pos, coalesce(a.pos, 0) + 1 AS first_pos
    FROM tev t
    ASOF JOIN ios k ON k.slot = t.slot AND k.start_t <= t.ts
    ASOF LEFT JOIN ios a ON a.slot = t.slot AND a.end_t <= t.ts
)
-- target NVMe/TCP events: same (cntlid, qid, cid), aligned time from the initiator's
-- submit (- uncertainty) until the initiator submits the next command with this cid (or
-- its trace ends):
-- send-side target events fire after the bytes are in the socket, so they may be
-- stamped after the initiator already processed the response
SELECT i.io_n, s.ms_no, s.ts - i.offset_ns AS ts
FROM (SELECT *, unnest(range(least(first_pos, last_pos), last_pos + 1)) AS pos FROM span) s
JOIN ios i USING (slot, pos)
WHERE i.target_host_n = s.target_host_n AND i.cntlid = s.cntlid
  AND s.ts - i.offset_ns >= i.i_setup_ts - i.offset_uncertainty_ns
  AND s.ts - i.offset_ns < i.next_ts;

-- io_tcp_milestone_spans: one row per io and NVMe/TCP milestone it has (patched kernels): when
-- its events first and last happened. A table: io_tcp_milestone_ts below is the same as rows
-- by name (first and '#last'); numbers and one row for both halve the rows the stages and
-- io.parquet read (a patched run of 1 M I/Os: 35.3 M rows with names -> 18.2 M, made in 12.2
-- instead of 17.4 s). Its ASOF joins and window carry numbers, not names (the event's milestone
-- number, the target's host number; the window partitions on the slot's packed_key): the real
-- capture scaled 3x (432 k I/Os) 3.6-4.2 s against 4.7-5.0 s with names, the same rows.
--   io_n       io.io_n
--   ms_no      tcp_milestone_names.ms_no
--   first_ts   the first of its events (ns, initiator clock); NULL only for
--              't:nvmet_tcp_r2t_wait_start' of a command the target neither built an R2T for
--              nor executed
--   last_ts    the last of them ('<milestone>#last'); NULL for 't:nvmet_tcp_r2t_wait_start'
CREATE OR REPLACE TABLE io_tcp_milestone_spans AS
-- ttcp is computed once (read three times below: DuckDB materializes it)
WITH itcp AS (SELECT * FROM io_initiator_tcp_events),
ttcp AS (SELECT * FROM io_target_tcp_events), synthetic AS (
    -- the numbers of the two milestones the target's events make, and of the events they are made of
    SELECT max(ms_no) FILTER (WHERE milestone = 't:nvmet_tcp_exec_req') AS exec_no,
           max(ms_no) FILTER (WHERE milestone = 't:nvmet_tcp_r2t_wait_start') AS r2t_no,
           coalesce(list(ms_no) FILTER (WHERE system = 'nvmet_tcp'
                                          AND event IN ('nvmet_tcp_exec_read_req', 'nvmet_tcp_exec_write_req')), [])
               AS exec_event_nos,
           max(ms_no) FILTER (WHERE system = 'nvmet_tcp' AND event = 'nvmet_tcp_setup_r2t_pdu') AS setup_r2t_no
    FROM tcp_milestone_names
)
SELECT io_n, ms_no, min(ts) AS first_ts, max(ts) AS last_ts FROM itcp GROUP BY ALL
UNION ALL
SELECT io_n, ms_no, min(ts), max(ts) FROM ttcp GROUP BY ALL
UNION ALL
-- one name for "the target executes the command", read or write
SELECT io_n, any_value(exec_no), min(ts), max(ts) FROM ttcp, synthetic
WHERE list_contains(exec_event_nos, ms_no) GROUP BY io_n
UNION ALL
-- where the R2T round trip of a large write starts (R2T built); commands without one
-- (reads, in-capsule writes) start it at execution, a zero-length wait
-- only on targets whose events can show an R2T (the patched events, or a probe placed for it:
-- host_milestone_events): without one the round trip of a large write would sit unseen in
-- nvmet_tcp_cmd_recv
SELECT io_n, any_value(r2t_no),
       coalesce(min(ts) FILTER (WHERE ms_no = setup_r2t_no),
                min(ts) FILTER (WHERE list_contains(exec_event_nos, ms_no))), NULL
FROM ttcp, synthetic
WHERE io_n IN (SELECT io_n FROM io WHERE target_host IN
               (SELECT host FROM host_milestones WHERE source = 'tracepoint'
                UNION SELECT host FROM host_milestone_events WHERE event = 'nvmet_tcp_setup_r2t_pdu'))
GROUP BY io_n;

-- tcp_milestones: one row per NVMe/TCP milestone some io has, by name: the names
-- io_tcp_milestone_ts holds, where in io_tcp_milestone_spans each one's times are. A table.
--   milestone   as in io_milestone_ts ('<milestone>#last': the last of its events)
--   ms_no       tcp_milestone_names.ms_no;  is_last   its time is last_ts (else first_ts)
CREATE OR REPLACE TABLE tcp_milestones AS
WITH present AS (   -- one pass over the spans: which numbers occur, and with a last time
    SELECT ms_no, count(last_ts) > 0 AS has_last FROM io_tcp_milestone_spans GROUP BY ms_no
)
SELECT n.milestone, n.ms_no, false AS is_last FROM tcp_milestone_names n JOIN present p USING (ms_no)
UNION ALL
SELECT n.milestone || '#last', n.ms_no, true FROM tcp_milestone_names n JOIN present p USING (ms_no)
WHERE p.has_last;

-- io_tcp_milestone_ts: one row per io and NVMe/TCP milestone it has (patched kernels): the
-- rows of io_milestone_ts that io_stock_milestones does not hold. A view over
-- io_tcp_milestone_spans.
--   io_n, milestone, ts   as in io_milestone_ts (ts NULL only for 't:nvmet_tcp_r2t_wait_start'
--                         of a command the target neither built an R2T for nor executed)
CREATE OR REPLACE VIEW io_tcp_milestone_ts AS
SELECT s.io_n, c.milestone, CASE WHEN c.is_last THEN s.last_ts ELSE s.first_ts END AS ts
FROM io_tcp_milestone_spans s JOIN tcp_milestones c USING (ms_no)
WHERE NOT c.is_last OR s.last_ts IS NOT NULL;

-- io_milestone_ts: one row per (matched or not) io and point in its life, keyed by io_n: the
-- stock milestones (io_stock_milestones' columns, those not NULL) and the NVMe/TCP ones
-- (io_tcp_milestone_ts). A view; io_milestones below is the same rows with io_id joined back.
--   io_n       io.io_n
--   milestone  'i:<event>' on the initiator, 't:<event>' on the target; for NVMe/TCP
--              events seen several times per command, '<event>' is the first
--              occurrence and '<event>#last' the last; 't:nvmet_tcp_exec_req' is the
--              target's exec_read_req or exec_write_req
--   ts         ns on the INITIATOR (reference) clock (target times minus io.offset_ns: differences
--              between two target milestones are exact, target-initiator ones carry the
--              clock uncertainty)
CREATE OR REPLACE VIEW io_milestone_ts AS
SELECT io_n, milestone, ts
FROM (UNPIVOT io_stock_milestones ON COLUMNS(* EXCLUDE (io_n)) INTO NAME milestone VALUE ts)
UNION ALL
SELECT io_n, milestone, ts FROM io_tcp_milestone_ts;

-- io_milestones: io_milestone_ts with each io's io_id. A view.
--   io_id      io.io_id;  io_n, milestone, ts   as in io_milestone_ts
CREATE OR REPLACE VIEW io_milestones AS
SELECT i.io_id, m.io_n, m.milestone, m.ts FROM io_milestone_ts m JOIN io i USING (io_n);

-- io_stage_definitions: one row per stage definition of every stage set whose initiator
-- milestones the trace has (sets that need patched events vanish on stock kernels): the
-- sets io_stages reports. A table.
--   def_no     the definition's number (1.., by stage_set, stage): io_stage_durations' key
--   stage_set, stage, seq, parent, side, from_milestone, to_milestone, minus_from_milestone, minus_to_milestone,
--   direction, category   as in stage_definitions
CREATE OR REPLACE TABLE io_stage_definitions AS
WITH present AS (
    SELECT DISTINCT milestone FROM (UNPIVOT io_stock_milestones ON COLUMNS(* EXCLUDE (io_n)) INTO NAME milestone VALUE ts)
    UNION SELECT milestone FROM tcp_milestones
),
used AS (
    SELECT stage_set, unnest([from_milestone, to_milestone, minus_from_milestone, minus_to_milestone]) AS ms FROM stage_definitions
)
-- a set is reported when it needs only stock events, or when the trace has one of the NVMe/TCP
-- milestones it uses (patched events or the capture's probes: a stock run drops the detailed
-- sets); a stage of it that no host of the run can give stays NULL (missing), and
-- stage_coverage says which milestone it lacks and why. A run without a target whose
-- initiator recorded the target's ACKs (the initiator_only set) drops the sets cut at target
-- milestones: their middle would be one block that nothing measured
SELECT row_number() OVER (ORDER BY d.stage_set, d.stage) AS def_no,
       d.stage_set, d.stage, d.seq, d.parent, d.side, d.from_milestone, d.to_milestone, d.minus_from_milestone,
       d.minus_to_milestone, d.direction, d.category
FROM stage_definitions d
WHERE d.stage_set NOT IN (SELECT stage_set FROM used u
                          WHERE u.ms IS NOT NULL AND NOT EXISTS (SELECT 1 FROM milestone_evidence e
                                            WHERE e.milestone = regexp_replace(u.ms, '#last$', '') AND e.evidence = 'stock')
                          GROUP BY stage_set
                          HAVING count(*) FILTER (WHERE ms IN (SELECT milestone FROM present)) = 0)
  AND NOT (d.stage_set IN (SELECT stage_set FROM used WHERE ms LIKE 't:%')
           AND NOT EXISTS (SELECT 1 FROM hosts WHERE role = 'target')
           AND 'i:tcp_ack' IN (SELECT milestone FROM present));

-- io_stage_durations: one row per (io, io_stage_definitions row): io_stages keyed by two
-- integers, what the reports group and join on (strings cost: building the rows on the
-- io_id, stage_set, stage ... strings took 9.2 s for 773 k I/Os, on these 6.8 s). A table.
--   io_n       io.io_n
--   def_no     io_stage_definitions.def_no
--   dur, from_ts, to_ts   as in io_stages
--   missing_no which milestone of the definition is the first missing one: 1 from_milestone,
--              2 to_milestone, 3 minus_from_milestone, 4 minus_to_milestone; NULL when dur is known
-- Each io's milestones are one list of times (its io_stock_milestones columns, then its
-- NVMe/TCP milestones gathered from io_tcp_milestone_spans) beside a list of their numbers, and
-- each definition's endpoints are looked up in it by number: grouping every (milestone,
-- endpoint it is) pair by (io, definition) instead took 3.4 s against 1.8 s for 773 k I/Os,
-- and gathering the stock milestones from io_milestone_ts's rows instead of io's columns 1.25
-- against 0.69 s (the same rows). An io has each milestone once, so the first position of a
-- number is its time.
CREATE OR REPLACE TABLE io_stage_durations AS
WITH numbered AS (
    -- each milestone of the run, numbered (every stock one, present or not: no NULL numbers)
    SELECT milestone, (row_number() OVER (ORDER BY milestone))::INTEGER AS k
    FROM (SELECT milestone FROM stock_milestone_names UNION SELECT milestone FROM tcp_milestones)
), stock_ks AS (
    -- the numbers of io_stock_milestones' columns, in column order
    SELECT list(n.k ORDER BY s.pos) AS ks FROM stock_milestone_names s JOIN numbered n USING (milestone)
), used AS (
    -- the milestones a definition reads: on a patched run 9 of the 35 NVMe/TCP ones (the
    -- others are io_milestones' and io.parquet's), so the lists gather 1.15 M of the
    -- real high-rate capture's 5.05 M rows
    SELECT DISTINCT unnest([from_milestone, to_milestone, minus_from_milestone, minus_to_milestone]) AS milestone FROM io_stage_definitions
), tcp_per_io AS (
    -- each io's NVMe/TCP milestones that a definition reads: numbers and times at the same
    -- positions (one list of pairs, taken apart: two list aggregates need not keep one order)
    SELECT io_n, list_transform(l, lambda x: x.k) AS ks, list_transform(l, lambda x: x.ts) AS tss
    FROM (SELECT m.io_n, list({'k': u.k, 'ts': CASE WHEN u.is_last THEN m.last_ts ELSE m.first_ts END}) AS l
          FROM io_tcp_milestone_spans m
          JOIN (SELECT c.ms_no, c.is_last, n.k FROM tcp_milestones c JOIN numbered n USING (milestone)
                WHERE c.milestone IN (SELECT milestone FROM used)) u USING (ms_no)
          GROUP BY m.io_n)
), per_io AS (
    SELECT s.io_n, sk.ks || coalesce(t.ks, []) AS ks, s.tss || coalesce(t.tss, []) AS tss
    FROM (SELECT io_n, list_value(*COLUMNS(* EXCLUDE (io_n))) AS tss FROM io_stock_milestones) s
    CROSS JOIN stock_ks sk
    LEFT JOIN tcp_per_io t USING (io_n)
), defs AS (
    -- each definition's endpoints by number (NULL: a milestone the run does not have)
    SELECT d.def_no, d.minus_from_milestone, d.minus_to_milestone, f.k AS fk, t.k AS tk, mf.k AS mfk, mt.k AS mtk
    FROM io_stage_definitions d
    LEFT JOIN numbered f ON f.milestone = d.from_milestone LEFT JOIN numbered t ON t.milestone = d.to_milestone
    LEFT JOIN numbered mf ON mf.milestone = d.minus_from_milestone LEFT JOIN numbered mt ON mt.milestone = d.minus_to_milestone
), ends AS (
    SELECT w.io_n, d.def_no, d.minus_from_milestone, d.minus_to_milestone,
           w.tss[list_position(w.ks, d.fk)] AS f, w.tss[list_position(w.ks, d.tk)] AS t,
           w.tss[list_position(w.ks, d.mfk)] AS mf, w.tss[list_position(w.ks, d.mtk)] AS mt
    FROM per_io w CROSS JOIN defs d
)
SELECT io_n, def_no,
       (t - f) - CASE WHEN minus_from_milestone IS NULL THEN 0 ELSE mt - mf END AS dur,
       f AS from_ts, t AS to_ts,
       CASE WHEN f IS NULL THEN 1 WHEN t IS NULL THEN 2
            WHEN minus_from_milestone IS NOT NULL AND mf IS NULL THEN 3
            WHEN minus_to_milestone IS NOT NULL AND mt IS NULL THEN 4 END::UTINYINT AS missing_no
FROM ends;

-- io_stage_cuts: one row per io_stage_definitions row: the first definition (lowest def_no)
-- with the same cut, i.e. the same from_milestone, to_milestone, minus_from_milestone and minus_to_milestone, whose
-- durations (and missing milestones) are therefore equal for every io. Each s_notation stage
-- is an ntprof cut, and stock's end_to_end and host_completion are ntprof's too (23 cuts for
-- 34 definitions on a patched run): value counts taken once per cut serve every definition of it
-- (report_stage_values, intf_stream_breakdown). A view.
--   def_no, cut_def_no
CREATE OR REPLACE VIEW io_stage_cuts AS
SELECT def_no, min(def_no) OVER (PARTITION BY from_milestone, to_milestone, minus_from_milestone, minus_to_milestone) AS cut_def_no
FROM io_stage_definitions;

-- missing_milestone(missing_no, from_milestone, to_milestone, minus_from_milestone, minus_to_milestone): the name of the
-- milestone io_stage_durations.missing_no points at (NULL when none): the one place that
-- reads the code (io_stages, io_stage_check, io_stage_export). A macro.
CREATE OR REPLACE MACRO missing_milestone(missing_no, from_milestone, to_milestone, minus_from_milestone, minus_to_milestone) AS
    CASE missing_no WHEN 1 THEN from_milestone WHEN 2 THEN to_milestone WHEN 3 THEN minus_from_milestone
                    WHEN 4 THEN minus_to_milestone END;

-- io_stages: one row per (io, stage definition) of every stage set io_stage_definitions
-- holds: io_stage_durations with the names joined back. A view.
--   io_id, stage_set, stage, seq, parent, direction   as in stage_definitions
--   dur        ns; NULL when a milestone of this io is missing
--   from_ts, to_ts   when the stage's from and to milestones happened (io_milestones: ns,
--              initiator clock); NULL when missing. For a clock-free stage (minus_from_milestone)
--              dur is not to_ts - from_ts: the target's time inside the span is taken out
--   missing    the first missing milestone, NULL when dur is known
CREATE OR REPLACE VIEW io_stages AS
SELECT i.io_id, d.stage_set, d.stage, d.seq, d.parent, d.direction, s.dur, s.from_ts, s.to_ts,
       missing_milestone(s.missing_no, d.from_milestone, d.to_milestone, d.minus_from_milestone, d.minus_to_milestone) AS missing
FROM io_stage_durations s JOIN io i USING (io_n) JOIN io_stage_definitions d USING (def_no);

-- io_stage_check: one row per (io, stage set): do the top-level stages sum to end_to_end,
-- and do the children of each stage sum to it? A view: pipeline_stats reads it once (a
-- compare, which reads only a run's input errors, never computes it: 0.4 s a side at 1 M I/Os).
--   io_id, stage_set
--   end_to_end_ns     measured end-to-end (ns)
--   top_sum_ns        sum of the top-level stages (ns)
--   ok                true when every stage is known and the sums are equal
--   reason            NULL when ok; else 'missing <milestone>' or 'sum differs by N ns'
CREATE OR REPLACE VIEW io_stage_check AS
WITH s AS (
    SELECT s.io_n, d.stage_set,
           max(s.dur) FILTER (WHERE d.stage = 'end_to_end') AS end_to_end_ns,
           sum(s.dur) FILTER (WHERE d.parent IS NULL AND d.stage <> 'end_to_end')::BIGINT AS top_sum_ns,
           count(*) FILTER (WHERE d.parent IS NULL AND d.stage <> 'end_to_end' AND s.dur IS NULL) AS top_missing,
           min(missing_milestone(s.missing_no, d.from_milestone, d.to_milestone, d.minus_from_milestone, d.minus_to_milestone))
               FILTER (WHERE d.parent IS NULL) AS first_missing
    FROM io_stage_durations s JOIN io_stage_definitions d USING (def_no)
    GROUP BY s.io_n, d.stage_set
)
SELECT i.io_id, s.stage_set, s.end_to_end_ns, s.top_sum_ns,
       (s.top_missing = 0 AND s.end_to_end_ns IS NOT NULL AND s.top_sum_ns = s.end_to_end_ns) AS ok,
       CASE WHEN s.first_missing IS NOT NULL THEN 'missing ' || s.first_missing
            WHEN s.top_sum_ns <> s.end_to_end_ns THEN 'sum differs by ' || (s.top_sum_ns - s.end_to_end_ns) || ' ns'
       END AS reason
FROM s JOIN io i USING (io_n);

-- primary_stage_set: one row: the stage set every report leads with (the one rule: the
-- most preferred set of stage_sets that io_stages reports, i.e. ntprof on patched kernels,
-- else stock). The HTML page, the timeline, the interference text and compare
-- (cmp_stage_set, the same rule over two runs) use it.
--   stage_set
CREATE OR REPLACE VIEW primary_stage_set AS
SELECT s.stage_set FROM (SELECT DISTINCT stage_set FROM io_stage_definitions) p JOIN stage_sets s USING (stage_set)
ORDER BY s.preference LIMIT 1;

-- stage_coverage: one row per stage io_stages reports: for how many I/Os it was measured, and
-- whether the run's hosts can give every milestone it is cut at; when not, which one and why
-- (a probe that could not be placed, a host with stock events only, no trace of that side).
-- A stage is never measured between other points than its own: without its milestones it is
-- NULL (missing) for every I/O. A view.
--   stage_set, stage, seq
--   evidence     what can give it on any kernel (stage_evidence.evidence)
--   ios          I/Os of the run (io rows)
--   measured     I/Os with a duration
--   measurable   false when a milestone it needs comes from no host of its side
--   missing      that milestone ('i:' initiator, 't:' target, without '#last'); NULL when measurable
--   reason       why, and how to record it; NULL when measurable
CREATE OR REPLACE VIEW stage_coverage AS
WITH defs AS (
    SELECT def_no, stage_set, stage, seq, regexp_replace(ms, '#last$', '') AS milestone, pos
    FROM (SELECT def_no, stage_set, stage, seq, unnest([from_milestone, to_milestone, minus_from_milestone, minus_to_milestone]) AS ms,
                 unnest([1, 2, 3, 4]) AS pos
          FROM io_stage_definitions)
    WHERE ms IS NOT NULL
), parts AS (
    -- the events a milestone is made of (milestone_evidence; read or write is enough for execution)
    SELECT d.*, unnest(CASE d.milestone
        WHEN 't:nvmet_tcp_exec_req' THEN ['nvmet_tcp_exec_*']
        WHEN 't:nvmet_tcp_r2t_wait_start' THEN ['nvmet_tcp_setup_r2t_pdu', 'nvmet_tcp_exec_*']
        ELSE [substr(d.milestone, 3)] END) AS part,
        CASE WHEN d.milestone LIKE 'i:%' THEN 'initiator' ELSE 'target' END AS side
    FROM defs d
), side_hosts AS (
    -- the run's hosts of each side that have I/O
    SELECT DISTINCT 'initiator' AS side, initiator_host AS host FROM io
    UNION SELECT DISTINCT 'target', target_host FROM io WHERE target_host IS NOT NULL
), gives AS (
    -- (host, part) pairs the host can give: a stock event type it recorded, or a patched event
    -- its milestone source gives: every one for the patched events (the series is one), those
    -- of the placed probes (host_milestone_events)
    SELECT host, event AS part FROM host_event_types WHERE system IN ('nvme', 'nvmet', 'block')
    UNION SELECT host, event FROM host_milestone_events
    UNION SELECT host, 'nvmet_tcp_exec_*' FROM host_milestone_events WHERE event IN ('nvmet_tcp_exec_read_req', 'nvmet_tcp_exec_write_req')
    -- the milestones of the target's ACKs (milestone_evidence 'tcp_ack'): every host that recorded them
    UNION SELECT DISTINCT n.host, substr(m.milestone, 3) FROM nvme_tcp_ports n, milestone_evidence m WHERE m.evidence = 'tcp_ack'
    UNION SELECT m.host, p.part FROM host_milestones m, (SELECT DISTINCT part FROM parts) p
    WHERE m.source = 'tracepoint' AND (p.part LIKE 'nvme_tcp%' OR p.part LIKE 'nvmet_tcp%')
), checked AS (
    SELECT p.def_no, p.milestone, p.pos, p.part, p.side,
           count(sh.host) AS hosts,
           count(g.host) AS hosts_giving,
           min(sh.host) AS first_host
    FROM parts p LEFT JOIN side_hosts sh ON sh.side = p.side
    LEFT JOIN gives g ON g.host = sh.host AND g.part = p.part
    GROUP BY ALL
), first_gap AS (
    SELECT c.*, hm.source,
           (SELECT n->>'reason' FROM (SELECT unnest(from_json(r.host_json->'probes'->'not_placed', '["JSON"]')) AS n
                                      FROM run_hosts r WHERE r.host = c.first_host)
            WHERE list_contains(from_json(n->'milestones', '["VARCHAR"]'),
                                CASE WHEN c.part = 'nvmet_tcp_exec_*' THEN 'nvmet_tcp_exec_req' ELSE c.part END)
              AND NOT coalesce(TRY_CAST(n->>'another_placed' AS BOOLEAN), false)
            LIMIT 1) AS probe_reason
    FROM checked c LEFT JOIN host_milestones hm ON hm.host = c.first_host
    WHERE c.hosts_giving = 0
    QUALIFY row_number() OVER (PARTITION BY c.def_no ORDER BY c.pos, c.part) = 1
), measured AS (
    SELECT def_no, count(*) AS ios, count(dur) AS measured FROM io_stage_durations GROUP BY def_no
)
SELECT d.stage_set, d.stage, d.seq, e.evidence,
       coalesce(m.ios, 0) AS ios, coalesce(m.measured, 0) AS measured,
       g.def_no IS NULL AS measurable,
       g.milestone AS missing,
       CASE WHEN g.def_no IS NULL THEN NULL
            WHEN g.hosts = 0 THEN 'the run has no ' || g.side || ' trace'
            WHEN g.part IN (SELECT substr(milestone, 3) FROM milestone_evidence WHERE evidence = 'tcp_ack')
              THEN g.first_host || ' did not record its NVMe/TCP connections (record them: nvme_acks=1, a kernel with tcp:tcp_probe)'
            WHEN g.part NOT LIKE 'nvme_tcp%' AND g.part NOT LIKE 'nvmet_tcp%'
              THEN g.first_host || ' did not record ' || g.part || ' (record it: block=all)'
            WHEN g.source = 'none' OR g.source IS NULL
              THEN g.first_host || ' recorded stock events only: record it with probes=on (a kernel with probe events and BTF) or the patched modules'
            WHEN g.source = 'probe'
              THEN g.first_host || ': no probe gives ' || g.part || coalesce(' (' || g.probe_reason || ')', '')
            ELSE g.first_host || ': its patched events lack ' || g.part || ' (an older patch series: rebuild the modules)' END AS reason
FROM io_stage_definitions d
LEFT JOIN first_gap g USING (def_no)
LEFT JOIN measured m USING (def_no)
LEFT JOIN stage_evidence e USING (stage_set, stage);
