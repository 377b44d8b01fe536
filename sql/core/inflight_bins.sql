-- requires: none

-- inflight_bins(VIEW): the in-flight time per (resource, time bin) of the intervals in VIEW,
-- the one sweep both time series use (report_timeseries here, intf_timeseries in
-- sql/interference/timeseries.sql). VIEW (a view or table name) has the columns
-- resource, s, e (interval start and end, ns) and t0, bin_ns (the bins: [t0 + k * bin_ns,
-- t0 + (k + 1) * bin_ns), the same in every row). Linear in the intervals: with F(T) = the
-- in-flight time summed over intervals before T = sum over starts before T of (T - s) - the
-- same over ends, a bin's in-flight time is F(bin end) - F(bin start), from per-bin counts
-- and sums of the start and end times (exact integers), never visiting interval x bin.
--   resource, bin (from the resource's first start bin to its last end bin)
--   busy_ns      in-flight time in the bin (ns; / bin_ns = average in flight)
--   spanning     intervals spanning the bin (started in or before it, not ended before it)
-- Callers count what ends in a bin (completions, bytes) themselves.
CREATE OR REPLACE MACRO inflight_bins(input_view) AS TABLE
WITH x AS (
    SELECT resource, s, e, t0, bin_ns, (s - t0) // bin_ns AS s_bin, (e - t0) // bin_ns AS e_bin
    FROM query_table(input_view)
), pts AS (
    SELECT resource, s_bin AS bin, 1 AS d, s AS ts FROM x
    UNION ALL SELECT resource, e_bin, -1, e FROM x
), per_bin AS (
    SELECT resource, bin, sum(d) AS n, sum(d * ts) AS t,
           count(*) FILTER (WHERE d = 1) AS n_start, count(*) FILTER (WHERE d = -1) AS n_end
    FROM pts GROUP BY ALL
), grid AS (
    SELECT resource, any_value(t0) AS t0, any_value(bin_ns) AS bin_ns,
           unnest(range(min(s_bin), max(e_bin) + 1)) AS bin
    FROM x GROUP BY resource
), f AS (
    SELECT g.resource, g.bin,
           (g.t0 + (g.bin + 1) * g.bin_ns) * sum(coalesce(p.n, 0)) OVER c - sum(coalesce(p.t, 0)) OVER c AS f_end,
           sum(coalesce(p.n_start, 0)) OVER c - sum(coalesce(p.n_end, 0)) OVER c + coalesce(p.n_end, 0) AS spanning
    FROM grid g LEFT JOIN per_bin p USING (resource, bin)
    WINDOW c AS (PARTITION BY g.resource ORDER BY g.bin ROWS UNBOUNDED PRECEDING)
)
SELECT resource, bin, f_end - lag(f_end, 1, 0) OVER (PARTITION BY resource ORDER BY bin) AS busy_ns, spanning
FROM f;
