-- requires: core/join, core/stages

-- Interference layer: runs on one run's views (sql/views.py), before any comparison.
-- Terms: a queue is an initiator NVMe/TCP I/O queue (host, controller, qid); on nvme-tcp
-- each queue is one TCP connection, so "queue" and "connection" name the same resource.
-- A device is the initiator's namespace block device (host, disk), one target namespace.

-- intf_io: one row per initiator I/O with both submit and completion on the initiator.
--   io_id, io_n, io_type, size_bytes, cpu, pid, comm, qid   as in io (io_n: the integer key
--                the sweeps below join on)
--   stream_id    '<comm>/<pid> <io_type> <size_bytes>B': one application stream; in a run
--                with several initiators '<host>:<comm>/<pid> ...'
--   queue_key    '<host>/c<ctrl_id>/q<qid>' (the transport queue = its TCP connection)
--   device_key   '<host>/<disk>' (io.device_key)
--   start_ts     block_bio_queue (else nvme_setup_cmd), ns initiator clock
--   submit_ts    nvme_setup_cmd (ns);  done_ts  nvme_complete_rq (ns)
--   end_ts       block_rq_complete (else nvme_complete_rq) (ns)
--   wait_ns      done_ts - submit_ts: the time the command spent in the transport, the
--                network and the target, where it can wait behind other commands
--   stream_no, queue_no, device_no   1..n numbers of stream_id, queue_key, device_key (in
--                their text order): the sweeps below partition on these integers
CREATE OR REPLACE TABLE intf_io AS
WITH i AS (
    SELECT io_id, io_n, io_type, size_bytes, cpu, pid, comm, qid,
           -- with several initiators, pids of different hosts are different processes (counted
           -- once, not as a window over every row: that held all 7.7 M I/Os of a 100 M-event run
           -- in memory and failed at the 2 GB limit)
           CASE WHEN (SELECT count(DISTINCT initiator_host) FROM io
                      WHERE i_setup_ts IS NOT NULL AND i_complete_rq_ts IS NOT NULL) > 1
                THEN initiator_host || ':' ELSE '' END
           || coalesce(comm, '?') || '/' || coalesce(pid::VARCHAR, '?') || ' ' || coalesce(io_type, '?') || ' ' || size_bytes || 'B' AS stream_id,
           queue_key,
           device_key,
           coalesce(i_bio_queue_ts, i_setup_ts) AS start_ts, i_setup_ts AS submit_ts,
           i_complete_rq_ts AS done_ts, coalesce(i_rq_complete_ts, i_complete_rq_ts) AS end_ts,
           i_complete_rq_ts - i_setup_ts AS wait_ns
    FROM io
    WHERE i_setup_ts IS NOT NULL AND i_complete_rq_ts IS NOT NULL
), s AS (
    SELECT stream_id, row_number() OVER (ORDER BY stream_id) AS stream_no FROM (SELECT DISTINCT stream_id FROM i)
), q AS (
    SELECT queue_key, row_number() OVER (ORDER BY queue_key) AS queue_no FROM (SELECT DISTINCT queue_key FROM i)
), d AS (
    SELECT device_key, row_number() OVER (ORDER BY device_key) AS device_no FROM (SELECT DISTINCT device_key FROM i)
)
SELECT i.*, s.stream_no, q.queue_no, d.device_no
FROM i JOIN s USING (stream_id) JOIN q USING (queue_key) JOIN d USING (device_key);

-- intf_streams: one row per stream (process, I/O type and size).
--   stream_id, comm, pid, io_type, size_bytes
--   ios          I/Os of the stream;  bytes  their sum
--   cpus         distinct submitting CPUs, e.g. '0' or '0,1'; main_cpu the most used
--   queues       distinct queue_keys;  main_queue the most used
--   devices      distinct device_keys
--   mb_s         bytes per second over the stream's own span (10^6 bytes/s)
--   mean_wait_ns mean wait_ns (ns)
CREATE OR REPLACE VIEW intf_streams AS
SELECT stream_id, any_value(comm) AS comm, any_value(pid) AS pid, any_value(io_type) AS io_type,
       any_value(size_bytes) AS size_bytes, count(*) AS ios, sum(size_bytes)::BIGINT AS bytes,
       string_agg(DISTINCT cpu::VARCHAR, ',' ORDER BY cpu::VARCHAR) AS cpus, mode(cpu) AS main_cpu,
       string_agg(DISTINCT queue_key, ',' ORDER BY queue_key) AS queues, mode(queue_key) AS main_queue,
       string_agg(DISTINCT device_key, ',' ORDER BY device_key) AS devices,
       sum(size_bytes) * 1e3 / greatest(max(end_ts) - min(start_ts), 1) AS mb_s,
       avg(wait_ns) AS mean_wait_ns
