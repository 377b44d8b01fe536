-- which resources each stream shared (pids differ per run: keep the type and size)
SELECT regexp_replace(stream_id, '/[0-9]+ ', '/<pid> ') AS stream, verdict, queue_same_cpu,
       shared_queue_with IS NOT NULL AS shared_queue, shared_device_with IS NOT NULL AS shared_device
FROM intf_stream_verdict ORDER BY stream;
