-- ctrl_map: one row per initiator controller: which target controller (cntlid) it talks to.
-- On stock kernels nvme_setup_cmd's ctrl_id is the host instance (nvmeN), not the cntlid
-- the target knows. Sources, in order: host.json nvme_controllers (instance -> cntlid);
-- else nvme_tcp events (patched kernels carry both); else one I/O controller on each side; else the target controller sharing the most
-- command fingerprints (qid, cid, opcode, slba, nlb) with it.
--   initiator_host, ctrl_id   initiator host and its controller instance
--   target_host, cntlid       target host and controller id
--   source       'host.json', 'nvme_tcp events', 'single controller', 'fingerprint'
--   score        commands sharing a fingerprint (NULL for host.json)
CREATE OR REPLACE TABLE ctrl_map AS
WITH ic AS (
    SELECT DISTINCT host, ctrl_id FROM nvme_commands WHERE role = 'initiator' AND kind = 'io'
), tc AS (
    SELECT DISTINCT host, ctrl_id FROM nvme_commands WHERE role = 'target' AND kind = 'io'
), from_json AS (
    SELECT h.host, TRY_CAST(c->>'instance' AS BIGINT) AS ctrl_id, TRY_CAST(c->>'cntlid' AS BIGINT) AS cntlid
    FROM (SELECT host, unnest(from_json(host_json->'nvme_controllers', '["JSON"]')) AS c
          FROM run_hosts WHERE host_json IS NOT NULL) h
), json_map AS (
    SELECT ic.host AS initiator_host, ic.ctrl_id, tc.host AS target_host, tc.ctrl_id AS cntlid,
           'host.json' AS source, NULL::BIGINT AS score
    FROM ic JOIN from_json j ON j.host = ic.host AND j.ctrl_id = ic.ctrl_id
    JOIN tc ON tc.ctrl_id = j.cntlid
    QUALIFY count(*) OVER (PARTITION BY ic.host, ic.ctrl_id) = 1
), from_tcp AS (
    -- patched kernels: nvme_tcp events carry both the host instance and the cntlid
    SELECT DISTINCT e.host, e.ctrl_id, tc.host, e.cntlid, 'nvme_tcp events', NULL::BIGINT
    FROM events e JOIN tc ON tc.ctrl_id = e.cntlid
    WHERE e.system = 'nvme_tcp' AND e.cntlid IS NOT NULL AND e.cntlid <> 65535
), single AS (
    SELECT ic.host, ic.ctrl_id, tc.host, tc.ctrl_id, 'single controller', NULL::BIGINT
    FROM ic, tc
    WHERE (SELECT count(*) FROM ic) = 1 AND (SELECT count(*) FROM tc) = 1
), fp AS (
    SELECT i.host AS ih, i.ctrl_id AS ictrl, t.host AS th, t.ctrl_id AS tctrl, count(*) AS score
    FROM nvme_commands i JOIN nvme_commands t
      ON i.role = 'initiator' AND t.role = 'target' AND i.kind = 'io' AND t.kind = 'io'
     AND i.qid = t.qid AND i.cid = t.cid AND i.opcode = t.opcode
     AND i.slba = t.slba AND i.nlb = t.nlb
    GROUP BY ALL
), fingerprint AS (
    -- ties: the first target host and controller by name (both from the same row)
    SELECT ih, ictrl, arg_max(th, (score, -rank_ht)), arg_max(tctrl, (score, -rank_ht)), 'fingerprint', max(score)
    FROM (SELECT *, dense_rank() OVER (ORDER BY th, tctrl) AS rank_ht FROM fp) GROUP BY ih, ictrl
), ranked AS (
    SELECT *, 1 AS prio FROM json_map
    UNION ALL SELECT *, 2 FROM from_tcp
    UNION ALL SELECT *, 3 FROM single
    UNION ALL SELECT *, 4 FROM fingerprint
)
SELECT initiator_host, ctrl_id, target_host, cntlid, source, score
FROM ranked QUALIFY row_number() OVER (PARTITION BY initiator_host, ctrl_id ORDER BY prio) = 1;