FROM intf_io GROUP BY stream_id;

-- intf_stream_breakdown: one row per (stream, stage set, stage): where the stream's time went.
--   stream_id, stage_set, stage, seq, parent
--   n            I/Os with a known duration
--   mean_ns, p50_ns, p99_ns   (ns, nearest-rank percentiles)
-- Percentiles by rank (nearest rank: the value at position ceil(q * n) from the smallest, as
-- report_stage_values gives them): each (stream, cut)'s durations numbered in order by one
-- window on INTEGER keys, the stream, set and stage named after (grouping on those strings took
-- 1.3-1.4 s against 0.7-0.8 s for 199 k I/Os), once per cut (io_stage_cuts,
-- sql/core/stages.sql), given to each definition of it after (23 cuts for 34 definitions on a
-- patched run). A quantile aggregate would hold every duration of a stream in memory; the
-- window spills. Value counts (a GROUP BY on the duration, then a window over its groups) cost
-- more on a real run, where nearly every duration is distinct: 0.82 s against the window's
-- 0.45 s on the real high-rate capture.
CREATE OR REPLACE VIEW intf_stream_breakdown AS
WITH s AS (
    SELECT i.stream_no::INTEGER AS stream_no, s.def_no::INTEGER AS def_no, s.dur
    FROM intf_io i JOIN io_stage_durations s USING (io_n)
    WHERE s.dur IS NOT NULL AND s.def_no IN (SELECT cut_def_no FROM io_stage_cuts)   -- once per cut
), t AS (
    SELECT stream_no, def_no, count(*) AS n, sum(dur::HUGEINT) AS sum_ns FROM s GROUP BY ALL
), r AS (
    SELECT stream_no, def_no, dur, row_number() OVER (PARTITION BY stream_no, def_no ORDER BY dur) AS rank_no
    FROM s
), a AS (
    -- the upper half of the ranks is all the two percentiles read
    SELECT stream_no, def_no, any_value(t.n) AS n, any_value(t.sum_ns) / any_value(t.n) AS mean_ns,
           min(dur) FILTER (WHERE rank_no * 2 >= t.n) AS p50_ns,
           min(dur) FILTER (WHERE rank_no * 100 >= 99 * t.n) AS p99_ns
    FROM r JOIN t USING (stream_no, def_no)
    WHERE rank_no * 2 >= t.n
    GROUP BY stream_no, def_no
), streams AS (
    SELECT DISTINCT stream_no, stream_id FROM intf_io
)
SELECT st.stream_id, d.stage_set, d.stage, d.seq, d.parent, a.n, a.mean_ns, a.p50_ns, a.p99_ns
FROM a JOIN streams st USING (stream_no)
JOIN io_stage_cuts c ON c.cut_def_no = a.def_no JOIN io_stage_definitions d ON d.def_no = c.def_no;

-- intf_io_ahead_pairs: one row per (I/O, resource, other I/O ahead of it): another command
-- submitted earlier (nvme_setup_cmd) on the same queue, or the same device, and still not
-- completed when this one was submitted: this one may wait behind it.
--   io_id, stream_id        the I/O that may wait
--   resource                'queue' or 'device'
--   other_io_id, other_stream_id, other_cpu, other_bytes (its size in bytes)
-- For questions about a few I/Os: the join is quadratic in the commands in flight, so the
-- reports use the sweeps below (intf_io_ahead, intf_stream_sharing), never this view.
CREATE OR REPLACE VIEW intf_io_ahead_pairs AS
SELECT a.io_id, a.stream_id, 'queue' AS resource, b.io_id AS other_io_id, b.stream_id AS other_stream_id,
       b.cpu AS other_cpu, b.size_bytes AS other_bytes
FROM intf_io a JOIN intf_io b
  ON a.queue_key = b.queue_key AND b.submit_ts <= a.submit_ts AND b.done_ts > a.submit_ts AND b.io_id <> a.io_id
UNION ALL
SELECT a.io_id, a.stream_id, 'device', b.io_id, b.stream_id, b.cpu, b.size_bytes
FROM intf_io a JOIN intf_io b
  ON a.device_key = b.device_key AND b.submit_ts <= a.submit_ts AND b.done_ts > a.submit_ts AND b.io_id <> a.io_id;

