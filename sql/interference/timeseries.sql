-- requires: core/inflight_bins, interference/streams

-- Interference over time: queue depth and throughput per transport queue and per device.

-- intf_inflight_input: intf_io as its intervals, once per queue and once per device.
CREATE OR REPLACE VIEW intf_inflight_input AS
WITH w AS (
    SELECT min(submit_ts) AS t0, greatest((max(done_ts) - min(submit_ts) + 99) // 100, 1) AS bin_ns FROM intf_io
)
SELECT {'kind': 'queue', 'key': queue_key} AS resource, submit_ts AS s, done_ts AS e, w.t0, w.bin_ns FROM intf_io, w
UNION ALL
SELECT {'kind': 'device', 'key': device_key}, submit_ts, done_ts, w.t0, w.bin_ns FROM intf_io, w;

-- intf_timeseries: one row per (resource, time bin): queue depth and throughput over time,
-- per transport queue and per device, so saturation (throughput flat while latency climbs)
-- shows. 100 bins over the run (first submit .. last completion on the initiator).
--   resource_kind   'queue' or 'device';  resource  queue_key or device_key (see intf_io)
--   bin             0..99;  bin_start_ns  offset of the bin from the first submit (ns);  bin_ns  width (ns)
--   inflight_avg    time-averaged commands in flight (nvme_setup_cmd .. nvme_complete_rq)
--   completions     I/Os completing in the bin;  mb_s  their bytes per second (10^6 bytes/s)
--   wait_mean_ns    mean wait_ns of those completions (ns; NULL when none)
-- Busy time per bin: inflight_bins (sql/report/reports.sql), which the sweep's report_timeseries uses too.
CREATE OR REPLACE VIEW intf_timeseries AS
WITH w AS (
    SELECT min(submit_ts) AS t0, greatest((max(done_ts) - min(submit_ts) + 99) // 100, 1) AS bin_ns FROM intf_io
), r AS (
    SELECT 'queue' AS resource_kind, queue_key AS resource, * FROM intf_io
    UNION ALL SELECT 'device', device_key, * FROM intf_io
), bins AS (
    SELECT resource_kind, resource, b.bin FROM (SELECT DISTINCT resource_kind, resource FROM r), range(0, 100) b(bin)
), busy AS (
    SELECT resource.kind AS resource_kind, resource.key AS resource, bin, busy_ns
    FROM inflight_bins('intf_inflight_input')
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

-- intf_resource_summary: one row per transport queue and device: its time series in one line
-- (interference.txt prints these beside the sparklines).
--   resource_kind, resource   as in intf_timeseries
--   inflight_avg    mean over the 100 bins of their time-averaged commands in flight
--   inflight_max    the busiest bin's
--   mb_s_avg        mean over the bins of their MB/s (10^6 bytes/s);  mb_s_max  the busiest bin's
CREATE OR REPLACE VIEW intf_resource_summary AS
SELECT resource_kind, resource, avg(inflight_avg) AS inflight_avg, max(inflight_avg) AS inflight_max,
       avg(mb_s) AS mb_s_avg, max(mb_s) AS mb_s_max
FROM intf_timeseries GROUP BY resource_kind, resource;
