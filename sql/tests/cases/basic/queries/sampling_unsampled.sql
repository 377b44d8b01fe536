-- An unsampled run: scale 1, and no sampling rows for pipeline_stats.
SELECT (SELECT sampled FROM sampling_run) AS sampled, (SELECT scale FROM sampling_run) AS scale,
       (SELECT scale_source FROM sampling_run) AS scale_source,
       (SELECT count(*) FROM sampling_stats) AS sampling_stats_rows,
       (SELECT string_agg(host || ':' || sample_source, ',' ORDER BY host) FROM sampling) AS sources;
