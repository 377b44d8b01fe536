-- requires: core/hosts, core/sampling, core/events
-- input: raw_block  the bios a remap moved (sql/views.py)

-- String keys. Other tables refer to a command or a block request by its rowid in
-- nvme_command_rows or block_request_rows (columns named cmd_n, req_n, i_cmd_n, t_cmd_n) and
-- join on it; the string keys people read (cmd_key, req_key, i_cmd, t_cmd) are built by the
-- views over those tables, only for the rows a query reads. Building and storing them for every
-- row, and joining and sorting on them, cost the views of the 10 M-event run 1.3 s of 14.7.
-- The rowids stay valid because these tables are written
-- once and never updated, and because each statement commits on its own (views.connect runs
-- them so): DuckDB numbers the rows of a table it has not committed yet apart (from 2^55) and
-- renumbers them at commit, so one transaction around these statements would break the links.
-- cmd_key_of(host, ctrl_id, qid, cid, submit_ts, complete_ts): nvme_commands.cmd_key,
-- '<host>/<ctrl_id>/<qid>/<cid>/<submit ts, or complete ts when not submitted>'
CREATE OR REPLACE MACRO cmd_key_of(host, ctrl_id, qid, cid, submit_ts, complete_ts) AS
    host || '/' || ctrl_id || '/' || qid || '/' || cid || '/' || coalesce(submit_ts, complete_ts);
-- req_key_of(host, dev, sector, ts): block_requests.req_key, '<host>/<dev>/<sector>/<ts>'
CREATE OR REPLACE MACRO req_key_of(host, dev, sector, ts) AS host || '/' || dev || '/' || sector || '/' || ts;

