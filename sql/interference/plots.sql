-- requires: interference/streams, interference/timeseries
-- loaded: with interference

-- Plot layer of interference.html (reports/interference/plot_data.py reads it; the HTML
-- only draws it). Aggregates over intf_io: its size depends on streams and bins, never on
-- the number of I/Os.

-- intf_stream_timeseries: one row per (stream, time bin), every bin of intf_timeseries
-- (the same 100 bins from the first submit, the same width): what each application stream
-- got over time, so one stream's throughput dropping while another's rises shows.
--   stream_id      as in intf_streams
--   stream_ios     the stream's I/Os over the whole run (to rank streams)
--   bin            0..99;  bin_start_ns  offset of the bin from the first submit (ns);  bin_ns  width (ns)
--   completions    the stream's I/Os completing (nvme_complete_rq) in the bin (0 when none)
--   mb_s           their bytes per second (10^6 bytes/s; 0 when none)
--   wait_mean_ns   their mean wait_ns (ns; NULL when none completed in the bin)
CREATE OR REPLACE VIEW intf_stream_timeseries AS
WITH w AS (
    SELECT (SELECT min(submit_ts) FROM intf_io) AS t0, (SELECT any_value(bin_ns) FROM intf_timeseries) AS bin_ns
), bins AS (
    SELECT DISTINCT bin FROM intf_timeseries
), done AS (
    SELECT i.stream_id, least((i.done_ts - w.t0) // w.bin_ns, 99) AS bin,
           count(*) AS completions, sum(i.size_bytes) AS bytes, avg(i.wait_ns) AS wait_mean_ns
    FROM intf_io i, w GROUP BY ALL
), streams AS (
    SELECT stream_id, count(*) AS stream_ios FROM intf_io GROUP BY stream_id
)
SELECT s.stream_id, s.stream_ios, b.bin, b.bin * w.bin_ns AS bin_start_ns, w.bin_ns,
       coalesce(d.completions, 0) AS completions,
       coalesce(d.bytes, 0) * 1e3 / w.bin_ns AS mb_s,
       d.wait_mean_ns
FROM streams s CROSS JOIN bins b CROSS JOIN w
LEFT JOIN done d ON d.stream_id = s.stream_id AND d.bin = b.bin;