-- clock_coarse: one row: a first estimate of the offset (target clock - initiator clock)
-- from the first 4096 I/O commands of each side, each joined to every command of the other
-- side with the same key and fingerprint (qid, cid, opcode, slba, nlb): the deepest overlap
-- of their bounds (see clock_candidates). It only places the 1 s buckets that keep
-- clock_candidates linear; clock_offset is the estimate to use. When fingerprints repeat
-- so often that this would pair more than 2^20 commands per side (a run that repeats the
-- same I/O pattern), fewer than 4096 first commands are taken, as many as fit: the cost
-- stays bounded whatever the run's length.
--   coarse_offset_ns   ns;  pairs   candidate pairs used
CREATE OR REPLACE TABLE clock_coarse AS
WITH i AS (
    SELECT c.*, m.target_host, m.cntlid,
           row_number() OVER (ORDER BY c.submit_ts) AS rn
    FROM nvme_commands c JOIN ctrl_map m ON m.initiator_host = c.host AND m.ctrl_id = c.ctrl_id
    WHERE c.role = 'initiator' AND c.kind = 'io' AND c.state = 'complete'
), t AS (
    SELECT *, row_number() OVER (ORDER BY submit_ts) AS rn
    FROM nvme_commands WHERE role = 'target' AND kind = 'io' AND state = 'complete'
), fp AS (
    -- commands per fingerprint on each side, with slba (NULL: flush etc., matches any)
    SELECT 'i' AS side, target_host AS host, cntlid AS ctrl_id, qid, cid, opcode, slba, nlb, count(*) AS n
    FROM i GROUP BY ALL
    UNION ALL
    SELECT 't', host, ctrl_id, qid, cid, opcode, slba, nlb, count(*) FROM t GROUP BY ALL
), fp_key AS (
    SELECT side, host, ctrl_id, qid, cid, opcode, sum(n) AS n_all, coalesce(sum(n) FILTER (WHERE slba IS NULL), 0) AS n_null
    FROM fp GROUP BY ALL
), first_i AS (
    -- the first initiator commands whose pairs with the target fit the budget
    SELECT * FROM (
        SELECT i.*, sum(CASE WHEN i.slba IS NULL THEN coalesce(k.n_all, 0)
                             ELSE coalesce(f.n, 0) + coalesce(k.n_null, 0) END) OVER (ORDER BY i.rn) AS cum,
               CASE WHEN i.slba IS NULL THEN coalesce(k.n_all, 0) ELSE coalesce(f.n, 0) + coalesce(k.n_null, 0) END AS m
        FROM i
        LEFT JOIN fp f ON f.side = 't' AND f.host = i.target_host AND f.ctrl_id = i.cntlid AND f.qid = i.qid
         AND f.cid = i.cid AND f.opcode = i.opcode AND f.slba = i.slba AND f.nlb = i.nlb
        LEFT JOIN fp_key k ON k.side = 't' AND k.host = i.target_host AND k.ctrl_id = i.cntlid AND k.qid = i.qid
         AND k.cid = i.cid AND k.opcode = i.opcode
        WHERE i.rn <= 4096)
    WHERE cum - m < 1048576
), first_t AS (
    SELECT * FROM (
        SELECT t.*, sum(CASE WHEN t.slba IS NULL THEN coalesce(k.n_all, 0)
                             ELSE coalesce(f.n, 0) + coalesce(k.n_null, 0) END) OVER (ORDER BY t.rn) AS cum,
               CASE WHEN t.slba IS NULL THEN coalesce(k.n_all, 0) ELSE coalesce(f.n, 0) + coalesce(k.n_null, 0) END AS m
        FROM t
        LEFT JOIN fp f ON f.side = 'i' AND f.host = t.host AND f.ctrl_id = t.ctrl_id AND f.qid = t.qid
         AND f.cid = t.cid AND f.opcode = t.opcode AND f.slba = t.slba AND f.nlb = t.nlb
        LEFT JOIN fp_key k ON k.side = 'i' AND k.host = t.host AND k.ctrl_id = t.ctrl_id AND k.qid = t.qid
         AND k.cid = t.cid AND k.opcode = t.opcode
        WHERE t.rn <= 4096)
    WHERE cum - m < 1048576
), pairs AS (
    SELECT i.host AS ih, i.ctrl_id AS ic, i.qid AS iq, i.cid AS ii, i.submit_ts AS its,
           t.host AS th, t.ctrl_id AS tc, t.qid AS tq, t.cid AS ti, t.submit_ts AS tts,
           t.complete_ts - i.complete_ts AS lo, t.submit_ts - i.submit_ts AS hi
    FROM first_i i JOIN t
      ON t.host = i.target_host AND t.ctrl_id = i.cntlid AND t.qid = i.qid AND t.cid = i.cid
     AND t.opcode = i.opcode
     AND (i.slba IS NULL OR t.slba IS NULL OR (i.slba = t.slba AND i.nlb = t.nlb))
    UNION ALL
    -- the other way round, without the pairs the first join already has
    SELECT i.host, i.ctrl_id, i.qid, i.cid, i.submit_ts, t.host, t.ctrl_id, t.qid, t.cid, t.submit_ts,
           t.complete_ts - i.complete_ts, t.submit_ts - i.submit_ts
    FROM i JOIN first_t t
      ON t.host = i.target_host AND t.ctrl_id = i.cntlid AND t.qid = i.qid AND t.cid = i.cid
     AND t.opcode = i.opcode
     AND (i.slba IS NULL OR t.slba IS NULL OR (i.slba = t.slba AND i.nlb = t.nlb))
    WHERE i.rn > (SELECT coalesce(max(rn), 0) FROM first_i)
), cand AS (
    SELECT lo, hi FROM pairs WHERE lo <= hi
), pts AS (
    SELECT lo AS x, 1 AS d FROM cand UNION ALL SELECT hi, -1 FROM cand
), depth AS (
    SELECT x, d, sum(d) OVER (ORDER BY x, d DESC ROWS UNBOUNDED PRECEDING) AS depth,
           lead(x) OVER (ORDER BY x, d DESC) AS next_x
    FROM pts
)
-- equally deep intervals (a tie: e.g. a run repeating one I/O pattern) resolve to the one
-- nearest 0, then the lower: one answer however DuckDB schedules or spills the sweep
SELECT ((arg_max(x, (depth, -abs(x), -x)) + arg_max(next_x, (depth, -abs(x), -x))) // 2)::BIGINT AS coarse_offset_ns,
       (SELECT count(*) FROM cand) AS pairs
FROM depth WHERE d = 1;

-- clock_candidates: one row per (initiator command, target command) that may be the same
-- command: same target controller, qid, cid, opcode (and slba/nlb when both sides have
-- them), both complete, target submit within 1 s of the initiator submit after the coarse
-- offset, and the target lifetime fits inside the initiator's for some clock offset.
-- Each pair bounds offset = target clock - initiator clock:
-- target receive after host send => offset <= hi; host receive after target send =>
-- offset >= lo.
--   i_cmd, t_cmd        nvme_commands.cmd_key of each side
--   i_submit_ts         initiator submit time (ns, initiator clock)
--   lo_ns, hi_ns        bounds on the offset from this pair (ns)
--   fingerprinted       true when slba/nlb were compared too
CREATE OR REPLACE TABLE clock_candidates AS
WITH i AS (
    SELECT c.*, m.target_host, m.cntlid,
           (c.submit_ts + (SELECT coarse_offset_ns FROM clock_coarse)) // 1000000000 AS b
    FROM nvme_commands c JOIN ctrl_map m ON m.initiator_host = c.host AND m.ctrl_id = c.ctrl_id
    WHERE c.role = 'initiator' AND c.kind = 'io' AND c.state = 'complete'
), t AS (
    SELECT *, unnest([submit_ts // 1000000000 - 1, submit_ts // 1000000000, submit_ts // 1000000000 + 1]) AS b
    FROM nvme_commands WHERE role = 'target' AND kind = 'io' AND state = 'complete'
)
SELECT i.cmd_key AS i_cmd, t.cmd_key AS t_cmd, i.submit_ts AS i_submit_ts,
       t.complete_ts - i.complete_ts AS lo_ns, t.submit_ts - i.submit_ts AS hi_ns,
       (i.slba IS NOT NULL AND t.slba IS NOT NULL) AS fingerprinted
FROM i JOIN t
  ON t.host = i.target_host AND t.ctrl_id = i.cntlid AND t.qid = i.qid AND t.cid = i.cid
 AND t.opcode = i.opcode AND t.b = i.b
 AND (i.slba IS NULL OR t.slba IS NULL OR (i.slba = t.slba AND i.nlb = t.nlb))
WHERE t.complete_ts - i.complete_ts <= t.submit_ts - i.submit_ts;

-- clock_offset_slices: one row per tenth of the run (by initiator submit time), plus one
-- row for the whole run (slice = -1): the offset interval most candidate pairs agree on
-- (a sweep over the pairs' [lo, hi] bounds: the deepest overlap).
--   slice            0..9, or -1 for the whole run
--   t_ns             middle of the slice (ns, initiator clock)
--   offset_lo_ns, offset_hi_ns   the agreed interval (ns, target - initiator)
--   pairs_agreeing   candidate pairs whose bounds contain that interval
--   pairs            candidate pairs in the slice
CREATE OR REPLACE TABLE clock_offset_slices AS
WITH span AS (
    SELECT min(i_submit_ts) AS t0, greatest(max(i_submit_ts) - min(i_submit_ts), 1) AS len
    FROM clock_candidates
), c AS (
    SELECT c.*, least(floor((i_submit_ts - t0) * 10.0 / len), 9)::INTEGER AS slice
    FROM clock_candidates c, span
), both_levels AS (
    SELECT slice, lo_ns, hi_ns, i_submit_ts FROM c
    UNION ALL SELECT -1, lo_ns, hi_ns, i_submit_ts FROM c
), pts AS (
    SELECT slice, lo_ns AS x, 1 AS d FROM both_levels
    UNION ALL SELECT slice, hi_ns, -1 FROM both_levels
), depth AS (
    SELECT slice, x, d,
           sum(d) OVER (PARTITION BY slice ORDER BY x, d DESC ROWS UNBOUNDED PRECEDING) AS depth,
           lead(x) OVER (PARTITION BY slice ORDER BY x, d DESC) AS next_x
    FROM pts
), best AS (
    -- ties: the interval nearest 0, then the lower (as in clock_coarse): one deterministic answer
    SELECT slice, arg_max(x, (depth, -abs(x), -x)) AS offset_lo_ns,
           arg_max(next_x, (depth, -abs(x), -x)) AS offset_hi_ns,
           max(depth) AS pairs_agreeing
    FROM depth WHERE d = 1 GROUP BY slice
)
SELECT b.slice,
       (SELECT CASE WHEN b.slice < 0 THEN t0 + len // 2 ELSE t0 + (len * (2 * b.slice + 1)) // 20 END
        FROM span)::BIGINT AS t_ns,
       b.offset_lo_ns, b.offset_hi_ns, b.pairs_agreeing::BIGINT AS pairs_agreeing, n.pairs
FROM best b JOIN (SELECT slice, count(*) AS pairs FROM both_levels GROUP BY slice) n USING (slice);

-- clock_offset_estimated: one row: the offset between the target and initiator clocks as
-- the commands themselves bound it (for hosts with independent clocks).
--   offset_ns        target clock - initiator clock, at t0_ns (ns)
--   uncertainty_ns   half the width of the whole-run agreed interval (ns)
--   drift_ppm        slope of the per-slice offsets over initiator time (ns per ms = ppm);
--                    0 unless more command pairs agree with the slope than without
--   t0_ns            initiator time the offset refers to (middle of the run)
--   method           how it was found
--   pairs_agreeing, pairs   from the whole-run sweep
--   agreed_lo_ns, agreed_hi_ns   the whole-run agreed interval (ns)
-- With asymmetric paths this splits the two one-way delays evenly: only a synchronized
-- clock (clock_sync_claim) tells them apart.
CREATE OR REPLACE VIEW clock_offset_estimated AS
WITH g AS (SELECT * FROM clock_offset_slices WHERE slice = -1),
s AS (
    SELECT regr_slope((offset_lo_ns + offset_hi_ns) / 2.0, t_ns::DOUBLE) AS slope,
           count(*) AS n
    FROM clock_offset_slices WHERE slice >= 0 AND offset_hi_ns - offset_lo_ns < 10 * (
        SELECT greatest(offset_hi_ns - offset_lo_ns, 1000) FROM g)
), fit AS (
    SELECT CASE WHEN s.n >= 3 THEN coalesce(s.slope, 0) * 1e6 ELSE 0 END AS slope_ppm,
           (g.offset_lo_ns + g.offset_hi_ns) / 2 AS mid, (g.offset_hi_ns - g.offset_lo_ns) / 2 + 1000 AS tol,
           g.t_ns AS t0
    FROM g, s
), agree AS (
    -- a slope fitted over few or wide slices can be noise (thousands of ppm on a short,
    -- slow run): keep it only when more command pairs agree with it than without it
    SELECT count(*) FILTER (WHERE abs((c.lo_ns + c.hi_ns) / 2 - f.mid - f.slope_ppm * (c.i_submit_ts - f.t0) / 1e6)
                                  <= (c.hi_ns - c.lo_ns) / 2 + f.tol) AS with_drift,
           count(*) FILTER (WHERE abs((c.lo_ns + c.hi_ns) / 2 - f.mid) <= (c.hi_ns - c.lo_ns) / 2 + f.tol) AS without_drift
    FROM clock_candidates c, fit f
)
SELECT ((g.offset_lo_ns + g.offset_hi_ns) // 2)::BIGINT AS offset_ns,
       ((g.offset_hi_ns - g.offset_lo_ns) // 2)::BIGINT AS uncertainty_ns,
       CASE WHEN agree.with_drift > agree.without_drift THEN fit.slope_ppm ELSE 0 END AS drift_ppm,
       g.t_ns AS t0_ns,
       'deepest overlap of per-command bounds (target receive after host send, host receive '
       || 'after target send); drift = slope over ten time slices' AS method,
       g.pairs_agreeing, g.pairs, g.offset_lo_ns AS agreed_lo_ns, g.offset_hi_ns AS agreed_hi_ns
FROM g, fit, agree;

-- clock_sync_claim: one row: whether the hosts say they traced on one synchronized clock.
-- They do when the initiator and the target both recorded with the trace clock 'tai'
-- (CLOCK_TAI, disciplined by PTP or NTP); the claimed error is the largest
-- host.json clock_max_error_ns (capture key clock_error_us), else assumed.
--   claimed          true when both sides traced on tai
--   max_error_ns     how far apart the two clocks may be (ns)
--   error_source     'host.json' or 'assumed (no clock_max_error_ns in host.json)'
CREATE OR REPLACE VIEW clock_sync_claim AS
WITH h AS (
    SELECT h.role, h.trace_clock, TRY_CAST(r.host_json->>'clock_max_error_ns' AS BIGINT) AS err_ns
    FROM hosts h JOIN run_hosts r USING (host)
    WHERE h.role IN ('initiator', 'target')
)
SELECT count(DISTINCT role) = 2 AND bool_and(coalesce(trace_clock, '') = 'tai') AS claimed,
       coalesce(max(err_ns), 100000) AS max_error_ns,
       CASE WHEN max(err_ns) IS NOT NULL THEN 'host.json'
            ELSE 'assumed (no clock_max_error_ns in host.json)' END AS error_source
FROM h;

-- clock_offset: one row: the offset to use (same columns as clock_offset_estimated).
-- A synchronized clock (clock_sync_claim) gives offset 0 with its claimed error as the
-- uncertainty, but only when the commands agree: the interval they allow must reach
-- within the claimed error of 0, else the claim is wrong (pipeline_stats says so) and
-- the estimate is used.
--   synced            true when offset 0 of the synchronized clock is used
--   estimated_offset_ns, estimated_uncertainty_ns   the commands' own estimate (ns)
-- offset at initiator time t: offset_ns + drift_ppm * (t - t0_ns) / 1e6.
CREATE OR REPLACE TABLE clock_offset AS
WITH e AS (SELECT * FROM clock_offset_estimated), c AS (SELECT * FROM clock_sync_claim),
ok AS (
    SELECT c.claimed AND e.agreed_lo_ns <= c.max_error_ns AND e.agreed_hi_ns >= -c.max_error_ns AS synced
    FROM e, c
)
SELECT CASE WHEN ok.synced THEN 0 ELSE e.offset_ns END::BIGINT AS offset_ns,
       CASE WHEN ok.synced THEN c.max_error_ns ELSE e.uncertainty_ns END::BIGINT AS uncertainty_ns,
       CASE WHEN ok.synced THEN 0 ELSE e.drift_ppm END AS drift_ppm,
       e.t0_ns,
       CASE WHEN ok.synced THEN 'synchronized trace clocks (tai on both hosts), error <= '
                                || c.max_error_ns || ' ns (' || c.error_source || ')'
            ELSE e.method END AS method,
       e.pairs_agreeing, e.pairs, e.agreed_lo_ns, e.agreed_hi_ns, ok.synced,
       e.offset_ns AS estimated_offset_ns, e.uncertainty_ns AS estimated_uncertainty_ns
FROM e, c, ok;

-- command_match: one row per matched (initiator command, target command) pair: the
-- candidate whose bounds contain the offset at its time (within the uncertainty),
-- each command used once (closest to the estimate wins).
--   i_cmd, t_cmd      nvme_commands.cmd_key of each side
--   offset_at_ns      the clock offset at this command's time (ns, target - initiator)
CREATE OR REPLACE TABLE command_match AS
WITH c AS (
    SELECT cc.*, (o.offset_ns + o.drift_ppm * (cc.i_submit_ts - o.t0_ns) / 1e6)::BIGINT AS offset_at_ns,
           o.uncertainty_ns
    FROM clock_candidates cc, clock_offset o
), ok AS (
    SELECT *, abs((lo_ns + hi_ns) / 2 - offset_at_ns) AS miss
    FROM c WHERE lo_ns <= offset_at_ns + uncertainty_ns + 1000 AND hi_ns >= offset_at_ns - uncertainty_ns - 1000
    QUALIFY row_number() OVER (PARTITION BY i_cmd ORDER BY miss, t_cmd) = 1
)
SELECT i_cmd, t_cmd, offset_at_ns FROM ok
QUALIFY row_number() OVER (PARTITION BY t_cmd ORDER BY miss, i_cmd) = 1;

-- io: one row per initiator I/O command (qid > 0), with its block request, its target
-- command and the target's backing-device requests when found. Times are ns on their
-- own host's clock (i_* initiator, t_* target).
--   io_id          initiator nvme_commands.cmd_key
--   initiator_host, ctrl_id, cntlid, qid, cid   identity (cntlid via ctrl_map)
--   io_type        read / write / flush / ...;  size_bytes  data bytes (block request, else nlb)
--   disk, slba     device and start LBA
--   cpu            CPU that submitted (nvme_setup_cmd);  pid, comm  the process (bio owner)
--   i_bio_queue_ts, i_getrq_ts, i_setup_ts, i_rq_issue_ts, i_complete_rq_ts, i_rq_complete_ts
--   target_host, t_cmd, t_init_ts, t_complete_ts              nvmet_req_init / _complete
--   t_dev_requests, t_dev_queue_ts, t_dev_issue_ts, t_dev_complete_ts  backing device
--   offset_ns      clock offset applied to this io (target - initiator, ns)
--   status         NVMe status on the initiator
--   match_state    'matched', or why not: 'initiator_incomplete', 'no_target_controller',
--                  'outside_target_trace', 'no_target_command'
--   queue_key      the transport queue (= its TCP connection): '<initiator host>/c<ctrl_id>/q<qid>',
--                  the one queue key of every report, export and interference view
CREATE OR REPLACE TABLE io AS
WITH tw AS (
    SELECT h.host, h.first_ts, h.last_ts FROM hosts h WHERE h.role = 'target'
), o AS (SELECT * FROM clock_offset)
SELECT i.cmd_key AS io_id, i.host AS initiator_host, i.ctrl_id, m.cntlid, i.qid, i.cid,
       coalesce(i.io_type, b.io_type) AS io_type,
       coalesce(b.bytes, i.nlb << (9 + coalesce(ls.lba_shift, 0)), 0)::BIGINT AS size_bytes,
       i.disk, i.slba, i.submit_cpu AS cpu,
       coalesce(b.queue_pid, i.submit_pid) AS pid, coalesce(b.queue_comm, i.submit_comm) AS comm,
       b.queue_ts AS i_bio_queue_ts, b.getrq_ts AS i_getrq_ts, i.submit_ts AS i_setup_ts,
       b.issue_ts AS i_rq_issue_ts, i.complete_ts AS i_complete_rq_ts, b.complete_ts AS i_rq_complete_ts,
       m.target_host, cm.t_cmd, t.submit_ts AS t_init_ts, t.complete_ts AS t_complete_ts,
       td.requests AS t_dev_requests, td.queue_ts AS t_dev_queue_ts, td.issue_ts AS t_dev_issue_ts,
       td.complete_ts AS t_dev_complete_ts,
       coalesce(cm.offset_at_ns, (o.offset_ns + o.drift_ppm * (i.submit_ts - o.t0_ns) / 1e6)::BIGINT) AS offset_ns,
       i.status,
       CASE WHEN cm.t_cmd IS NOT NULL THEN 'matched'
            WHEN i.state <> 'complete' THEN 'initiator_incomplete'
            WHEN m.cntlid IS NULL THEN 'no_target_controller'
            WHEN i.submit_ts + o.offset_ns > (SELECT max(last_ts) FROM tw WHERE tw.host = m.target_host)
              OR i.complete_ts + o.offset_ns < (SELECT min(first_ts) FROM tw WHERE tw.host = m.target_host)
              THEN 'outside_target_trace'
            ELSE 'no_target_command' END AS match_state,
       i.host || '/c' || i.ctrl_id || '/q' || i.qid AS queue_key
FROM nvme_commands i
LEFT JOIN lba_shift ls ON ls.host = i.host
LEFT JOIN host_block_link hb ON hb.submit_key = i.host || '/' || i.submit_cpu || '/' || i.submit_ts
LEFT JOIN block_requests b ON b.req_key = hb.req_key
LEFT JOIN ctrl_map m ON m.initiator_host = i.host AND m.ctrl_id = i.ctrl_id
LEFT JOIN command_match cm ON cm.i_cmd = i.cmd_key
LEFT JOIN nvme_commands t ON t.cmd_key = cm.t_cmd
LEFT JOIN target_device td ON td.cmd_key = cm.t_cmd
LEFT JOIN o ON true
WHERE i.role = 'initiator' AND i.kind = 'io';

-- unmatched_target_commands: one row per target I/O command no initiator command matched.
--   t_cmd          nvme_commands.cmd_key;  host, ctrl_id, qid, cid, submit_ts (target clock)
--   reason         'target_incomplete', 'no_initiator_controller' (no initiator controller
--                  maps to this cntlid), 'outside_initiator_trace' (before or after the
--                  initiator's trace, after clock alignment), 'no_initiator_command'
CREATE OR REPLACE VIEW unmatched_target_commands AS
WITH iw AS (
    SELECT m.cntlid, m.target_host, min(h.first_ts) AS first_ts, max(h.last_ts) AS last_ts
    FROM ctrl_map m JOIN hosts h ON h.host = m.initiator_host GROUP BY ALL
), o AS (SELECT * FROM clock_offset)
SELECT t.cmd_key AS t_cmd, t.host, t.ctrl_id, t.qid, t.cid, t.submit_ts,
       CASE WHEN t.state <> 'complete' THEN 'target_incomplete'
            WHEN iw.cntlid IS NULL THEN 'no_initiator_controller'
            WHEN coalesce(t.submit_ts, t.complete_ts) - coalesce(o.offset_ns, 0) < iw.first_ts
              OR coalesce(t.submit_ts, t.complete_ts) - coalesce(o.offset_ns, 0) > iw.last_ts
              THEN 'outside_initiator_trace'
            ELSE 'no_initiator_command' END AS reason
FROM nvme_commands t
LEFT JOIN iw ON iw.target_host = t.host AND iw.cntlid = t.ctrl_id
LEFT JOIN o ON true
WHERE t.role = 'target' AND t.kind = 'io'
  AND t.cmd_key NOT IN (SELECT t_cmd FROM command_match);
