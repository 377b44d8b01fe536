SELECT regexp_replace(stream_id, '/[0-9]+ ', '/<pid> ') AS stream, io_type, size_bytes, ios, bytes, cpus, main_cpu,
       queues, devices, round(mb_s, 3) AS mb_s, round(mean_wait_ns / 1e3) AS mean_wait_us
FROM intf_streams ORDER BY stream;
