-- requires: core/hosts, core/events, core/commands, core/tenants
-- input: run_hosts, raw_nvme  the run's host folders and nvme events (sql/views.py)

-- ctrl_map: one row per initiator controller: which target controller (cntlid) it talks to.
-- On stock kernels nvme_setup_cmd's ctrl_id is the host instance (nvmeN), not the cntlid
-- the target knows. Sources, in order: host.json nvme_controllers (instance -> cntlid; when
-- several targets have that cntlid, the one whose host.json nvmet ports serve the
-- controller's address and subsystem, else its subsystem); else nvme_tcp events (patched
-- kernels carry both; used when one target host has that cntlid); else one I/O controller
-- on each side; else the target controller sharing the most command fingerprints
-- (qid, cid, opcode, slba, nlb) with it. A controller whose host.json subsystem no target's
-- host.json serves talks to a target outside the run: it maps to none (its I/O is counted
-- as 'no_target_controller', not joined to a stranger with the same cntlid).
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
    SELECT h.host, TRY_CAST(c->>'instance' AS BIGINT) AS ctrl_id, TRY_CAST(c->>'cntlid' AS BIGINT) AS cntlid,
           c->>'subsysnqn' AS nqn,
           nullif(regexp_extract(c->>'address', 'traddr=([^,]+)', 1), '') AS traddr,
           nullif(regexp_extract(c->>'address', 'trsvcid=([^,]+)', 1), '') AS trsvcid
    FROM (SELECT host, unnest(from_json(host_json->'nvme_controllers', '["JSON"]')) AS c
          FROM run_hosts WHERE host_json IS NOT NULL) h
), target_ports AS (
    -- what each target's nvmet configfs serves: (address, port, subsystem)
    SELECT host, p->>'traddr' AS traddr, p->>'trsvcid' AS trsvcid,
           unnest(coalesce(from_json(p->'subsystems', '["VARCHAR"]'), [])) AS nqn
    FROM (SELECT host, unnest(from_json(host_json->'nvmet'->'ports', '["JSON"]')) AS p
          FROM run_hosts WHERE host_json IS NOT NULL)
), elsewhere AS (
    -- controllers of a subsystem that none of the run's targets serves, when every target
    -- says what it serves
    SELECT j.host, j.ctrl_id FROM from_json j
    WHERE j.nqn IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM target_ports p WHERE p.nqn = j.nqn)
      AND NOT EXISTS (SELECT 1 FROM tc WHERE tc.host NOT IN (SELECT host FROM target_ports))
), json_fit AS (
    SELECT ic.host AS initiator_host, ic.ctrl_id, tc.host AS target_host, tc.ctrl_id AS cntlid,
           CASE WHEN EXISTS (SELECT 1 FROM target_ports p WHERE p.host = tc.host AND p.nqn = j.nqn
                              AND p.traddr = j.traddr AND p.trsvcid = j.trsvcid) THEN 2
                WHEN EXISTS (SELECT 1 FROM target_ports p WHERE p.host = tc.host AND p.nqn = j.nqn) THEN 1
                ELSE 0 END AS fit
    FROM ic JOIN from_json j ON j.host = ic.host AND j.ctrl_id = ic.ctrl_id
    JOIN tc ON tc.ctrl_id = j.cntlid
), json_map AS (
    -- the best-fitting target, when it is the only one at that fit
    SELECT initiator_host, ctrl_id, target_host, cntlid, 'host.json' AS source, NULL::BIGINT AS score
    FROM (SELECT *, max(fit) OVER (PARTITION BY initiator_host, ctrl_id) AS best FROM json_fit)
    WHERE fit = best
    QUALIFY count(*) OVER (PARTITION BY initiator_host, ctrl_id) = 1
), from_tcp AS (
    -- patched kernels: nvme_tcp events carry both the host instance and the cntlid
    SELECT DISTINCT e.host, e.ctrl_id, tc.host, e.cntlid, 'nvme_tcp events', NULL::BIGINT
    FROM events e
    JOIN (SELECT ctrl_id, any_value(host) AS host FROM tc GROUP BY ctrl_id HAVING count(*) = 1) tc
      ON tc.ctrl_id = e.cntlid
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
FROM ranked
WHERE (initiator_host, ctrl_id) NOT IN (SELECT (host, ctrl_id) FROM elsewhere)
QUALIFY row_number() OVER (PARTITION BY initiator_host, ctrl_id ORDER BY prio) = 1;

-- Clocks: every host has its own trace clock, so each (initiator host, target host) pair of
-- ctrl_map gets its own offset. The clock_* tables below carry that pair as their first two
-- columns; a two-host run has one row (or one set of rows) per table.

-- clock_coarse: one row per host pair: a first estimate of the offset (target clock -
-- initiator clock) from the first 4096 I/O commands of each side of the pair, each joined to
-- every command of the other side with the same key and fingerprint (qid, cid, opcode, slba,
-- nlb): the deepest overlap of their bounds (see clock_candidates). It only places the 1 s
-- buckets that keep clock_candidates linear; clock_offset is the estimate to use. When
-- fingerprints repeat so often that this would pair more than 2^18 commands per side (a run
-- that repeats the same I/O pattern), fewer than 4096 first commands are taken, as many as
-- fit: the cost stays bounded whatever the run's length (2^18 pairs: about 1 s less than 2^20
-- at 773 k I/Os of a scaled run, whose pattern repeats 121 times; the offset is the same).
--   initiator_host, target_host   the host pair
--   coarse_offset_ns   ns;  pairs   candidate pairs used
CREATE OR REPLACE TABLE clock_coarse AS
-- The windows partition on a number per host pair (pair_no), not on the two host names: DuckDB
-- sorts on one integer faster (the statement 1.3 -> 0.9 s at 10 M events).
WITH host_pairs AS (
    SELECT *, (row_number() OVER ())::INTEGER AS pair_no
    FROM (SELECT DISTINCT initiator_host, target_host FROM ctrl_map WHERE target_host IS NOT NULL)
), pair_of_cntlid AS (
    SELECT DISTINCT m.initiator_host, m.target_host, m.cntlid, hp.pair_no
    FROM ctrl_map m JOIN host_pairs hp USING (initiator_host, target_host) WHERE m.cntlid IS NOT NULL
), i AS (
    SELECT c.*, m.target_host, m.cntlid, hp.pair_no,
           row_number() OVER (PARTITION BY hp.pair_no ORDER BY c.submit_ts) AS rn
    FROM nvme_commands c JOIN ctrl_map m ON m.initiator_host = c.host AND m.ctrl_id = c.ctrl_id
    JOIN host_pairs hp ON hp.initiator_host = c.host AND hp.target_host = m.target_host
    WHERE c.role = 'initiator' AND c.kind = 'io' AND c.state = 'complete'
), t AS (
    SELECT c.*, p.initiator_host, p.pair_no,
           row_number() OVER (PARTITION BY p.pair_no ORDER BY c.submit_ts) AS rn
    FROM nvme_commands c JOIN pair_of_cntlid p ON p.target_host = c.host AND p.cntlid = c.ctrl_id
    WHERE c.role = 'target' AND c.kind = 'io' AND c.state = 'complete'
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
                             ELSE coalesce(f.n, 0) + coalesce(k.n_null, 0) END)
                        OVER (PARTITION BY i.pair_no ORDER BY i.rn) AS cum,
               CASE WHEN i.slba IS NULL THEN coalesce(k.n_all, 0) ELSE coalesce(f.n, 0) + coalesce(k.n_null, 0) END AS m
        FROM i
        LEFT JOIN fp f ON f.side = 't' AND f.host = i.target_host AND f.ctrl_id = i.cntlid AND f.qid = i.qid
         AND f.cid = i.cid AND f.opcode = i.opcode AND f.slba = i.slba AND f.nlb = i.nlb
        LEFT JOIN fp_key k ON k.side = 't' AND k.host = i.target_host AND k.ctrl_id = i.cntlid AND k.qid = i.qid
         AND k.cid = i.cid AND k.opcode = i.opcode
        WHERE i.rn <= 4096)
    WHERE cum - m < 262144
), first_t AS (
    SELECT * FROM (
        SELECT t.*, sum(CASE WHEN t.slba IS NULL THEN coalesce(k.n_all, 0)
                             ELSE coalesce(f.n, 0) + coalesce(k.n_null, 0) END)
                        OVER (PARTITION BY t.pair_no ORDER BY t.rn) AS cum,
               CASE WHEN t.slba IS NULL THEN coalesce(k.n_all, 0) ELSE coalesce(f.n, 0) + coalesce(k.n_null, 0) END AS m
        FROM t
        LEFT JOIN fp f ON f.side = 'i' AND f.host = t.host AND f.ctrl_id = t.ctrl_id AND f.qid = t.qid
         AND f.cid = t.cid AND f.opcode = t.opcode AND f.slba = t.slba AND f.nlb = t.nlb
        LEFT JOIN fp_key k ON k.side = 'i' AND k.host = t.host AND k.ctrl_id = t.ctrl_id AND k.qid = t.qid
         AND k.cid = t.cid AND k.opcode = t.opcode
        WHERE t.rn <= 4096)
    WHERE cum - m < 262144
), first_i_end AS (
    SELECT pair_no, max(rn) AS rn FROM first_i GROUP BY ALL
), pairs AS (
    SELECT i.pair_no, t.complete_ts - i.complete_ts AS lo, t.submit_ts - i.submit_ts AS hi
    FROM first_i i JOIN t
      ON t.initiator_host = i.host AND t.host = i.target_host AND t.ctrl_id = i.cntlid AND t.qid = i.qid
     AND t.cid = i.cid AND t.opcode = i.opcode
     AND (i.slba IS NULL OR t.slba IS NULL OR (i.slba = t.slba AND i.nlb = t.nlb))
    UNION ALL
    -- the other way round, without the pairs the first join already has
    SELECT i.pair_no, t.complete_ts - i.complete_ts, t.submit_ts - i.submit_ts
    FROM i JOIN first_t t
      ON t.initiator_host = i.host AND t.host = i.target_host AND t.ctrl_id = i.cntlid AND t.qid = i.qid
     AND t.cid = i.cid AND t.opcode = i.opcode
     AND (i.slba IS NULL OR t.slba IS NULL OR (i.slba = t.slba AND i.nlb = t.nlb))
    LEFT JOIN first_i_end e ON e.pair_no = i.pair_no
    WHERE i.rn > coalesce(e.rn, 0)
), pts AS (
    SELECT pair_no, lo AS x, 1 AS d FROM pairs WHERE lo <= hi
    UNION ALL SELECT pair_no, hi, -1 FROM pairs WHERE lo <= hi
), depth AS (
    SELECT pair_no, x, d,
           sum(d) OVER (PARTITION BY pair_no ORDER BY x, d DESC ROWS UNBOUNDED PRECEDING) AS depth,
           lead(x) OVER (PARTITION BY pair_no ORDER BY x, d DESC) AS next_x
    FROM pts
)
-- the deepest overlap; equally deep intervals (a tie: e.g. a run repeating one I/O pattern)
-- resolve to the one nearest 0, then the lower: one answer however DuckDB schedules or
-- spills the sweep
SELECT hp.initiator_host, hp.target_host, d.coarse_offset_ns, d.pairs
FROM (SELECT pair_no,
             ((arg_max(x, (depth, -abs(x), -x)) + arg_max(next_x, (depth, -abs(x), -x))) // 2)::BIGINT AS coarse_offset_ns,
             count(*) AS pairs
      FROM depth WHERE d = 1 GROUP BY pair_no) d
JOIN host_pairs hp USING (pair_no);

-- clock_candidates: one row per (initiator command, target command) that may be the same
-- command: same target controller, qid, cid, opcode (and slba/nlb when both sides have
-- them), both complete, target submit within 1 s of the initiator submit after the pair's
-- coarse offset, and the target lifetime fits inside the initiator's for some clock offset.
-- Each pair bounds offset = target clock - initiator clock:
-- target receive after host send => offset <= hi; host receive after target send =>
-- offset >= lo.
--   initiator_host, target_host   the host pair
--   i_cmd, t_cmd        nvme_commands.cmd_key of each side
--   i_submit_ts         initiator submit time (ns, initiator clock)
--   lo_ns, hi_ns        bounds on the offset from this pair (ns)
--   fingerprinted       true when slba/nlb were compared too
-- The rows are the table clock_candidate_rows, with i_cmd_n and t_cmd_n (nvme_command_rows'
-- rowids) for i_cmd and t_cmd; this view names the commands by their keys.
CREATE OR REPLACE TABLE clock_candidate_rows AS
WITH i AS (
    SELECT c.rowid AS cmd_n, c.*, m.target_host, m.cntlid,
           (c.submit_ts + k.coarse_offset_ns) // 1000000000 AS b
    FROM nvme_command_rows c JOIN ctrl_map m ON m.initiator_host = c.host AND m.ctrl_id = c.ctrl_id
    JOIN clock_coarse k ON k.initiator_host = c.host AND k.target_host = m.target_host
    WHERE c.role = 'initiator' AND c.kind = 'io' AND c.state = 'complete'
), t AS (
    SELECT rowid AS cmd_n, *,
           unnest([submit_ts // 1000000000 - 1, submit_ts // 1000000000, submit_ts // 1000000000 + 1]) AS b
    FROM nvme_command_rows WHERE role = 'target' AND kind = 'io' AND state = 'complete'
)
SELECT i.host AS initiator_host, i.target_host,
       i.cmd_n AS i_cmd_n, t.cmd_n AS t_cmd_n, i.submit_ts AS i_submit_ts,
       t.complete_ts - i.complete_ts AS lo_ns, t.submit_ts - i.submit_ts AS hi_ns,
       (i.slba IS NOT NULL AND t.slba IS NOT NULL) AS fingerprinted
FROM i JOIN t
  ON t.host = i.target_host AND t.ctrl_id = i.cntlid AND t.qid = i.qid AND t.cid = i.cid
 AND t.opcode = i.opcode AND t.b = i.b
 AND (i.slba IS NULL OR t.slba IS NULL OR (i.slba = t.slba AND i.nlb = t.nlb))
WHERE t.complete_ts - i.complete_ts <= t.submit_ts - i.submit_ts;
-- clock_candidates: clock_candidate_rows by string keys: one row per (initiator command
-- i_cmd, target command t_cmd) that could be the same command, with the offset bounds it
-- allows (lo_ns, hi_ns).
CREATE OR REPLACE VIEW clock_candidates AS
SELECT cc.initiator_host, cc.target_host,
       cmd_key_of(i.host, i.ctrl_id, i.qid, i.cid, i.submit_ts, i.complete_ts) AS i_cmd,
       cmd_key_of(t.host, t.ctrl_id, t.qid, t.cid, t.submit_ts, t.complete_ts) AS t_cmd,
       cc.i_submit_ts, cc.lo_ns, cc.hi_ns, cc.fingerprinted
FROM clock_candidate_rows cc
JOIN nvme_command_rows i ON i.rowid = cc.i_cmd_n
JOIN nvme_command_rows t ON t.rowid = cc.t_cmd_n;

-- clock_offset_slices: per host pair, one row per tenth of the run (by initiator submit
-- time), plus one row for the whole run (slice = -1): the offset interval most candidate
-- pairs agree on (a sweep over the pairs' [lo, hi] bounds: the deepest overlap; of equally
-- deep ones the nearest 0, then the lower).
--   initiator_host, target_host   the host pair
--   slice            0..9, or -1 for the whole run
--   t_ns             middle of the slice (ns, initiator clock)
--   offset_lo_ns, offset_hi_ns   the agreed interval (ns, target - initiator)
--   pairs_agreeing   candidate pairs whose bounds contain that interval
--   pairs            candidate pairs in the slice
CREATE OR REPLACE TABLE clock_offset_slices AS
WITH span AS (
    SELECT *, (row_number() OVER ())::INTEGER AS pair_no FROM (
        SELECT initiator_host, target_host, min(i_submit_ts) AS t0,
               greatest(max(i_submit_ts) - min(i_submit_ts), 1) AS len
        FROM clock_candidate_rows GROUP BY ALL)
), c AS (
    SELECT s.pair_no, c.lo_ns, c.hi_ns, least(floor((c.i_submit_ts - s.t0) * 10.0 / s.len), 9)::INTEGER AS slice
    FROM clock_candidate_rows c JOIN span s USING (initiator_host, target_host)
), both_levels AS (
    -- the sweep partitions on (host pair number, slice + 1) as INTEGERs: on the two host names
    -- and the slice it took 1.1-1.2 s at 10 M events and 2.5 s at 20 M, 0.45 and 0.92 s so
    -- (as one BIGINT: 0.63 and 1.6 s)
    SELECT pair_no, (slice + 1)::INTEGER AS part, lo_ns, hi_ns FROM c
    UNION ALL SELECT pair_no, 0, lo_ns, hi_ns FROM c
), pts AS (
    SELECT pair_no, part, lo_ns AS x, 1 AS d FROM both_levels
    UNION ALL SELECT pair_no, part, hi_ns, -1 FROM both_levels
), depth AS (
    SELECT pair_no, part, x, d,
           sum(d) OVER (PARTITION BY pair_no, part ORDER BY x, d DESC ROWS UNBOUNDED PRECEDING) AS depth,
           lead(x) OVER (PARTITION BY pair_no, part ORDER BY x, d DESC) AS next_x
    FROM pts
), best AS (
    -- ties: the interval nearest 0, then the lower (as in clock_coarse): one deterministic answer
    SELECT pair_no, part - 1 AS slice,
           arg_max(x, (depth, -abs(x), -x)) AS offset_lo_ns, arg_max(next_x, (depth, -abs(x), -x)) AS offset_hi_ns,
           max(depth) AS pairs_agreeing, count(*) AS pairs
    FROM depth WHERE d = 1 GROUP BY pair_no, part
)
SELECT s.initiator_host, s.target_host, b.slice::INTEGER AS slice,
       (CASE WHEN b.slice < 0 THEN s.t0 + s.len // 2 ELSE s.t0 + (s.len * (2 * b.slice + 1)) // 20 END)::BIGINT AS t_ns,
       b.offset_lo_ns, b.offset_hi_ns, b.pairs_agreeing::BIGINT AS pairs_agreeing, b.pairs
FROM best b JOIN span s USING (pair_no);

-- clock_offset_estimated: one row per host pair: the offset between the target and
-- initiator clocks as the commands themselves bound it (for hosts with independent clocks).
--   initiator_host, target_host   the host pair
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
    SELECT s.initiator_host, s.target_host,
           regr_slope((s.offset_lo_ns + s.offset_hi_ns) / 2.0, s.t_ns::DOUBLE) AS slope, count(*) AS n
    FROM clock_offset_slices s JOIN g USING (initiator_host, target_host)
    WHERE s.slice >= 0 AND s.offset_hi_ns - s.offset_lo_ns < 10 * greatest(g.offset_hi_ns - g.offset_lo_ns, 1000)
    GROUP BY ALL
), fit AS (
    SELECT g.initiator_host, g.target_host,
           CASE WHEN s.n >= 3 THEN coalesce(s.slope, 0) * 1e6 ELSE 0 END AS slope_ppm,
           (g.offset_lo_ns + g.offset_hi_ns) / 2 AS mid, (g.offset_hi_ns - g.offset_lo_ns) / 2 + 1000 AS tol,
           g.t_ns AS t0
    FROM g LEFT JOIN s USING (initiator_host, target_host)
), agree AS (
    -- a slope fitted over few or wide slices can be noise (thousands of ppm on a short,
    -- slow run): keep it only when more command pairs agree with it than without it
    SELECT f.initiator_host, f.target_host,
           count(*) FILTER (WHERE abs((c.lo_ns + c.hi_ns) / 2 - f.mid - f.slope_ppm * (c.i_submit_ts - f.t0) / 1e6)
                                  <= (c.hi_ns - c.lo_ns) / 2 + f.tol) AS with_drift,
           count(*) FILTER (WHERE abs((c.lo_ns + c.hi_ns) / 2 - f.mid) <= (c.hi_ns - c.lo_ns) / 2 + f.tol) AS without_drift
    FROM clock_candidate_rows c JOIN fit f USING (initiator_host, target_host)
    GROUP BY ALL
)
SELECT g.initiator_host, g.target_host,
       ((g.offset_lo_ns + g.offset_hi_ns) // 2)::BIGINT AS offset_ns,
       ((g.offset_hi_ns - g.offset_lo_ns) // 2)::BIGINT AS uncertainty_ns,
       CASE WHEN agree.with_drift > agree.without_drift THEN fit.slope_ppm ELSE 0 END AS drift_ppm,
       g.t_ns AS t0_ns,
       'deepest overlap of per-command bounds (target receive after host send, host receive '
       || 'after target send); drift = slope over ten time slices' AS method,
       g.pairs_agreeing, g.pairs, g.offset_lo_ns AS agreed_lo_ns, g.offset_hi_ns AS agreed_hi_ns
FROM g JOIN fit USING (initiator_host, target_host) JOIN agree USING (initiator_host, target_host);

-- clock_sync_claim: one row per host pair: whether the two hosts say they traced on one
-- synchronized clock. They do when both recorded with the trace clock 'tai' (CLOCK_TAI,
-- disciplined by PTP or NTP); the claimed error is the larger host.json clock_max_error_ns
-- of the two (capture key clock_error_us), else assumed.
--   initiator_host, target_host   the host pair
--   claimed          true when both hosts traced on tai
--   max_error_ns     how far apart the two clocks may be (ns)
--   error_source     'host.json' or 'assumed (no clock_max_error_ns in host.json)'
CREATE OR REPLACE VIEW clock_sync_claim AS
WITH h AS (
    SELECT h.host, h.trace_clock, TRY_CAST(r.host_json->>'clock_max_error_ns' AS BIGINT) AS err_ns
    FROM hosts h JOIN run_hosts r USING (host)
), p AS (
    SELECT DISTINCT initiator_host, target_host FROM ctrl_map WHERE target_host IS NOT NULL
)
SELECT p.initiator_host, p.target_host,
       coalesce(i.trace_clock, '') = 'tai' AND coalesce(t.trace_clock, '') = 'tai' AS claimed,
       coalesce(greatest(i.err_ns, t.err_ns), 100000) AS max_error_ns,
       CASE WHEN coalesce(i.err_ns, t.err_ns) IS NOT NULL THEN 'host.json'
            ELSE 'assumed (no clock_max_error_ns in host.json)' END AS error_source
FROM p JOIN h i ON i.host = p.initiator_host JOIN h t ON t.host = p.target_host;

-- clock_offset: one row per host pair: the offset to use (same columns as
-- clock_offset_estimated). A synchronized clock (clock_sync_claim) gives offset 0 with its
-- claimed error as the uncertainty, but only when the commands agree: the interval they
-- allow must reach within the claimed error of 0, else the claim is wrong (pipeline_stats
-- says so) and the estimate is used.
--   synced            true when offset 0 of the synchronized clock is used
--   estimated_offset_ns, estimated_uncertainty_ns   the commands' own estimate (ns)
-- offset at initiator time t: offset_ns + drift_ppm * (t - t0_ns) / 1e6.
CREATE OR REPLACE TABLE clock_offset AS
WITH ok AS (
    SELECT e.*, c.max_error_ns, c.error_source,
           c.claimed AND e.agreed_lo_ns <= c.max_error_ns AND e.agreed_hi_ns >= -c.max_error_ns AS synced
    FROM clock_offset_estimated e JOIN clock_sync_claim c USING (initiator_host, target_host)
)
SELECT initiator_host, target_host,
       CASE WHEN synced THEN 0 ELSE offset_ns END::BIGINT AS offset_ns,
       CASE WHEN synced THEN max_error_ns ELSE uncertainty_ns END::BIGINT AS uncertainty_ns,
       CASE WHEN synced THEN 0 ELSE drift_ppm END AS drift_ppm,
       t0_ns,
       CASE WHEN synced THEN 'synchronized trace clocks (tai on both hosts), error <= '
                             || max_error_ns || ' ns (' || error_source || ')'
            ELSE method END AS method,
       pairs_agreeing, pairs, agreed_lo_ns, agreed_hi_ns, synced,
       offset_ns AS estimated_offset_ns, uncertainty_ns AS estimated_uncertainty_ns
FROM ok;

-- command_match: one row per matched (initiator command, target command) pair: the
-- candidate whose bounds contain its host pair's offset at its time (within the
-- uncertainty), each command used once (closest to the estimate wins).
--   i_cmd, t_cmd      nvme_commands.cmd_key of each side
--   offset_at_ns      the clock offset at this command's time (ns, target - initiator)
--   uncertainty_ns    that offset's uncertainty (ns, clock_offset of the host pair)
-- The rows are the table command_match_rows, with i_cmd_n and t_cmd_n (nvme_command_rows'
-- rowids) for i_cmd and t_cmd; this view names the commands by their keys. Equally close
-- candidates (the same miss, to the ns) are told apart by those numbers: the command recorded
-- first in nvme_command_rows wins.
CREATE OR REPLACE TABLE command_match_rows AS
WITH c AS (
    SELECT cc.*, (o.offset_ns + o.drift_ppm * (cc.i_submit_ts - o.t0_ns) / 1e6)::BIGINT AS offset_at_ns,
           o.uncertainty_ns
    FROM clock_candidate_rows cc JOIN clock_offset o USING (initiator_host, target_host)
), ok AS (
    SELECT *, abs((lo_ns + hi_ns) / 2 - offset_at_ns) AS miss
    FROM c WHERE lo_ns <= offset_at_ns + uncertainty_ns + 1000 AND hi_ns >= offset_at_ns - uncertainty_ns - 1000
    QUALIFY row_number() OVER (PARTITION BY i_cmd_n ORDER BY miss, t_cmd_n) = 1
)
SELECT i_cmd_n, t_cmd_n, offset_at_ns, uncertainty_ns FROM ok
QUALIFY row_number() OVER (PARTITION BY t_cmd_n ORDER BY miss, i_cmd_n) = 1;
-- command_match: command_match_rows by string keys: one row per initiator command
-- (i_cmd) and the target command (t_cmd) it is, with the offset used and its uncertainty.
CREATE OR REPLACE VIEW command_match AS
SELECT cmd_key_of(i.host, i.ctrl_id, i.qid, i.cid, i.submit_ts, i.complete_ts) AS i_cmd,
       cmd_key_of(t.host, t.ctrl_id, t.qid, t.cid, t.submit_ts, t.complete_ts) AS t_cmd,
       m.offset_at_ns, m.uncertainty_ns
FROM command_match_rows m
JOIN nvme_command_rows i ON i.rowid = m.i_cmd_n
JOIN nvme_command_rows t ON t.rowid = m.t_cmd_n;

-- initiator_clock: one row per initiator host: how its trace clock maps onto the run's
-- reference clock, the one clock that every io i_* time and every report time (window, time
-- groups, series, SLO seconds, timeline) is on. The reference is the clock of the initiator
-- with the most I/O commands (ties: first by name); in a run with one initiator it is that
-- initiator's own clock and nothing moves. Another initiator is placed through a target both
-- talk to: shift = offset(it, target) - offset(reference, target), each at its pair's t0
-- (drift within the run is not carried over; per-host durations are exact regardless).
--   host             initiator host
--   shift_ns         add to the host's own times to get reference-clock times (ns); NULL when
--                    no target links it to the reference: its times stay on its own clock
--                    (pipeline_stats 'clock_unplaced:<host>' says so)
--   reference_host   the initiator whose clock is the reference
--   via_target       the target used to place it (NULL for the reference)
--   uncertainty_ns   sum of the two offsets' uncertainties (0 for the reference)
CREATE OR REPLACE TABLE initiator_clock AS
WITH n AS (
    SELECT host, count(*) AS cmds FROM nvme_commands WHERE role = 'initiator' AND kind = 'io' GROUP BY host
), ref AS (
    SELECT host FROM n ORDER BY cmds DESC, host LIMIT 1
), via AS (
    SELECT o.initiator_host AS host, o.target_host AS via_target, o.offset_ns - r.offset_ns AS shift_ns,
           o.uncertainty_ns + r.uncertainty_ns AS uncertainty_ns
    FROM clock_offset o JOIN clock_offset r ON r.target_host = o.target_host
    WHERE r.initiator_host = (SELECT host FROM ref)
    QUALIFY row_number() OVER (PARTITION BY o.initiator_host ORDER BY o.uncertainty_ns + r.uncertainty_ns, o.target_host) = 1
)
SELECT n.host,
       CASE WHEN n.host = ref.host THEN 0 ELSE v.shift_ns END::BIGINT AS shift_ns,
       ref.host AS reference_host,
       CASE WHEN n.host = ref.host THEN NULL ELSE v.via_target END AS via_target,
       CASE WHEN n.host = ref.host THEN 0 ELSE v.uncertainty_ns END::BIGINT AS uncertainty_ns
FROM n CROSS JOIN ref LEFT JOIN via v ON v.host = n.host;

-- controller_paths: one row per initiator controller host.json names: the path its I/O takes.
--   host, ctrl_id (nvmeN's N)
--   path        '<host>/nvme<N>@<target address>:<port>' (host.json nvme_controllers: the
--               controller, its traddr and trsvcid); '<host>/nvme<N>' when host.json lacks them.
--               One per controller: with native multipath each path to a namespace is a
--               controller of its own
--   subsysnqn, traddr, trsvcid, state   as host.json says (state at the capture's start)
CREATE OR REPLACE TABLE controller_paths AS
SELECT host, ctrl_id, subsysnqn, traddr, trsvcid, state,
       host || '/nvme' || ctrl_id || coalesce('@' || traddr || ':' || trsvcid, '') AS path
FROM (SELECT host, TRY_CAST(c->>'instance' AS BIGINT) AS ctrl_id, c->>'subsysnqn' AS subsysnqn, c->>'state' AS state,
             nullif(regexp_extract(c->>'address', '(^|,)traddr=([^,]*)', 2), '') AS traddr,
             nullif(regexp_extract(c->>'address', '(^|,)trsvcid=([^,]*)', 2), '') AS trsvcid
      FROM (SELECT host, unnest(from_json(host_json->'nvme_controllers', '["JSON"]')) AS c
            FROM run_hosts WHERE json_type(host_json, '$.nvme_controllers') = 'ARRAY'))
WHERE ctrl_id IS NOT NULL;

-- namespace_head(disk): the namespace's block device an initiator command's disk belongs to.
-- With native multipath nvme_setup_cmd names the path's hidden disk nvme<S>c<C>n<N> (subsystem
-- S, controller C); the device users open is nvme<S>n<N>. Other names are returned as they are.
CREATE OR REPLACE MACRO namespace_head(disk) AS regexp_replace(disk, '^(nvme[0-9]+)c[0-9]+(n[0-9]+)$', '\1\2');

-- path_ana_states: one row per namespace path of an initiator controller that host.json
-- nvme_ana lists (native multipath with ANA): its ANA group and state when recording started
-- and when it ended.
--   host, ctrl_id (nvmeN's N), path_disk (nvme<S>c<C>n<N>), nsid, ana_grpid
--   state_start, state_end   'optimized', 'non-optimized', 'inaccessible', ... (NULL: not listed then)
CREATE OR REPLACE TABLE path_ana_states AS
WITH listed AS (
    SELECT host, 'start' AS snap, unnest(from_json(host_json->'nvme_ana'->'start', '["JSON"]')) AS a
    FROM run_hosts WHERE json_type(host_json, '$.nvme_ana.start') = 'ARRAY'
    UNION ALL
    SELECT host, 'end', unnest(from_json(host_json->'nvme_ana'->'end', '["JSON"]'))
    FROM run_hosts WHERE json_type(host_json, '$.nvme_ana.end') = 'ARRAY'
)
SELECT host, TRY_CAST(any_value(a->>'instance') AS BIGINT) AS ctrl_id, a->>'path_disk' AS path_disk,
       TRY_CAST(any_value(a->>'nsid') AS BIGINT) AS nsid, TRY_CAST(any_value(a->>'ana_grpid') AS BIGINT) AS ana_grpid,
       any_value(a->>'ana_state') FILTER (WHERE snap = 'start') AS state_start,
       any_value(a->>'ana_state') FILTER (WHERE snap = 'end') AS state_end
FROM listed GROUP BY host, a->>'path_disk';

-- ana_notices: one row per asynchronous event an initiator controller received that says its
-- ANA log changed (nvme_async_event: result bits 2:0 = 2, a notice; bits 15:8 = 3, ANA change).
-- The host then reads the log and updates its paths' states.
--   host, ctrl_id, ts (ns, the host's clock)
CREATE OR REPLACE TABLE ana_notices AS
SELECT host, ctrl_id, ts FROM raw_nvme
WHERE event = 'nvme_async_event' AND (result & 7) = 2 AND ((result >> 8) & 255) = 3;

-- path_ana_periods: per namespace path with an ANA state, the spans of the trace in which it is
-- known: up to the path's first ANA notice, the state at the start; after its last one, the state
-- at the end (between two notices of one path it is not known: no row).
--   host, ctrl_id, path_disk, ana_grpid, ana_state
--   from_ts, to_ts   ns, the host's clock (from inclusive, to exclusive; NULL: open)
CREATE OR REPLACE TABLE path_ana_periods AS
WITH n AS (SELECT host, ctrl_id, min(ts) AS first_ts, max(ts) AS last_ts FROM ana_notices GROUP BY ALL)
SELECT s.host, s.ctrl_id, s.path_disk, s.ana_grpid, s.state_start AS ana_state, NULL::BIGINT AS from_ts, n.first_ts AS to_ts
FROM path_ana_states s LEFT JOIN n USING (host, ctrl_id) WHERE s.state_start IS NOT NULL
UNION ALL
SELECT s.host, s.ctrl_id, s.path_disk, s.ana_grpid, s.state_end, n.last_ts, NULL
FROM path_ana_states s JOIN n USING (host, ctrl_id) WHERE s.state_end IS NOT NULL;

-- io: one row per initiator I/O command (qid > 0), with its block request, its target
-- command and the target's backing-device requests when found. Times are ns: i_* on the
-- run's reference clock (initiator_clock: with one initiator, its own clock), t_* on their
-- target's own clock.
--   io_id          initiator nvme_commands.cmd_key
--   initiator_host, ctrl_id, cntlid, qid, cid   identity (cntlid via ctrl_map)
--   io_type        read / write / flush / ...;  size_bytes  data bytes (block request, else nlb)
--   disk, slba     device and start LBA (with native multipath the namespace's device,
--                  nvme<S>n<N>, not the path's hidden disk: namespace_head)
--   cpu            CPU that submitted (nvme_setup_cmd);  pid, comm  the process (bio owner)
--   i_bio_queue_ts, i_getrq_ts, i_setup_ts, i_rq_issue_ts, i_complete_rq_ts, i_rq_complete_ts
--   target_host, t_cmd, t_init_ts, t_complete_ts              nvmet_req_init / _complete
--   t_dev_requests, t_dev_queue_ts, t_dev_issue_ts, t_dev_complete_ts  backing device
--   offset_ns      clock offset applied to this io (target clock - reference clock, ns: its
--                  host pair's offset less the initiator's initiator_clock shift)
--   offset_uncertainty_ns   that offset's uncertainty (ns)
--   status         NVMe status on the initiator
--   match_state    'matched', or why not: 'initiator_incomplete', 'no_target_controller',
--                  'outside_target_trace', 'no_target_command'
--   queue_key      the transport queue (= its TCP connection): '<initiator host>/c<ctrl_id>/q<qid>',
--                  the one queue key of every report, export and interference view
--   device_key, target_device_key   the initiator's block device and the target's backing
--                  device (io_keys says how they are spelled); kept here so that the timeline,
--                  the exports and the interference views read them without a join
--   cgroup_id      the cgroup its block request was issued for (sql/core/tenants.sql; NULL:
--                  not recorded, capture key tenants=)
--   namespace      '<subsystem NQN>/ns<nsid>' (namespace_names; NULL when host.json lacks it)
--   file_dev, file_ino, file   the file it read or wrote (request_owner_rows, request_files;
--                  NULL: no file's, or not recorded)
--   cgroup, tenant, class   the cgroup's path, its tenant and class (cgroup_tenants)
--   path           the path it took: its controller and the target address and port it is
--                  connected to (controller_paths: '<host>/nvme<N>@<traddr>:<trsvcid>')
--   ana_grpid, ana_state   its path's ANA group and state when it was submitted (native multipath:
--                  path_ana_periods; NULL without ANA, or between two ANA notices of its path)
--   attempts, first_setup_ts   the commands it took and the first one's submission (io_rows)
--   io_n           the io's number, 1.. in (initiator host, submit time) order: the integer key
--                  io_milestones and io_stage_durations carry (joins on it are cheaper than
--                  on io_id); it may change when the analysis changes, io_id does not
-- Two statements: io_joined (the joins), then io_rows (io_joined sorted by initiator and submit
-- time, a table), and io is a view that numbers io_rows' rows by their rowid (the order they
-- were stored in: the same numbers each time a run is analyzed; the rowids hold because
-- io_rows is written once and its statement commits on its own, see sql/core/commands.sql's
-- header). Numbering them in the statement with row_number() OVER () ran on one thread, in
-- the sort's order: 1.1 s against 0.64 s at 773 k I/Os. The
-- sort spills; sorting inside the join's statement, with the join's hash tables held, broke
-- the 2 GB memory limit at 1.5 M I/Os.
-- io_initiator_commands holds the rows io_joined starts from (the initiators' io commands), a
-- table of its own so that DuckDB knows how many there are: over nvme_commands it estimated a
-- sixth of them (two filters) and built each join's hash table on that side, the whole chain of
-- joined wide rows, instead of on the lookup tables: at 40 M events (3 M I/Os) io_joined ran out
-- of the 2 GB limit in every run on some orders of the commands' rows. Dropped after io_joined.
CREATE OR REPLACE TABLE io_initiator_commands AS
SELECT rowid AS cmd_n, cmd_key_of(host, ctrl_id, qid, cid, submit_ts, complete_ts) AS cmd_key,
       host, ctrl_id, qid, cid, io_type, nlb, disk, slba, submit_ts, complete_ts,
       submit_cpu, submit_pid, submit_comm, status, state
FROM nvme_command_rows WHERE role = 'initiator' AND kind = 'io';
-- io_joined: one row per initiator I/O command with its matched target command, block
-- request and target device requests, every milestone on the initiator's clock (ns); the
-- rows of io, before their order (io_rows).
CREATE OR REPLACE TABLE io_joined AS
WITH tw AS (
    -- each target's trace window (a join, not a correlated subquery: DuckDB copies the whole
    -- input of one to evaluate it)
    SELECT host, min(first_ts) AS first_ts, max(last_ts) AS last_ts FROM hosts WHERE role = 'target' GROUP BY host
)
-- t_cmd is NULL here: the io view spells it from this row's columns (writing 773 k distinct
-- strings into each of io_joined and io_rows took 0.2-0.3 s of each statement at 10 M events).
-- io_id stays a column: spelled in the view it would reach io.parquet as a column
-- that may be NULL, where DuckDB writes a stored one without NULLs as required.
SELECT i.cmd_key AS io_id, i.host AS initiator_host, i.ctrl_id, m.cntlid, i.qid, i.cid,
       coalesce(i.io_type, b.io_type) AS io_type,
       coalesce(b.bytes, i.nlb << (9 + coalesce(ls.lba_shift, 0)), 0)::BIGINT AS size_bytes,
       namespace_head(i.disk) AS disk, i.slba, i.submit_cpu AS cpu,
       coalesce(b.queue_pid, i.submit_pid) AS pid, coalesce(b.queue_comm, i.submit_comm) AS comm,
       b.queue_ts + sh.s AS i_bio_queue_ts, b.getrq_ts + sh.s AS i_getrq_ts, i.submit_ts + sh.s AS i_setup_ts,
       b.issue_ts + sh.s AS i_rq_issue_ts, i.complete_ts + sh.s AS i_complete_rq_ts,
       b.complete_ts + sh.s AS i_rq_complete_ts,
       m.target_host, NULL::VARCHAR AS t_cmd,
       t.submit_ts AS t_init_ts, t.complete_ts AS t_complete_ts,
       td.requests AS t_dev_requests, td.queue_ts AS t_dev_queue_ts, td.issue_ts AS t_dev_issue_ts,
       td.complete_ts AS t_dev_complete_ts,
       coalesce(cm.offset_at_ns, (o.offset_ns + o.drift_ppm * (i.submit_ts - o.t0_ns) / 1e6)::BIGINT) - sh.s AS offset_ns,
       coalesce(cm.uncertainty_ns, o.uncertainty_ns) AS offset_uncertainty_ns,
       i.status,
       CASE WHEN cm.t_cmd_n IS NOT NULL THEN 'matched'
            WHEN i.state <> 'complete' THEN 'initiator_incomplete'
            WHEN m.cntlid IS NULL THEN 'no_target_controller'
            WHEN i.submit_ts + o.offset_ns > tw.last_ts OR i.complete_ts + o.offset_ns < tw.first_ts
              THEN 'outside_target_trace'
            ELSE 'no_target_command' END AS match_state,
       i.host || '/c' || i.ctrl_id || '/q' || i.qid AS queue_key,
       i.host || '/' || coalesce(namespace_head(i.disk), '?') AS device_key,
       CASE WHEN cm.t_cmd_n IS NOT NULL
            THEN m.target_host || '/' || coalesce(regexp_replace(t.disk, '^/dev/', ''), '?') END AS target_device_key,
       rc.cgroup_id, nn.namespace, rc.file_dev, rc.file_ino, rf.file, ct.cgroup, ct.tenant, ct.class,
       coalesce(cp.path, i.host || '/nvme' || i.ctrl_id) AS path, ap.ana_grpid, ap.ana_state
FROM io_initiator_commands i
LEFT JOIN lba_shift ls ON ls.host = i.host
LEFT JOIN host_block_link_rows hb ON hb.host = i.host AND hb.submit_cpu = i.submit_cpu AND hb.submit_ts = i.submit_ts
-- the build sides hold only the rows that can match (the initiators' block requests, the
-- targets' commands): with every join's table built at once, the whole tables took the
-- statement over the 2 GB limit at 40 M events (3 M I/Os) in five runs of eight
LEFT JOIN (SELECT * FROM block_requests WHERE role = 'initiator') b
  ON b.host = hb.host AND b.dev = hb.dev AND b.sector = hb.sector AND b.issue_ts = hb.issue_ts
LEFT JOIN request_owner_rows rc ON rc.host = hb.host AND rc.issue_ts = hb.issue_ts AND rc.sector = hb.sector
LEFT JOIN request_files rf ON rf.host = rc.host AND rf.file_dev = rc.file_dev AND rf.file_ino = rc.file_ino
LEFT JOIN namespace_names nn ON nn.host = i.host AND nn.disk = i.disk
LEFT JOIN cgroup_tenants ct ON ct.host = i.host AND ct.cgroup_id = rc.cgroup_id
LEFT JOIN controller_paths cp ON cp.host = i.host AND cp.ctrl_id = i.ctrl_id
LEFT JOIN path_ana_periods ap ON ap.host = i.host AND ap.path_disk = i.disk
    AND i.submit_ts >= coalesce(ap.from_ts, i.submit_ts) AND i.submit_ts < coalesce(ap.to_ts, i.submit_ts + 1)
LEFT JOIN ctrl_map m ON m.initiator_host = i.host AND m.ctrl_id = i.ctrl_id
LEFT JOIN command_match_rows cm ON cm.i_cmd_n = i.cmd_n
LEFT JOIN (SELECT rowid AS cmd_n, host, ctrl_id, qid, cid, submit_ts, complete_ts, disk
           FROM nvme_command_rows WHERE role = 'target') t ON t.cmd_n = cm.t_cmd_n
LEFT JOIN target_device_rows td ON td.cmd_n = cm.t_cmd_n
LEFT JOIN clock_offset o ON o.initiator_host = i.host AND o.target_host = m.target_host
LEFT JOIN (SELECT host, coalesce(shift_ns, 0) AS s FROM initiator_clock) sh ON sh.host = i.host
LEFT JOIN tw ON tw.host = m.target_host;
DROP TABLE io_initiator_commands;
-- io_attempt_rows: one row per initiator I/O command that failed and was tried again: not an
-- I/O of its own but an attempt of the command that followed it. A controller reset cancels
-- the commands in flight (NVMe status 0x371, aborted by the host) and the block layer sends
-- each again after the reconnect, as a new command; an error the controller answers with, when
-- the driver retries it, does the same. The retry is the next command of the same initiator,
-- disk, start LBA, size and type submitted after the attempt completed, of the same bio (its
-- block_bio_queue) when block events were recorded. An attempt of an attempt chains.
--   io_id          the attempt's command (io_joined.io_id)
--   retry_io_id    the command that tried it again (an io's io_id, or another attempt's)
--   initiator_host, ctrl_id, qid, cid, disk, slba, size_bytes, io_type   the attempt's
--   status         its NVMe status (non-zero)
--   i_setup_ts, i_complete_rq_ts   its submission and completion (ns, reference clock)
CREATE OR REPLACE TABLE io_attempt_rows AS
WITH failed AS (
    SELECT io_id, initiator_host, ctrl_id, qid, cid, disk, slba, size_bytes, io_type, status, i_setup_ts,
           i_complete_rq_ts, coalesce(i_bio_queue_ts, -1) AS bio_key
    FROM io_joined WHERE status <> 0 AND i_complete_rq_ts IS NOT NULL AND slba IS NOT NULL
), candidates AS (
    -- only the commands at a failed one's LBA (a semi-join: the ASOF's sort then holds a few rows)
    SELECT io_id, initiator_host, disk, slba, size_bytes, io_type, coalesce(i_bio_queue_ts, -1) AS bio_key, i_setup_ts
    FROM io_joined WHERE (initiator_host, disk, slba) IN (SELECT initiator_host, disk, slba FROM failed)
)
SELECT f.io_id, c.io_id AS retry_io_id, f.initiator_host, f.ctrl_id, f.qid, f.cid, f.disk, f.slba, f.size_bytes,
       f.io_type, f.status, f.i_setup_ts, f.i_complete_rq_ts
FROM failed f
ASOF JOIN candidates c ON c.initiator_host = f.initiator_host AND c.disk = f.disk AND c.slba = f.slba
    AND c.size_bytes = f.size_bytes AND c.io_type IS NOT DISTINCT FROM f.io_type AND c.bio_key = f.bio_key
    AND c.i_setup_ts > f.i_complete_rq_ts;
-- io_rows: io_joined without the attempts, in the order of io (initiator host, first
-- milestone, queue, cid), each with what its attempts cost it:
--   attempts        commands it took (1: none failed before it)
--   first_setup_ts  the first attempt's submission (ns; = i_setup_ts with one attempt)
CREATE OR REPLACE TABLE io_rows AS
WITH RECURSIVE chain AS (   -- each attempt with the io it ended in (retry_io_id followed to the end)
    SELECT a.io_id, a.retry_io_id AS final_io_id, a.i_setup_ts, 1 AS depth FROM io_attempt_rows a
    UNION ALL
    SELECT c.io_id, a.retry_io_id, c.i_setup_ts, c.depth + 1 FROM chain c
    JOIN io_attempt_rows a ON a.io_id = c.final_io_id WHERE c.depth < 100
), ends AS (
    SELECT final_io_id AS io_id, count(*) AS failed, min(i_setup_ts) AS first_setup_ts FROM chain
    WHERE final_io_id NOT IN (SELECT io_id FROM io_attempt_rows) GROUP BY final_io_id
)
SELECT j.*, 1 + coalesce(e.failed, 0) AS attempts, coalesce(e.first_setup_ts, j.i_setup_ts) AS first_setup_ts
FROM io_joined j LEFT JOIN ends e ON e.io_id = j.io_id
WHERE j.io_id NOT IN (SELECT io_id FROM io_attempt_rows)
ORDER BY j.initiator_host, coalesce(j.i_setup_ts, j.i_complete_rq_ts), j.ctrl_id, j.qid, j.cid;
DROP TABLE io_joined;
-- (a matched io's target command has its ctrl_id = cntlid, qid and cid: command_match pairs
-- them on these)
-- (cgroup, tenant and class are io_rows' columns, from cgroup_tenants when the rows are built: a
-- tenants file is an input of the loader, and a new one builds the rows again. Joined in this
-- view they cost every query over io a pass: 0.5-0.8 s of analyze's 9.3 s at 1.1 M events)
CREATE OR REPLACE VIEW io AS
SELECT r.* REPLACE (CASE WHEN r.match_state = 'matched'
                         THEN cmd_key_of(r.target_host, r.cntlid, r.qid, r.cid, r.t_init_ts, r.t_complete_ts) END AS t_cmd),
       r.rowid + 1 AS io_n
FROM io_rows r;

-- unmatched_target_commands: one row per target I/O command no initiator command matched.
--   t_cmd          nvme_commands.cmd_key;  host, ctrl_id, qid, cid, submit_ts (target clock)
--   reason         'target_incomplete', 'no_initiator_controller' (no initiator controller
--                  maps to this cntlid), 'outside_initiator_trace' (before or after the
--                  initiator's trace, after clock alignment), 'no_initiator_command'
CREATE OR REPLACE VIEW unmatched_target_commands AS
WITH iw AS (
    -- the initiator behind each target controller, its trace window and its pair's offset
    SELECT m.cntlid, m.target_host, min(h.first_ts) AS first_ts, max(h.last_ts) AS last_ts,
           min(o.offset_ns) AS offset_ns
    FROM ctrl_map m JOIN hosts h ON h.host = m.initiator_host
    LEFT JOIN clock_offset o ON o.initiator_host = m.initiator_host AND o.target_host = m.target_host
    GROUP BY ALL
)
SELECT cmd_key_of(t.host, t.ctrl_id, t.qid, t.cid, t.submit_ts, t.complete_ts) AS t_cmd,
       t.host, t.ctrl_id, t.qid, t.cid, t.submit_ts,
       CASE WHEN t.state <> 'complete' THEN 'target_incomplete'
            WHEN iw.cntlid IS NULL THEN 'no_initiator_controller'
            WHEN coalesce(t.submit_ts, t.complete_ts) - coalesce(iw.offset_ns, 0) < iw.first_ts
              OR coalesce(t.submit_ts, t.complete_ts) - coalesce(iw.offset_ns, 0) > iw.last_ts
              THEN 'outside_initiator_trace'
            ELSE 'no_initiator_command' END AS reason
FROM nvme_command_rows t
LEFT JOIN iw ON iw.target_host = t.host AND iw.cntlid = t.ctrl_id
WHERE t.role = 'target' AND t.kind = 'io'
  AND t.rowid NOT IN (SELECT t_cmd_n FROM command_match_rows);

-- io_time_origin: one row: where a run's time axis starts, the first io's start (the bio's
-- queueing, else the command's setup). --window and the time groups count from it.
--   t0_ns        ns, initiator clock
CREATE OR REPLACE VIEW io_time_origin AS
SELECT min(coalesce(i_bio_queue_ts, i_setup_ts)) AS t0_ns FROM io;