-- block_requests: one row per block request lifetime on one host (block_rq_issue paired
-- with the next block_rq_complete of the same (host, dev, sector)), with the bio that
-- created it.
--   req_key      unique id: '<host>/<dev>/<sector>/<issue ts>' (complete ts when not issued)
--   host, role   where it was traced
--   dev          dev_t (major << 20 | minor);  sector  first 512 B sector;  nr_sector  length
--   bytes        data bytes (block_rq_issue), 0 for flush
--   rwbs         block layer op flags string (R, W, WS, FWS, D ...)
--   io_type      'read', 'write', 'flush', 'discard', 'other' (from rwbs)
--   queue_ts     block_bio_queue of the same sector on that device before the issue (ns)
--   getrq_ts     block_getrq, likewise (ns)
--   issue_ts, complete_ts   block_rq_issue and block_rq_complete (ns)
--   complete_cpu CPU of block_rq_complete
--   issue_cpu, issue_pid, issue_comm   context of block_rq_issue
--   queue_pid, queue_comm  process that queued the bio (the application on the initiator)
--   queue_cpu    CPU of block_bio_queue
--   error        block_rq_complete error code
--   state        'complete' or 'no_completion' or 'no_issue'
-- The rows are the table block_request_rows (every column but req_key; req_n below is its
-- rowid); this view adds req_key.
CREATE OR REPLACE TABLE block_request_rows AS
-- (host, dev, sector) is one integer here, block_key(dev_no, sector), dev_no numbering the
-- (host, dev) pairs: the window and the two ASOF joins below sort on it, which took 2.0 s
-- against 2.6-2.9 s on the three parts at 10 M events. A NULL
-- dev or sector (a field the trace lacks) still pairs as on the parts, and matches no bio; an
-- event whose key does not pack (a sector past 2^47 - 2: a damaged event) pairs with nothing.
-- e is NOT MATERIALIZED: read twice, as a filter over the event files it costs less than a copy.
WITH e AS NOT MATERIALIZED (
    SELECT host, role, event, ts, cpu, pid, comm, dev, sector, nr_sector, bytes, rwbs,
           CASE WHEN event = 'block_rq_issue' THEN 0 ELSE 1 END AS phase
    FROM events WHERE event IN ('block_rq_issue', 'block_rq_complete')
), devs AS (
    SELECT host, dev, row_number() OVER () AS dev_no FROM (SELECT DISTINCT host, dev FROM e)
), keyed AS (
    SELECT e.*, block_key(d.dev_no, e.sector) AS blk_key
    FROM e JOIN devs d ON d.host = e.host AND d.dev IS NOT DISTINCT FROM e.dev
), ordered AS (
    SELECT *, CASE WHEN blk_key IS NOT NULL THEN lead(phase) OVER w END AS next_phase,
           lead(ts) OVER w AS next_ts, lead(cpu) OVER w AS next_cpu,
           CASE WHEN blk_key IS NOT NULL THEN lag(phase) OVER w END AS prev_phase
    FROM keyed WINDOW w AS (PARTITION BY blk_key ORDER BY ts, phase)
), issued AS (
    SELECT host, role, dev, sector, nr_sector, bytes, rwbs, ts AS issue_ts,
           CASE WHEN next_phase = 1 THEN next_ts END AS complete_ts,
           CASE WHEN next_phase = 1 THEN next_cpu END AS complete_cpu,
           cpu AS issue_cpu, pid AS issue_pid, comm AS issue_comm,
           CASE WHEN next_phase = 1 THEN 'complete' ELSE 'no_completion' END AS state, blk_key
    FROM ordered WHERE phase = 0
    UNION ALL
    SELECT host, role, dev, sector, nr_sector, NULL, rwbs, NULL, ts, cpu, NULL, NULL, NULL, 'no_issue', blk_key
    FROM ordered WHERE phase = 1 AND prev_phase IS DISTINCT FROM 0
), bios AS (
    -- plain equality on dev and a known sector: a bio without them matches no request
    SELECT block_key(d.dev_no, b.sector) AS blk_key, b.ts, b.cpu, b.pid, b.comm
    FROM events b JOIN devs d ON d.host = b.host AND d.dev = b.dev
    WHERE b.event = 'block_bio_queue' AND b.sector IS NOT NULL
    UNION ALL
    -- a bio remapped onto the request's device (native multipath: queued on the namespace's
    -- device, nvme<S>n<N>, and sent on a path's, nvme<S>c<C>n<N>): its queueing on the device
    -- it came from. Only the remaps onto a device with requests; none without multipath
    -- beyond partitions' (whose bio is queued on the whole disk: no match on the partition)
    SELECT block_key(d.dev_no, r.sector), q.ts, q.cpu, q.pid, q.comm
    FROM (SELECT host, ts, dev, sector, old_dev, old_sector FROM raw_block WHERE event = 'block_bio_remap') r
    JOIN devs d ON d.host = r.host AND d.dev = r.dev
    ASOF JOIN (SELECT host, ts, cpu, pid, comm, dev, sector FROM raw_block WHERE event = 'block_bio_queue') q
      ON q.host = r.host AND q.dev = r.old_dev AND q.sector = r.old_sector AND q.ts <= r.ts
), getrqs AS (
    SELECT block_key(d.dev_no, g.sector) AS blk_key, g.ts
    FROM events g JOIN devs d ON d.host = g.host AND d.dev = g.dev
    WHERE g.event = 'block_getrq' AND g.sector IS NOT NULL
)
SELECT i.host, i.role, i.dev, i.sector, i.nr_sector, i.bytes, i.rwbs,
       CASE WHEN i.rwbs LIKE '%D%' THEN 'discard' WHEN i.rwbs LIKE '%R%' THEN 'read'
            WHEN i.rwbs LIKE '%W%' AND coalesce(i.nr_sector, 0) > 0 THEN 'write'
            WHEN i.rwbs LIKE 'F%' OR (i.rwbs LIKE '%W%' AND i.nr_sector = 0) THEN 'flush'
            ELSE 'other' END AS io_type,
       b.ts AS queue_ts, g.ts AS getrq_ts, i.issue_ts, i.complete_ts, i.complete_cpu,
       i.issue_cpu, i.issue_pid, i.issue_comm, b.pid AS queue_pid, b.comm AS queue_comm,
       b.cpu AS queue_cpu, NULL::BIGINT AS error, i.state
