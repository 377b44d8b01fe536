-- intf_timeseries: one row per (resource, time bin): queue depth and throughput over time,
-- per transport queue and per device, so saturation (throughput flat while latency climbs)
-- shows. 100 bins over the run (first submit .. last completion on the initiator).
--   resource_kind   'queue' or 'device';  resource  queue_key or device_key (see intf_io)
--   bin             0..99;  bin_start_ns  offset of the bin from the first submit (ns);  bin_ns  width (ns)
--   inflight_avg    time-averaged commands in flight (nvme_setup_cmd .. nvme_complete_rq)
--   completions     I/Os completing in the bin;  mb_s  their bytes per second (10^6 bytes/s)
--   wait_mean_ns    mean wait_ns of those completions (ns; NULL when none)
-- Busy time per bin is a sweep, linear in the I/Os: with F(T) = the in-flight time summed
-- over I/Os before T = sum over submits before T of (T - submit) - the same over completions,
-- a bin's busy time is F(bin end) - F(bin start), from per-bin counts and sums of the
-- submit and completion times (exact integers).
CREATE OR REPLACE VIEW intf_timeseries AS
WITH w AS (
    SELECT min(submit_ts) AS t0, greatest((max(done_ts) - min(submit_ts) + 99) // 100, 1) AS bin_ns FROM intf_io
), r AS (
    SELECT 'queue' AS resource_kind, queue_key AS resource, * FROM intf_io
    UNION ALL SELECT 'device', device_key, * FROM intf_io
), bins AS (
    SELECT resource_kind, resource, b.bin FROM (SELECT DISTINCT resource_kind, resource FROM r), range(0, 100) b(bin)
), pts AS (
    -- each submit (+1) and completion (-1) in the bin it falls in (bin 100: the last
    -- completion when it sits exactly on the end; it ends no bin below 100)
    SELECT r.resource_kind, r.resource, (r.submit_ts - w.t0) // w.bin_ns AS bin, 1 AS d, r.submit_ts AS ts FROM r, w
    UNION ALL
    SELECT r.resource_kind, r.resource, (r.done_ts - w.t0) // w.bin_ns, -1, r.done_ts FROM r, w
), per_bin AS (
    SELECT resource_kind, resource, bin, sum(d) AS n, sum(d * ts) AS s FROM pts GROUP BY ALL
), f AS (
    -- F at each bin's end: open = submits - completions up to it, F = end * open - sum(open times)
    SELECT b.resource_kind, b.resource, b.bin,
           (w.t0 + (b.bin + 1) * w.bin_ns) * sum(coalesce(p.n, 0)) OVER c - sum(coalesce(p.s, 0)) OVER c AS f_end
    FROM bins b CROSS JOIN w LEFT JOIN per_bin p USING (resource_kind, resource, bin)
    WINDOW c AS (PARTITION BY b.resource_kind, b.resource ORDER BY b.bin ROWS UNBOUNDED PRECEDING)
), busy AS (
    SELECT resource_kind, resource, bin,
           f_end - lag(f_end, 1, 0) OVER (PARTITION BY resource_kind, resource ORDER BY bin) AS busy_ns
    FROM f
), done AS (
    SELECT r.resource_kind, r.resource, least((r.done_ts - w.t0) // w.bin_ns, 99) AS bin,
           count(*) AS completions, sum(r.size_bytes) AS bytes, avg(r.wait_ns) AS wait_mean_ns
    FROM r, w GROUP BY ALL
)
SELECT bins.resource_kind, bins.resource, bins.bin, bins.bin * w.bin_ns AS bin_start_ns, w.bin_ns,
       coalesce(busy.busy_ns, 0) / w.bin_ns AS inflight_avg,
       coalesce(done.completions, 0) AS completions,
       coalesce(done.bytes, 0) * 1e3 / w.bin_ns AS mb_s,
       done.wait_mean_ns
FROM bins CROSS JOIN w
LEFT JOIN busy USING (resource_kind, resource, bin)
LEFT JOIN done USING (resource_kind, resource, bin);
