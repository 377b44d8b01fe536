-- requires: core/hosts, core/events, core/join, core/net_flows
-- input: raw_<system>  the run's event files (sql/views.py)

-- The initiator's view of its NVMe/TCP connections (capture key nvme_acks: tcp:tcp_probe on
-- the NVMe/TCP ports): when the target's TCP acknowledged each command's bytes. A target
-- that cannot be traced still acknowledges what it received, so the time between a command
-- and its completion splits at that ACK into a round trip (the initiator's send path, both
-- network stacks and the wire, both ways) and the target side (everything after: the
-- target's CPU, queues and device, the response's way back beyond the ACK's, the
-- initiator's receive path). The stage set 'initiator_only' (core/stage_definitions) is cut
-- at it. Assumed: the target ACKs a command before it sends the response (a delayed or
-- coalesced ACK that rides on the response cannot split it: that I/O is not split, and
-- io_nvme_acks says why); TCP offloads do not matter, tcp_probe sees what the stack sees.
-- Every table is empty without the events.

-- nvme_ack_segments: one row per segment an initiator received on an NVMe/TCP connection.
-- tcp_probe fires before the segment's ACK is processed, so its snd_una is the value before
-- it; the value after is the next segment's (una_after). Sequence numbers are unwrapped per
-- connection (32-bit, counted from its first segment). A table.
--   host, sock          the initiator and the kernel's socket cookie of the connection
--   ts                  ns, the run's reference clock (initiator_clock)
--   una, nxt            snd_una and snd_nxt when the segment arrived (unwrapped)
--   una_after           snd_una once it was processed (NULL for the connection's last)
--   data_len            payload bytes;  srtt_us   the socket's smoothed round trip (us)
CREATE OR REPLACE TABLE nvme_ack_segments AS
WITH p AS (
    SELECT p.host, p.sock_cookie AS sock, p.ts + coalesce(c.shift_ns, 0) AS ts, p.snd_una, p.snd_nxt,
           p.data_len, p.srtt AS srtt_us
    FROM raw_tcp p
    JOIN hosts h ON h.host = p.host AND h.role = 'initiator'
    LEFT JOIN initiator_clock c ON c.host = p.host
    WHERE p.event = 'tcp_probe'
      AND EXISTS (SELECT 1 FROM nvme_tcp_ports n WHERE n.host = p.host AND n.port IN (p.sport, p.dport))
), steps AS (
    -- snd_una only moves forward: a step is its advance modulo 2^32
    SELECT *, coalesce((snd_una - lag(snd_una) OVER w + 4294967296) % 4294967296, 0) AS step,
           first_value(snd_una) OVER w AS una0
    FROM p WINDOW w AS (PARTITION BY host, sock ORDER BY ts, snd_una, snd_nxt)
), un AS (
    SELECT host, sock, ts, data_len, srtt_us, snd_una, snd_nxt,
           una0 + sum(step) OVER (PARTITION BY host, sock ORDER BY ts, snd_una, snd_nxt ROWS UNBOUNDED PRECEDING) AS una
    FROM steps
)
SELECT host, sock, ts, una, una + (snd_nxt - snd_una + 4294967296) % 4294967296 AS nxt,
       lead(una) OVER (PARTITION BY host, sock ORDER BY ts, una, snd_nxt) AS una_after, data_len, srtt_us
FROM un;

-- nvme_ack_queue_sockets: one row per initiator transport queue with NVMe/TCP segments: its
-- TCP connection. tcp_probe names no queue, so each completion votes for the connection of the
-- last data segment the host received before it (a response arrives, then completes its
-- command); the queue's connection is the one with most votes. A table.
--   host, queue_key     io.initiator_host, io.queue_key
--   sock                the connection's socket cookie
--   votes, share        completions that voted for it, and their share of the queue's votes
CREATE OR REPLACE TABLE nvme_ack_queue_sockets AS
WITH data AS (SELECT host, sock, ts FROM nvme_ack_segments WHERE data_len > 0),
votes AS (
    SELECT i.initiator_host AS host, i.queue_key, d.sock, count(*) AS votes
    FROM (SELECT initiator_host, queue_key, i_complete_rq_ts FROM io
          WHERE i_complete_rq_ts IS NOT NULL AND initiator_host IN (SELECT DISTINCT host FROM nvme_ack_segments)) i
    ASOF JOIN data d ON d.host = i.initiator_host AND d.ts <= i.i_complete_rq_ts
    GROUP BY ALL
)
SELECT host, queue_key, sock, votes, votes / sum(votes) OVER (PARTITION BY host, queue_key) AS share
FROM votes
QUALIFY row_number() OVER (PARTITION BY host, queue_key ORDER BY votes DESC, sock) = 1;

-- io_nvme_acks: one row per I/O on a queue whose connection is known (nvme_ack_queue_sockets):
-- when the target's TCP acknowledged the command, and when its response arrived. The search
-- starts when the command went out: its first nvme_tcp_try_send (patched events or the
-- capture's probes) at or after nvme_setup_cmd on its (host, controller, qid, cid), else nvme_setup_cmd
-- (a stock kernel without probes: a command that waited in the queue's send list can then
-- find an earlier command's ACK). Its bytes end at most at snd_nxt of the first segment
-- received after that, and at least one byte beyond what was acknowledged then: the ACK is the
-- first segment that moved snd_una there. It splits the I/O only when it came before the
-- response and was not itself its first part (a segment with data after which this I/O is the
-- queue's next completion). The response ends with the last data segment before this
-- completion and, for a read of more than 16 KiB, starts with the queue's first data after
-- the previous completion's response. Data of other responses
-- that arrived between the ACK and the response's first segment held it on the wire: at the
-- path's rate (the median rate at which responses of more than 16 KiB arrived) that is
-- wire_wait_ns, and the response is taken to have left the target that much earlier. A table.
--   io_n                io.io_n
--   sock                the queue's connection
--   sent_ts             the command went out (ns: nvme_tcp_try_send, else nvme_setup_cmd)
--   ack_ts              the ACK of its bytes arrived (ns); NULL when it does not split the I/O
--   response_start_ts   the response left the target, as the initiator can tell (first segment
--                       minus wire_wait_ns, not before the ACK; NULL when not split)
--   response_first_ts, response_ts   the response's first and last segment arrived (ns)
--   wire_wait_ns        other responses' bytes between the ACK and it / the path's rate (ns;
--                       NULL when not split)
--   round_trip_ns       ack_ts - nvme_setup_cmd (NULL when not split)
--   srtt_us             the socket's smoothed round trip at the ACK (us, the kernel's own)
--   not_split           why ack_ts is NULL: 'no segment after the command', 'no ACK of the
--                       command before its completion', 'the ACK came with the response'
CREATE OR REPLACE TABLE io_nvme_acks AS
WITH sends AS (
    SELECT e.host, e.ctrl_id, e.qid, e.cid, e.ts + coalesce(c.shift_ns, 0) AS ts
    FROM events e LEFT JOIN initiator_clock c ON c.host = e.host
    WHERE e.system = 'nvme_tcp' AND e.event = 'nvme_tcp_try_send'
      AND e.host IN (SELECT DISTINCT host FROM nvme_ack_segments)
), ios AS (
    -- the send of the command's own controller (another controller's queue of the same qid
    -- may send a command of the same cid first); by qid and cid alone only for sends that name
    -- no controller (an ASOF join matches on equalities only, so two joins)
    SELECT i.io_n, i.initiator_host AS host, i.queue_key, q.sock, i.i_setup_ts AS setup_ts,
           coalesce(i.io_type = 'read' AND i.size_bytes > 16384, false) AS big_response,
           greatest(i.i_setup_ts, coalesce(s.ts, u.ts, i.i_setup_ts)) AS sent_ts, i.i_complete_rq_ts AS done_ts
    FROM io i JOIN nvme_ack_queue_sockets q ON q.host = i.initiator_host AND q.queue_key = i.queue_key
    ASOF LEFT JOIN (FROM sends WHERE ctrl_id IS NOT NULL) s
        ON s.host = i.initiator_host AND s.ctrl_id = i.ctrl_id AND s.qid = i.qid AND s.cid = i.cid AND i.i_setup_ts <= s.ts
    ASOF LEFT JOIN (FROM sends WHERE ctrl_id IS NULL) u
        ON u.host = i.initiator_host AND u.qid = i.qid AND u.cid = i.cid AND i.i_setup_ts <= u.ts
    WHERE i.i_setup_ts IS NOT NULL AND i.i_complete_rq_ts IS NOT NULL
), completions AS (SELECT io_n, queue_key, done_ts FROM ios),
advances AS (
    -- the segments that moved snd_una: una_after grows strictly along them
    SELECT host, sock, ts, una_after, srtt_us, data_len FROM nvme_ack_segments WHERE una_after > una
), data AS (
    -- data segments and the bytes received on the connection up to each (inclusive)
    SELECT host, sock, ts, data_len, sum(data_len) OVER (PARTITION BY host, sock ORDER BY ts, una, nxt ROWS UNBOUNDED PRECEDING) AS upto
    FROM nvme_ack_segments WHERE data_len > 0
), first_after AS (
    SELECT i.*, greatest(s.nxt, s.una + 1) AS cmd_end
    FROM ios i ASOF LEFT JOIN nvme_ack_segments s ON s.host = i.host AND s.sock = i.sock AND i.sent_ts < s.ts
), acked AS (
    SELECT f.*, a.ts AS ack_ts, a.srtt_us, a.data_len AS ack_data_len
    FROM first_after f ASOF LEFT JOIN advances a ON a.host = f.host AND a.sock = f.sock AND f.cmd_end <= a.una_after
), last_seg AS (
    -- next_done_io: the queue's first completion after the ACK; when it is this I/O's own and
    -- the ACK carried data, that data was the first part of its own response
    SELECT k.*, d.ts AS response_ts, d.upto AS upto_last, d.data_len AS last_len, c.io_n AS next_done_io
    FROM acked k ASOF LEFT JOIN data d ON d.host = k.host AND d.sock = k.sock AND d.ts <= k.done_ts
    ASOF LEFT JOIN completions c ON c.queue_key = k.queue_key AND k.ack_ts < c.done_ts
), responded AS (
    -- the first segment of a read's response of more than 16 KiB: the first data after the
    -- queue's previous response (its last segment when none came between). A smaller response
    -- is its last segment: one or two segments, and when the initiator takes several in one
    -- batch its completions follow later segments, so "the first data after the previous
    -- response" would be another command's
    SELECT r.* EXCLUDE (d_ts, d_upto, d_len),
           CASE WHEN big_response AND d_ts <= response_ts THEN d_ts ELSE response_ts END AS response_first_ts,
           CASE WHEN big_response AND d_ts <= response_ts THEN d_upto - d_len ELSE upto_last - last_len END AS upto_before_first,
           CASE WHEN big_response AND d_ts <= response_ts THEN d_len ELSE last_len END AS first_len
    FROM (SELECT r.*, d.ts AS d_ts, d.upto AS d_upto, d.data_len AS d_len
          FROM (SELECT *, lag(response_ts) OVER (PARTITION BY queue_key ORDER BY done_ts, io_n) AS prev_response_ts FROM last_seg) r
          ASOF LEFT JOIN data d ON d.host = r.host AND d.sock = r.sock AND coalesce(r.prev_response_ts, r.sent_ts) < d.ts) r
), before_ack AS (
    -- bytes received on the connection up to the ACK
    SELECT r.*, coalesce(d.upto, 0) AS upto_ack
    FROM responded r ASOF LEFT JOIN data d ON d.host = r.host AND d.sock = r.sock AND d.ts <= r.ack_ts
), path_rate AS (
    -- per host: the median rate of the responses of more than 16 KiB (bytes after the first
    -- segment over the time from the first to the last): the path's delivery rate. A smaller
    -- response measures the hosts' packet handling more than the path (under TCG a 4 KiB
    -- response's two segments arrive 4 MB/s apart on an idle link): no rate, no wire wait
    SELECT host, median((upto_last - upto_before_first - first_len) * 1e9 / (response_ts - response_first_ts)) AS bytes_per_s
    FROM responded
    WHERE response_ts > response_first_ts AND upto_last - upto_before_first > 16384
    GROUP BY host
), judged AS (
    SELECT b.*, coalesce(b.ack_ts > b.sent_ts AND b.ack_ts < b.response_ts AND b.ack_ts <= b.done_ts
                         AND NOT (b.ack_data_len > 0 AND b.next_done_io = b.io_n), false) AS splits,
           CASE WHEN p.bytes_per_s > 0 AND b.upto_before_first > b.upto_ack
                THEN ((b.upto_before_first - b.upto_ack) * 1e9 / p.bytes_per_s)::BIGINT ELSE 0 END AS wire_wait_ns
    FROM before_ack b LEFT JOIN path_rate p USING (host)
)
SELECT io_n, sock, sent_ts, CASE WHEN splits THEN ack_ts END AS ack_ts,
       CASE WHEN splits THEN greatest(ack_ts, least(response_first_ts, response_ts) - wire_wait_ns) END AS response_start_ts,
       response_first_ts, response_ts, CASE WHEN splits THEN wire_wait_ns END AS wire_wait_ns,
       CASE WHEN splits THEN ack_ts - setup_ts END AS round_trip_ns, srtt_us,
       CASE WHEN cmd_end IS NULL THEN 'no segment after the command'
            WHEN ack_ts IS NULL OR ack_ts > done_ts OR ack_ts <= sent_ts THEN 'no ACK of the command before its completion'
            WHEN NOT splits THEN 'the ACK came with the response' END AS not_split
FROM judged;
