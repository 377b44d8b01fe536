-- each queue's and device's series in one line (interference.txt): the same means and maxima
-- as run__timeseries_summary, computed from intf_timeseries independently
SELECT resource_kind, resource, round(inflight_avg, 3) AS inflight_avg, round(inflight_max, 3) AS inflight_max,
       round(mb_s_avg, 3) AS mb_s_avg, round(mb_s_max, 3) AS mb_s_max
FROM intf_resource_summary ORDER BY 1, 2;