FROM issued i
ASOF LEFT JOIN bios b ON b.blk_key = i.blk_key AND b.ts <= i.issue_ts
ASOF LEFT JOIN getrqs g ON g.blk_key = i.blk_key AND g.ts <= i.issue_ts;
-- block_requests: block_request_rows with its string key req_key (req_key_of) first.
CREATE OR REPLACE VIEW block_requests AS
SELECT req_key_of(host, dev, sector, coalesce(issue_ts, complete_ts)) AS req_key, * FROM block_request_rows;

-- lba_shift: one row per host: how NVMe LBAs map to 512 B block sectors there
-- (sector = slba << lba_shift), chosen as the shift under which more NVMe commands find a
-- block request starting at their sector.
--   host       host directory name
--   lba_shift  0 (512 B LBAs) or 3 (4 KiB LBAs)
--   matches    commands that matched under that shift
CREATE OR REPLACE TABLE lba_shift AS
WITH c AS (SELECT DISTINCT host, slba FROM events
           WHERE slba IS NOT NULL AND event IN ('nvme_setup_cmd', 'nvmet_req_init')),
b AS (SELECT DISTINCT host, sector FROM block_requests),
cand AS (
    SELECT c.host, 0 AS shift, count(*) AS matches FROM c JOIN b ON b.host = c.host AND b.sector = c.slba GROUP BY ALL
    UNION ALL
    SELECT c.host, 3, count(*) FROM c JOIN b ON b.host = c.host AND b.sector = c.slba * 8 GROUP BY ALL
)
SELECT host, arg_max(shift, (matches, -shift)) AS lba_shift, max(matches) AS matches FROM cand GROUP BY host;  -- ties: 0

-- host_block_link_rows: one row per initiator nvme_setup_cmd linked to the block request it
-- carries. nvme_setup_cmd runs inside blk-mq dispatch just before block_rq_issue on the
-- same CPU: the link is the first block_rq_issue at or after the setup on that CPU whose
-- sector is the command's (flush: any flush request). A table; the joins read it, people
-- read host_block_link (below), the same rows with the two keys as strings: writing the
-- strings cost 0.3 s at 1 M I/Os and joining on them more than on these columns.
--   host, submit_cpu, submit_ts   the nvme_setup_cmd (unique with host)
--   dev, sector, issue_ts         the block request (block_requests: unique with host)
--   gap_ns       block_rq_issue ts - nvme_setup_cmd ts (ns)
CREATE OR REPLACE TABLE host_block_link_rows AS
WITH c AS (
    SELECT e.host, e.cpu, e.ts, e.slba, e.qid, coalesce(s.lba_shift, 0) AS lba_shift
    FROM events e LEFT JOIN lba_shift s USING (host)
    WHERE e.event = 'nvme_setup_cmd' AND e.qid > 0
)
SELECT c.host, c.cpu AS submit_cpu, c.ts AS submit_ts, b.dev, b.sector, b.issue_ts, b.issue_ts - c.ts AS gap_ns
-- (host, CPU) as one packed_key: the ASOF join's equality key
FROM (SELECT c.*, packed_key(n.host_n, 0, 0, c.cpu) AS host_cpu FROM c JOIN host_numbers n USING (host)) c
ASOF JOIN (SELECT b.*, packed_key(n.host_n, 0, 0, b.issue_cpu) AS host_cpu
           FROM block_requests b JOIN host_numbers n USING (host)) b
  ON b.host_cpu = c.host_cpu AND b.issue_ts >= c.ts
WHERE (c.slba IS NULL AND b.io_type = 'flush') OR b.sector = c.slba << c.lba_shift;

-- host_block_link: host_block_link_rows by key. A view.
--   submit_key   '<host>/<cpu>/<setup ts>' of the nvme_setup_cmd
--   host, submit_cpu, submit_ts   the same as columns
--   req_key      block_requests.req_key
--   gap_ns       block_rq_issue ts - nvme_setup_cmd ts (ns)
CREATE OR REPLACE VIEW host_block_link AS
SELECT host || '/' || submit_cpu || '/' || submit_ts AS submit_key, host, submit_cpu, submit_ts,
       req_key_of(host, dev, sector, issue_ts) AS req_key, gap_ns
