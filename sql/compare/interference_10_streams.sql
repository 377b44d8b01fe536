-- Interference layer: runs on one run's views (sql/views.py), before any comparison.
-- Terms: a queue is an initiator NVMe/TCP I/O queue (host, controller, qid); on nvme-tcp
-- each queue is one TCP connection, so "queue" and "connection" name the same resource.
-- A device is the initiator's namespace block device (host, disk), one target namespace.

-- intf_io: one row per initiator I/O with both submit and completion on the initiator.
--   io_id, io_type, size_bytes, cpu, pid, comm, qid   as in io
--   stream_id    '<comm>/<pid> <io_type> <size_bytes>B': one application stream
--   queue_key    '<host>/c<ctrl_id>/q<qid>' (the transport queue = its TCP connection)
--   device_key   '<host>/<disk>'
--   start_ts     block_bio_queue (else nvme_setup_cmd), ns initiator clock
--   submit_ts    nvme_setup_cmd (ns);  done_ts  nvme_complete_rq (ns)
--   end_ts       block_rq_complete (else nvme_complete_rq) (ns)
--   wait_ns      done_ts - submit_ts: the time the command spent in the transport, the
--                network and the target, where it can wait behind other commands
CREATE OR REPLACE VIEW intf_io AS
SELECT io_id, io_type, size_bytes, cpu, pid, comm, qid,
       coalesce(comm, '?') || '/' || coalesce(pid::VARCHAR, '?') || ' ' || coalesce(io_type, '?') || ' ' || size_bytes || 'B' AS stream_id,
       initiator_host || '/c' || ctrl_id || '/q' || qid AS queue_key,
       initiator_host || '/' || coalesce(disk, '?') AS device_key,
       coalesce(i_bio_queue_ts, i_setup_ts) AS start_ts, i_setup_ts AS submit_ts,
       i_complete_rq_ts AS done_ts, coalesce(i_rq_complete_ts, i_complete_rq_ts) AS end_ts,
       i_complete_rq_ts - i_setup_ts AS wait_ns
FROM io
WHERE i_setup_ts IS NOT NULL AND i_complete_rq_ts IS NOT NULL;

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
CREATE OR REPLACE VIEW intf_stream_breakdown AS
SELECT i.stream_id, s.stage_set, s.stage, any_value(s.seq) AS seq, any_value(s.parent) AS parent,
       count(*) AS n, avg(s.dur) AS mean_ns, quantile_disc(s.dur, 0.5) AS p50_ns, quantile_disc(s.dur, 0.99) AS p99_ns
FROM intf_io i JOIN io_stages s USING (io_id)
WHERE s.dur IS NOT NULL
GROUP BY ALL;

-- intf_io_ahead_pairs: one row per (I/O, resource, other I/O ahead of it): another command
-- submitted earlier (nvme_setup_cmd) on the same queue, or the same device, and still not
-- completed when this one was submitted: this one may wait behind it.
--   io_id, stream_id        the I/O that may wait
--   resource                'queue' or 'device'
--   other_io_id, other_stream_id, other_cpu, other_bytes (its size in bytes)
CREATE OR REPLACE VIEW intf_io_ahead_pairs AS
SELECT a.io_id, a.stream_id, 'queue' AS resource, b.io_id AS other_io_id, b.stream_id AS other_stream_id,
       b.cpu AS other_cpu, b.size_bytes AS other_bytes
FROM intf_io a JOIN intf_io b
  ON a.queue_key = b.queue_key AND b.submit_ts <= a.submit_ts AND b.done_ts > a.submit_ts AND b.io_id <> a.io_id
UNION ALL
SELECT a.io_id, a.stream_id, 'device', b.io_id, b.stream_id, b.cpu, b.size_bytes
FROM intf_io a JOIN intf_io b
  ON a.device_key = b.device_key AND b.submit_ts <= a.submit_ts AND b.done_ts > a.submit_ts AND b.io_id <> a.io_id;