-- intf_sweep_events: one row per (I/O event, sweep it belongs to): the submits (d = 1, with
-- the I/O's io_n) and completions (d = -1, io_n NULL) that intf_io_ahead's sweeps count.
--   sweep    1 the queue, 2 the queue per stream, 3 the queue per CPU, 4 the device, 5 the
--            device per stream (2, 3 and 5 only on resources several streams / CPUs share:
--            elsewhere they equal 1 or 4)
--   k1, k2   the sweep's partition (queue_no or device_no; stream_no, cpu or 0)
--   io_n, ts, d, b   intf_io.io_n (submits), ns, +1 / -1, +bytes / -bytes
CREATE OR REPLACE VIEW intf_sweep_events AS
WITH ev AS (
    SELECT io_n, stream_no, cpu, queue_no, device_no, submit_ts AS ts, 1 AS d, size_bytes AS b FROM intf_io
    UNION ALL
    SELECT NULL, stream_no, cpu, queue_no, device_no, done_ts, -1, -size_bytes FROM intf_io
), shared AS (
    -- resources used by several streams (or CPUs): only there do the per-stream and per-CPU
    -- counts differ from the resource's own
    SELECT 'queue' AS kind, queue_no AS rno, count(DISTINCT stream_no) > 1 AS streams,
           count(DISTINCT coalesce(cpu, -1)) > 1 AS cpus
    FROM intf_io GROUP BY queue_no
    UNION ALL
    SELECT 'device', device_no, count(DISTINCT stream_no) > 1, false FROM intf_io GROUP BY device_no
)
SELECT 1 AS sweep, queue_no AS k1, 0 AS k2, io_n, ts, d, b FROM ev
UNION ALL
SELECT 2, queue_no, stream_no, io_n, ts, d, b
FROM ev SEMI JOIN shared ON shared.kind = 'queue' AND shared.rno = ev.queue_no AND shared.streams
UNION ALL
SELECT 3, queue_no, coalesce(cpu, -1), io_n, ts, d, 0
FROM ev SEMI JOIN shared ON shared.kind = 'queue' AND shared.rno = ev.queue_no AND shared.cpus
UNION ALL
SELECT 4, device_no, 0, io_n, ts, d, b FROM ev
UNION ALL
SELECT 5, device_no, stream_no, io_n, ts, d, b
FROM ev SEMI JOIN shared ON shared.kind = 'device' AND shared.rno = ev.device_no AND shared.streams;

-- intf_sweep(k): table macro: sweep k of intf_sweep_events, one row per submit: what its
-- partition held right after it (n commands, b bytes; every event at that instant counted,
-- the I/O itself included). A sweep, linear in the I/Os (sorts aside): in flight at time t =
-- submits at or before t minus completions at or before t (a RANGE window).
CREATE OR REPLACE MACRO intf_sweep(k) AS TABLE
SELECT sweep, io_n, n, b FROM (
    SELECT sweep, io_n, sum(d) OVER w AS n, sum(b) OVER w AS b
    FROM intf_sweep_events WHERE sweep = k
    WINDOW w AS (PARTITION BY k1, k2 ORDER BY ts RANGE UNBOUNDED PRECEDING))
WHERE io_n IS NOT NULL;

-- intf_sweep_at_submit: one row per (I/O, sweep): intf_sweep(1..5), one statement per sweep:
-- in one statement, at 100 M events (7.7 M I/Os), the five windows held more than the 2 GB
-- memory limit at once and DuckDB failed instead of spilling.
--   sweep, io_n, n, b   as in intf_sweep
CREATE OR REPLACE TABLE intf_sweep_at_submit AS FROM intf_sweep(1);
INSERT INTO intf_sweep_at_submit FROM intf_sweep(2);
INSERT INTO intf_sweep_at_submit FROM intf_sweep(3);
INSERT INTO intf_sweep_at_submit FROM intf_sweep(4);
INSERT INTO intf_sweep_at_submit FROM intf_sweep(5);

-- intf_io_ahead: one row per I/O: what was ahead of it when it was submitted.
--   io_id, io_n, stream_id
--   queue_ahead_cmds, queue_ahead_bytes     commands / bytes in flight on its queue (all streams)
--   queue_other_cmds, queue_other_bytes     of those, from other streams
--   queue_other_cpu_cmds                    of those, submitted from another CPU
--   device_ahead_cmds, device_other_bytes   in flight on its device (all / other streams' bytes)
-- From the sweeps of intf_sweep_at_submit: "other streams" = all minus the I/O's own stream,
-- "other CPU" = all minus its own CPU; the I/O itself is taken out when it is still in flight
-- at its own submit (done > submit).
CREATE OR REPLACE TABLE intf_io_ahead AS
WITH i AS (
    SELECT io_id, stream_id, io_n, size_bytes, (done_ts > submit_ts)::INTEGER AS self_n FROM intf_io
)
SELECT i.io_id, i.io_n, i.stream_id,
       (q.n - i.self_n)::BIGINT AS queue_ahead_cmds, (q.b - i.self_n * i.size_bytes)::BIGINT AS queue_ahead_bytes,
       (q.n - coalesce(qs.n, q.n))::BIGINT AS queue_other_cmds, (q.b - coalesce(qs.b, q.b))::BIGINT AS queue_other_bytes,
       (q.n - coalesce(qc.n, q.n))::BIGINT AS queue_other_cpu_cmds,
       (dv.n - i.self_n)::BIGINT AS device_ahead_cmds, (dv.b - coalesce(ds.b, dv.b))::BIGINT AS device_other_bytes
FROM i
JOIN intf_sweep_at_submit q ON q.io_n = i.io_n AND q.sweep = 1
JOIN intf_sweep_at_submit dv ON dv.io_n = i.io_n AND dv.sweep = 4
LEFT JOIN intf_sweep_at_submit qs ON qs.io_n = i.io_n AND qs.sweep = 2
LEFT JOIN intf_sweep_at_submit qc ON qc.io_n = i.io_n AND qc.sweep = 3
LEFT JOIN intf_sweep_at_submit ds ON ds.io_n = i.io_n AND ds.sweep = 5;

-- intf_stream_sharing: one row per (stream, resource, other stream) that had commands in
-- flight ahead of the stream's commands on that resource.
--   stream_id, resource ('queue' or 'device'), other_stream_id
--   same_cpu          true when the other stream submitted from the stream's main CPU
--   ios_waited        I/Os of the stream submitted with >= 1 command of the other ahead
--   ios_waited_frac   ios_waited / the stream's I/Os
--   ahead_bytes_mean  other stream's bytes ahead, averaged over ALL the stream's I/Os (bytes)
--   wait_ns_with      mean wait_ns of the stream's I/Os that had the other ahead (ns)
--   wait_ns_without   mean wait_ns of those that had nothing of it ahead (ns; NULL if none)
-- A sweep per (resource, other stream): the other stream's commands and bytes in flight as a
-- step function of time (and, per CPU, for same_cpu), read at each submit of every stream
-- sharing the resource with it while both were active: I/Os x streams per resource, not
-- I/Os x commands in flight. The resource is a number until the last step: partitioned on the
-- strings 'queue' / 'device', the per-CPU window alone took 1.2 s of the statement's 1.6 s on
-- the real high-rate capture scaled 3x (432 k I/Os); 0.66 s with the number, the same rows.
CREATE OR REPLACE TABLE intf_stream_sharing AS
WITH r AS (
    -- resource 0 the queue, 1 the device (named in the last step: the windows and ASOF joins
    -- below partition on it)
    SELECT 0 AS resource, queue_no AS rno, io_n, stream_no, cpu, submit_ts, done_ts, size_bytes FROM intf_io
    UNION ALL
    SELECT 1, device_no, io_n, stream_no, cpu, submit_ts, done_ts, size_bytes FROM intf_io
), rs AS (
    SELECT resource, rno, stream_no, min(submit_ts) AS first_submit, max(submit_ts) AS last_submit,
           max(done_ts) AS last_done
    FROM r GROUP BY ALL
), sp AS (
    -- (stream, other stream) on one resource whose commands could overlap
    SELECT a.resource, a.rno, a.stream_no, b.stream_no AS other_no
    FROM rs a JOIN rs b ON a.resource = b.resource AND a.rno = b.rno AND a.stream_no <> b.stream_no
     AND b.first_submit <= a.last_submit AND b.last_done > a.first_submit
), ev AS (
    -- the commands of streams that were ahead of another stream's
    SELECT resource, rno, stream_no, cpu, submit_ts AS ts, 1 AS d, size_bytes AS b FROM r
    SEMI JOIN (SELECT DISTINCT resource, rno, other_no FROM sp) o
      ON o.resource = r.resource AND o.rno = r.rno AND o.other_no = r.stream_no
    UNION ALL
    SELECT resource, rno, stream_no, cpu, done_ts, -1, -size_bytes FROM r
    SEMI JOIN (SELECT DISTINCT resource, rno, other_no FROM sp) o
      ON o.resource = r.resource AND o.rno = r.rno AND o.other_no = r.stream_no
), steps AS (
    -- the stream's commands / bytes in flight from ts on (until its next step)
    SELECT resource, rno, stream_no AS other_no, ts, sum(sum(d)) OVER w AS n, sum(sum(b)) OVER w AS bytes
    FROM ev GROUP BY resource, rno, stream_no, ts
    WINDOW w AS (PARTITION BY resource, rno, stream_no ORDER BY ts)
), cpu_steps AS (
    SELECT resource, rno, stream_no AS other_no, cpu, ts, sum(sum(d)) OVER w AS n
    FROM ev GROUP BY resource, rno, stream_no, cpu, ts
    WINDOW w AS (PARTITION BY resource, rno, stream_no, cpu ORDER BY ts)
), probes AS (
    SELECT r.resource, r.rno, r.io_n, r.stream_no, r.submit_ts, sp.other_no, s.main_cpu
    FROM r JOIN sp USING (resource, rno, stream_no)
    JOIN (SELECT DISTINCT stream_no, stream_id FROM intf_io) n USING (stream_no)
    JOIN intf_streams s USING (stream_id)
), per_io AS (
    SELECT p.io_n, p.stream_no, p.resource, p.other_no, o.bytes, coalesce(c.n, 0) > 0 AS same_cpu
    FROM probes p
    ASOF JOIN steps o
      ON o.resource = p.resource AND o.rno = p.rno AND o.other_no = p.other_no AND o.ts <= p.submit_ts
    ASOF LEFT JOIN cpu_steps c
      ON c.resource = p.resource AND c.rno = p.rno AND c.other_no = p.other_no
     AND c.cpu = p.main_cpu AND c.ts <= p.submit_ts
    WHERE o.n > 0
), pairs AS (SELECT DISTINCT stream_no, resource, other_no FROM per_io),
names AS (SELECT DISTINCT stream_no, stream_id FROM intf_io)
SELECT sn.stream_id, CASE pr.resource WHEN 0 THEN 'queue' ELSE 'device' END AS resource, o.stream_id AS other_stream_id,
       coalesce(bool_or(pi.same_cpu), false) AS same_cpu,
       count(pi.io_n) AS ios_waited,
       count(pi.io_n) / any_value(s.ios) AS ios_waited_frac,
       coalesce(sum(pi.bytes), 0) / any_value(s.ios) AS ahead_bytes_mean,
       avg(i.wait_ns) FILTER (WHERE pi.io_n IS NOT NULL) AS wait_ns_with,
       avg(i.wait_ns) FILTER (WHERE pi.io_n IS NULL) AS wait_ns_without
FROM pairs pr JOIN names sn ON sn.stream_no = pr.stream_no JOIN names o ON o.stream_no = pr.other_no
JOIN intf_streams s ON s.stream_id = sn.stream_id
JOIN intf_io i ON i.stream_no = pr.stream_no
LEFT JOIN per_io pi ON pi.io_n = i.io_n AND pi.resource = pr.resource AND pi.other_no = pr.other_no
GROUP BY sn.stream_id, pr.resource, o.stream_id;

-- intf_stream_verdict: one row per stream: which resources it shared with other streams.
--   stream_id
--   shared_queue_with   other streams that were ahead of >= 5% of its I/Os on its queue
--                       (comma list, NULL if none); queue_same_cpu: any of them on its CPU
--   shared_device_with  the same on its device
--   verdict            'alone', 'shares device only', 'shares queue (same CPU)' or
--                      'shares queue (other CPU)': the paper's c0 / c1 / c2 / c3 patterns
CREATE OR REPLACE VIEW intf_stream_verdict AS
WITH s AS (
    SELECT stream_id,
           string_agg(other_stream_id, ',' ORDER BY other_stream_id) FILTER (WHERE resource = 'queue' AND ios_waited_frac >= 0.05) AS shared_queue_with,
           bool_or(same_cpu) FILTER (WHERE resource = 'queue' AND ios_waited_frac >= 0.05) AS queue_same_cpu,
           string_agg(other_stream_id, ',' ORDER BY other_stream_id) FILTER (WHERE resource = 'device' AND ios_waited_frac >= 0.05) AS shared_device_with
    FROM intf_stream_sharing GROUP BY stream_id
)
SELECT st.stream_id, s.shared_queue_with, coalesce(s.queue_same_cpu, false) AS queue_same_cpu, s.shared_device_with,
       CASE WHEN s.shared_queue_with IS NOT NULL AND s.queue_same_cpu THEN 'shares queue (same CPU)'
            WHEN s.shared_queue_with IS NOT NULL THEN 'shares queue (other CPU)'
            WHEN s.shared_device_with IS NOT NULL THEN 'shares device only'
            ELSE 'alone' END AS verdict
FROM intf_streams st LEFT JOIN s USING (stream_id);
