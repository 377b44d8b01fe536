-- who waited behind whom, rounded
SELECT regexp_replace(stream_id, '/[0-9]+ ', '/<pid> ') AS stream, resource,
       regexp_replace(other_stream_id, '/[0-9]+ ', '/<pid> ') AS other, same_cpu, ios_waited,
       round(ios_waited_frac, 3) AS frac, round(ahead_bytes_mean / 1024, 1) AS ahead_kib,
       round(wait_ns_with / 1e3) AS wait_with_us, round(wait_ns_without / 1e3) AS wait_without_us
FROM intf_stream_sharing ORDER BY stream, resource;
