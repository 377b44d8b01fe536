-- queue depth and throughput over time, summarized per resource
SELECT resource_kind, resource, count(*) AS bins, round(avg(inflight_avg), 3) AS inflight_avg,
       round(max(inflight_avg), 3) AS inflight_max, sum(completions) AS completions, round(avg(mb_s), 3) AS mb_s_avg
FROM intf_timeseries GROUP BY ALL ORDER BY 1, 2;