FROM host_block_link_rows;

-- nvme_fabrics_connects: one row per fabrics connect a target received (nvmet_req_init of opcode
-- 127, fctype 1), with the controller and queue it connected: the event reports ctrl_id 0 and
-- qid 0 (the controller is not allocated yet), so both come from the next completion of that cid
-- on that host. A table of a few rows, computed once for both reads of nvme_command_events.
--   host, role, event, ts (ns, the host's clock), cpu, pid, comm, ctrl_id, qid, cid, opcode,
--   fctype, slba, nlb, disk, status   as in events, ctrl_id and qid from the completion
--   phase     0 (a submit, as in nvme_command_events)
CREATE OR REPLACE TABLE nvme_fabrics_connects AS
WITH connects AS (
    SELECT host, role, event, ts, cpu, pid, comm, ctrl_id, qid, cid, opcode, fctype, slba, nlb,
           disk, status, 0 AS phase
    FROM events WHERE event = 'nvmet_req_init' AND opcode = 127 AND fctype = 1
), target_completes AS (
    -- only those of a connect's (host, cid): the ASOF join below sorts all of its right side
    -- (every target completion: 0.9 s of thread time at 40 M events for a few connects)
    SELECT host, cid, ts, ctrl_id, qid FROM events
    WHERE event = 'nvmet_req_complete' AND (host, cid) IN (SELECT host, cid FROM connects)
)
SELECT e.* REPLACE (coalesce(tc.ctrl_id, e.ctrl_id) AS ctrl_id, coalesce(tc.qid, e.qid) AS qid)
FROM connects e
ASOF LEFT JOIN target_completes tc ON tc.host = e.host AND tc.cid = e.cid AND tc.ts >= e.ts;

-- nvme_command_events: one row per NVMe command event of any host: a submit (initiator
-- nvme_setup_cmd, target nvmet_req_init) or a completion (nvme_complete_rq, nvmet_req_complete),
-- a fabrics connect's as nvme_fabrics_connects has it.
-- A view: a filter over the event files, read again by each use (nvme_cid_pairs and
-- nvme_command_rows' completions). DuckDB materializes a CTE used more than once, and copies of
-- every command event (12 M wide rows at 40 M events) spilled under the memory limit: read
-- again, nvme_command_rows took 4.06 -> 3.69 s at 10 M events, 26.1 -> 17.3 s at 40 M (the same rows).
--   host, role, event   where and which event
--   ts                  ns, the host's clock
--   cpu, pid, comm      context of the event
--   ctrl_id, qid, cid, opcode, fctype, slba, nlb, disk, status   as in events
--   phase               0 a submit, 1 a completion
CREATE OR REPLACE VIEW nvme_command_events AS
SELECT * FROM nvme_fabrics_connects
UNION ALL
SELECT host, role, event, ts, cpu, pid, comm, ctrl_id, qid, cid, opcode, fctype, slba, nlb,
       disk, status,
       CASE WHEN event IN ('nvme_setup_cmd', 'nvmet_req_init') THEN 0 ELSE 1 END AS phase
FROM events
WHERE event IN ('nvme_setup_cmd', 'nvme_complete_rq', 'nvmet_req_init', 'nvmet_req_complete')
  AND NOT (event = 'nvmet_req_init' AND opcode = 127 AND fctype = 1);

-- nvme_cid_pairs: one row per NVMe command submit (nvme_command_events, phase 0) with the
-- completion its command id pairs it with: the next event of the same (host, controller, queue,
-- cid) in time, when that is a completion. nvme_command_rows then prefers, on the initiator, the
-- completion found through the block request.
--   host, host_n (host_numbers), role, ctrl_id, qid, cid, opcode, fctype, slba, nlb, disk
--   submit_ts            ns, the host's clock
--   submit_cpu, submit_pid, submit_comm   context of the submit
--   cid_complete_ts, cid_complete_cpu, cid_status   that completion's ts (ns), CPU and NVMe
--                        status; NULL when the next event of the cid is a submit or none
CREATE OR REPLACE VIEW nvme_cid_pairs AS
WITH ordered AS (
    -- partitioned on (host, controller, queue, cid) as one integer (lifetime_key): DuckDB sorts
    -- on it in 0.47-0.55 s against 0.68-0.72 s on the four parts with the host's name at 10 M
    -- events. An event whose key does not pack (a part out of
    -- range: a damaged event) pairs with nothing.
    SELECT *,
           CASE WHEN w_key IS NOT NULL THEN lead(phase) OVER w END AS next_phase,
           lead(ts) OVER w AS next_ts, lead(cpu) OVER w AS next_cpu, lead(status) OVER w AS next_status
    FROM (SELECT f.*, n.host_n, lifetime_key(n.host_n, f.ctrl_id, f.qid, f.cid) AS w_key
          FROM nvme_command_events f JOIN host_numbers n USING (host)) f
    WINDOW w AS (PARTITION BY w_key ORDER BY ts, phase)
)
SELECT host, host_n, role, ctrl_id, qid, cid, opcode, fctype, slba, nlb, disk,
       ts AS submit_ts, cpu AS submit_cpu, pid AS submit_pid, comm AS submit_comm,
       CASE WHEN next_phase = 1 THEN next_ts END AS cid_complete_ts,
       CASE WHEN next_phase = 1 THEN next_cpu END AS cid_complete_cpu,
       CASE WHEN next_phase = 1 THEN next_status END AS cid_status
FROM ordered WHERE phase = 0;

-- nvme_commands: one row per NVMe command lifetime on one host (command ids are reused:
-- each submit is paired with the next completion of the same (host, ctrl_id, qid, cid)).
-- Initiator: nvme_setup_cmd -> nvme_complete_rq; target: nvmet_req_init -> nvmet_req_complete.
-- On the initiator, a command linked to its block request takes the nvme_complete_rq
-- that ran just before that request's block_rq_complete on the same CPU: on 6.1 the
-- completion event of a write that needed R2T reports the transfer tag, not the cid
-- (the H2C data PDU header is written over the command PDU); complete_cid shows it.
--   cmd_key      unique id of this lifetime: '<host>/<ctrl_id>/<qid>/<cid>/<submit or complete ts>'
--   host, role   where it was traced
--   ctrl_id      initiator: host instance (nvmeN); target: cntlid
--   qid, cid     queue id (0 = admin) and command id as on the wire
--   opcode, fctype  NVMe opcode; fabrics type when opcode = 127
--   kind         'io' (qid > 0, not fabrics), 'admin' (qid = 0), 'fabrics' (opcode 127)
--   io_type      'read', 'write', 'flush', 'write_zeroes', 'other' (by opcode; io only)
--   slba, nlb    start LBA and LBA count (read/write), NULL otherwise
--   disk         device name the event names
--   submit_ts, complete_ts  ns, this host's clock (NULL when that side is missing)
--   dur          complete_ts - submit_ts (ns)
--   submit_cpu, submit_pid, submit_comm   context of the submit event
--   complete_cpu   CPU of the completion event
--   status       NVMe status of the completion (0 = success)
--   complete_cid the cid the completion event reported (differs from cid: see above)
--   pairing      'block' (completion found through the block request) or 'cid'
--   state        'complete'; 'no_completion' (submit never completed in the trace: trace
--                ended, lost events, or a later submit reused the id); 'no_submission'
--                (completion of a command submitted before tracing started)
-- The rows are the table nvme_command_rows (every column but cmd_key; cmd_n below is its
-- rowid); this view adds cmd_key.
CREATE OR REPLACE TABLE nvme_command_rows AS
-- by_cid is computed once (via_block and chosen read it: DuckDB materializes a CTE used twice);
-- completes is NOT MATERIALIZED: a filter over the event files (nvme_command_events), read
-- again by each use
WITH by_cid AS (SELECT * FROM nvme_cid_pairs),
completes AS NOT MATERIALIZED (
    SELECT host, ctrl_id, qid, cid, ts, cpu, status FROM nvme_command_events WHERE phase = 1
), via_block AS (
    -- the ASOF join's equality key (host, CPU, controller, queue) as one packed_key
    -- initiator: the nvme_complete_rq just before the linked request's block_rq_complete
    SELECT s.host, s.submit_ts, s.submit_cpu, c.ts AS complete_ts, c.cpu AS complete_cpu, c.cid AS complete_cid,
           c.status
    FROM (SELECT bc.*, b.complete_ts AS blk_complete_ts, b.complete_cpu AS blk_complete_cpu
          FROM by_cid bc
          JOIN host_block_link_rows l ON l.host = bc.host AND l.submit_cpu = bc.submit_cpu AND l.submit_ts = bc.submit_ts
          JOIN block_requests b ON b.host = l.host AND b.dev = l.dev AND b.sector = l.sector AND b.issue_ts = l.issue_ts
          WHERE bc.role = 'initiator' AND b.complete_ts IS NOT NULL) s
    ASOF JOIN (SELECT c.*, packed_key(n.host_n, c.cpu, c.ctrl_id, c.qid) AS cpu_queue
               FROM completes c JOIN host_numbers n USING (host) WHERE c.ts IS NOT NULL) c
      ON c.cpu_queue = packed_key(s.host_n, s.blk_complete_cpu, s.ctrl_id, s.qid) AND c.ts <= s.blk_complete_ts
    WHERE c.ts >= s.submit_ts
), chosen AS (
    SELECT bc.*,
           coalesce(vb.complete_ts, bc.cid_complete_ts) AS complete_ts,
           coalesce(vb.complete_cpu, bc.cid_complete_cpu) AS complete_cpu,
           CASE WHEN vb.complete_ts IS NOT NULL THEN 'block' WHEN bc.cid_complete_ts IS NOT NULL THEN 'cid' END AS pairing,
           -- the chosen completion's status and cid (one completing a cid-paired command has its cid)
           CASE WHEN vb.complete_ts IS NOT NULL THEN vb.status ELSE bc.cid_status END AS status,
           CASE WHEN vb.complete_ts IS NOT NULL THEN vb.complete_cid
                WHEN bc.cid_complete_ts IS NOT NULL THEN bc.cid END AS complete_cid
    FROM by_cid bc LEFT JOIN via_block vb
      ON vb.host = bc.host AND vb.submit_ts = bc.submit_ts AND vb.submit_cpu = bc.submit_cpu
), ranked AS (
    -- a completion is used once: the block-based claim wins over a cid-based one (claim_rank 1).
    -- Only the initiator pairs through block requests, and a target completion is the next event
    -- of at most one submit: only the initiator's claims are ranked (half the rows of a window).
    -- The losers (claim_rank > 1) are lifetimes without a completion (below): read from here,
    -- not found again by an anti-join of every ranked claim against the winners (at 40 M events
    -- 16.0/15.6 -> 14.9/15.4 s for the statement, the same rows)
    SELECT *, row_number() OVER (PARTITION BY host_n, complete_ts, complete_cpu
                                 ORDER BY pairing = 'block' DESC, submit_ts DESC) AS claim_rank
    FROM chosen
    WHERE role IS DISTINCT FROM 'target' AND complete_ts IS NOT NULL
), claimed AS (
    SELECT * FROM chosen WHERE role = 'target' OR complete_ts IS NULL
    UNION ALL
    SELECT * EXCLUDE (claim_rank) FROM ranked WHERE claim_rank = 1
), unsampled_in_trace AS (
    -- a sampled capture keeps every completion (6.1 reports an R2T write's transfer tag as its
    -- cid). On a sampled initiator, an unclaimed completion whose cid passes the rule but
    -- whose block request (the next block_rq_complete on its CPU, as via_block pairs them)
    -- was issued inside the trace belongs to a command the sample left out: had it been
    -- sampled, its submit would be in the trace and would have claimed it (the cid passed by
    -- chance: a transfer tag). Counted in sample_outside_completions, not a lifetime.
    SELECT u.host, u.ts, u.cpu
    FROM (SELECT c.* FROM completes c
          JOIN sampling s ON s.host = c.host AND s.sample_n > 1 AND s.role = 'initiator'
                         AND (c.cid & s.sample_mask) = 0
          ANTI JOIN claimed cl ON cl.host = c.host AND cl.complete_ts = c.ts AND cl.complete_cpu = c.cpu) u
    ASOF JOIN (SELECT host, complete_cpu, complete_ts, issue_ts FROM block_requests
               WHERE complete_ts IS NOT NULL) b
      ON b.host = u.host AND b.complete_cpu = u.cpu AND b.complete_ts >= u.ts
    WHERE b.issue_ts IS NOT NULL
), lifetimes AS (
    SELECT cl.host, cl.role, cl.ctrl_id, cl.qid, cl.cid, cl.opcode, cl.fctype, cl.slba, cl.nlb, cl.disk,
           cl.submit_ts, cl.complete_ts, cl.submit_cpu, cl.submit_pid, cl.submit_comm, cl.complete_cpu,
           cl.status, cl.complete_cid, cl.pairing,
           CASE WHEN cl.complete_ts IS NOT NULL THEN 'complete' ELSE 'no_completion' END AS state
    FROM claimed cl
    UNION ALL
    -- submits that lost their cid-paired completion to a block-based claim
    SELECT host, role, ctrl_id, qid, cid, opcode, fctype, slba, nlb, disk,
           submit_ts, NULL, submit_cpu, submit_pid, submit_comm, NULL, NULL, NULL, NULL,
           'no_completion'
    FROM ranked WHERE claim_rank > 1
    UNION ALL
    SELECT c.host, h.role, c.ctrl_id, c.qid, c.cid, NULL, NULL, NULL, NULL, NULL,
           NULL, c.ts, NULL, NULL, NULL, c.cpu, c.status, c.cid, NULL, 'no_submission'
    FROM completes c JOIN hosts h USING (host)
    ANTI JOIN claimed cl ON cl.host = c.host AND cl.complete_ts = c.ts AND cl.complete_cpu = c.cpu
    ANTI JOIN unsampled_in_trace x ON x.host = c.host AND x.ts = c.ts AND x.cpu = c.cpu
    -- completions of commands outside the sample are not lifetimes of their own
    WHERE NOT outside_sample(c.host, c.cid)
)
SELECT host, role, ctrl_id, qid, cid, opcode, fctype,
       CASE WHEN opcode = 127 THEN 'fabrics' WHEN qid = 0 THEN 'admin'
            WHEN opcode IS NULL THEN 'unknown' ELSE 'io' END AS kind,
       CASE WHEN opcode = 127 OR qid = 0 OR opcode IS NULL THEN NULL
            WHEN opcode = 2 THEN 'read' WHEN opcode = 1 THEN 'write' WHEN opcode = 0 THEN 'flush'
            WHEN opcode = 8 THEN 'write_zeroes' ELSE 'other' END AS io_type,
       slba, nlb, disk, submit_ts, complete_ts, complete_ts - submit_ts AS dur,
       submit_cpu, submit_pid, submit_comm, complete_cpu, status, complete_cid, pairing, state
FROM lifetimes;
-- nvme_commands: nvme_command_rows with its string key cmd_key (cmd_key_of) first.
CREATE OR REPLACE VIEW nvme_commands AS
SELECT cmd_key_of(host, ctrl_id, qid, cid, submit_ts, complete_ts) AS cmd_key, * FROM nvme_command_rows;

-- target_device_link: one row per (target NVMe command, backing-device block request)
-- that served it: same host, the request's first sector inside the command's LBA range,
-- queued after nvmet_req_init and completed before nvmet_req_complete. A large command
-- split by the block layer links to several requests.
--   cmd_key      nvme_commands.cmd_key (target side);  req_key  block_requests.req_key
-- The rows are the table target_device_link_rows: cmd_n (nvme_command_rows' rowid), req_n
-- (block_request_rows' rowid) and the request's queue_ts, issue_ts, complete_ts and bytes (what
-- target_device sums); this view names both sides by their keys.
CREATE OR REPLACE TABLE target_device_link_rows AS
WITH c AS (
    SELECT c.rowid AS cmd_n, c.host, c.submit_ts, c.complete_ts,
           c.slba << coalesce(s.lba_shift, 0) AS sector_start,
           (c.slba + c.nlb) << coalesce(s.lba_shift, 0) AS sector_end
    FROM nvme_command_rows c LEFT JOIN lba_shift s USING (host)
    WHERE c.role = 'target' AND c.kind = 'io' AND c.state = 'complete' AND c.slba IS NOT NULL
), cb AS (
    -- equality keys keep the join linear: 1 MiB sector buckets x 1 s time buckets the
    -- command covers (usually one of each)
    SELECT *, unnest(range((sector_start >> 11)::BIGINT, ((sector_end - 1) >> 11)::BIGINT + 1)) AS sb
    FROM c
), cbt AS (
    SELECT *, unnest(range(submit_ts // 1000000000, complete_ts // 1000000000 + 1)) AS tb FROM cb
), b AS (
    SELECT rowid AS req_n, host, sector, queue_ts, issue_ts, complete_ts, bytes,
           (sector >> 11)::BIGINT AS sb, coalesce(queue_ts, issue_ts) // 1000000000 AS tb
    FROM block_request_rows WHERE role = 'target' AND state = 'complete'
)
SELECT c.cmd_n, b.req_n, b.queue_ts, b.issue_ts, b.complete_ts, b.bytes
FROM cbt c JOIN b
  ON b.host = c.host AND b.sb = c.sb AND b.tb = c.tb
 AND b.sector >= c.sector_start AND b.sector < c.sector_end
 AND coalesce(b.queue_ts, b.issue_ts) >= c.submit_ts AND b.complete_ts <= c.complete_ts;
-- target_device_link: target_device_link_rows by string keys: one row per (target command
-- cmd_key, backing-device request req_key).
CREATE OR REPLACE VIEW target_device_link AS
SELECT cmd_key_of(c.host, c.ctrl_id, c.qid, c.cid, c.submit_ts, c.complete_ts) AS cmd_key,
       req_key_of(b.host, b.dev, b.sector, coalesce(b.issue_ts, b.complete_ts)) AS req_key
FROM target_device_link_rows l
JOIN nvme_command_rows c ON c.rowid = l.cmd_n
JOIN block_request_rows b ON b.rowid = l.req_n;

-- target_device: one row per target command with backing-device requests.
--   cmd_key        nvme_commands.cmd_key (target side)
--   requests       block requests linked
--   queue_ts       first block_bio_queue (ns, target clock)
--   issue_ts       first block_rq_issue (ns, target clock)
--   complete_ts    last block_rq_complete (ns, target clock)
--   bytes          sum of request bytes
-- The rows are the table target_device_rows (cmd_n, nvme_command_rows' rowid, for cmd_key);
-- this view adds cmd_key.
CREATE OR REPLACE TABLE target_device_rows AS
SELECT cmd_n, count(*) AS requests, min(queue_ts) AS queue_ts, min(issue_ts) AS issue_ts,
       max(complete_ts) AS complete_ts, sum(bytes)::BIGINT AS bytes
FROM target_device_link_rows
GROUP BY cmd_n;
-- target_device: target_device_rows with the target command's string key cmd_key in place of
-- its row number.
CREATE OR REPLACE VIEW target_device AS
SELECT cmd_key_of(c.host, c.ctrl_id, c.qid, c.cid, c.submit_ts, c.complete_ts) AS cmd_key,
       d.* EXCLUDE (cmd_n)
FROM target_device_rows d JOIN nvme_command_rows c ON c.rowid = d.cmd_n;