-- intf_io_ahead: one row per I/O: what was ahead of it when it was submitted.
--   io_id, stream_id
--   queue_ahead_cmds, queue_ahead_bytes     commands / bytes in flight on its queue (all streams)
--   queue_other_cmds, queue_other_bytes     of those, from other streams
--   queue_other_cpu_cmds                    of those, submitted from another CPU
--   device_ahead_cmds, device_other_bytes   in flight on its device (all / other streams' bytes)
CREATE OR REPLACE VIEW intf_io_ahead AS
SELECT i.io_id, i.stream_id,
       count(p.other_io_id) FILTER (WHERE p.resource = 'queue') AS queue_ahead_cmds,
       coalesce(sum(p.other_bytes) FILTER (WHERE p.resource = 'queue'), 0)::BIGINT AS queue_ahead_bytes,
       count(p.other_io_id) FILTER (WHERE p.resource = 'queue' AND p.other_stream_id <> i.stream_id) AS queue_other_cmds,
       coalesce(sum(p.other_bytes) FILTER (WHERE p.resource = 'queue' AND p.other_stream_id <> i.stream_id), 0)::BIGINT AS queue_other_bytes,
       count(p.other_io_id) FILTER (WHERE p.resource = 'queue' AND p.other_cpu IS DISTINCT FROM i.cpu) AS queue_other_cpu_cmds,
       count(p.other_io_id) FILTER (WHERE p.resource = 'device') AS device_ahead_cmds,
       coalesce(sum(p.other_bytes) FILTER (WHERE p.resource = 'device' AND p.other_stream_id <> i.stream_id), 0)::BIGINT AS device_other_bytes
FROM intf_io i LEFT JOIN intf_io_ahead_pairs p USING (io_id)
GROUP BY i.io_id, i.stream_id;

-- intf_stream_sharing: one row per (stream, resource, other stream) that had commands in
-- flight ahead of the stream's commands on that resource.
--   stream_id, resource ('queue' or 'device'), other_stream_id
--   same_cpu          true when the other stream submitted from the stream's main CPU
--   ios_waited        I/Os of the stream submitted with >= 1 command of the other ahead
--   ios_waited_frac   ios_waited / the stream's I/Os
--   ahead_bytes_mean  other stream's bytes ahead, averaged over ALL the stream's I/Os (bytes)
--   wait_ns_with      mean wait_ns of the stream's I/Os that had the other ahead (ns)
--   wait_ns_without   mean wait_ns of those that had nothing of it ahead (ns; NULL if none)
CREATE OR REPLACE VIEW intf_stream_sharing AS
WITH per_io AS (
    SELECT p.io_id, p.stream_id, p.resource, p.other_stream_id, sum(p.other_bytes) AS bytes,
           bool_or(p.other_cpu = s.main_cpu) AS same_cpu
    FROM intf_io_ahead_pairs p JOIN intf_streams s USING (stream_id)
    WHERE p.other_stream_id <> p.stream_id
    GROUP BY ALL
), pairs AS (SELECT DISTINCT stream_id, resource, other_stream_id FROM per_io)
SELECT pr.stream_id, pr.resource, pr.other_stream_id,
       coalesce(bool_or(pi.same_cpu), false) AS same_cpu,
       count(pi.io_id) AS ios_waited,
       count(pi.io_id) / any_value(s.ios) AS ios_waited_frac,
       coalesce(sum(pi.bytes), 0) / any_value(s.ios) AS ahead_bytes_mean,
       avg(i.wait_ns) FILTER (WHERE pi.io_id IS NOT NULL) AS wait_ns_with,
       avg(i.wait_ns) FILTER (WHERE pi.io_id IS NULL) AS wait_ns_without
FROM pairs pr JOIN intf_streams s USING (stream_id)
JOIN intf_io i ON i.stream_id = pr.stream_id
LEFT JOIN per_io pi ON pi.io_id = i.io_id AND pi.resource = pr.resource AND pi.other_stream_id = pr.other_stream_id
GROUP BY pr.stream_id, pr.resource, pr.other_stream_id;

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
