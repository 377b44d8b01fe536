-- requires: none
-- input: report_selection  the report's filters and grouping, one row (reports/report/selection.py: Spec.selection)

-- report_selection: one row, the report's selection as values (never SQL text): each column
-- NULL when not given; the default selects every io and groups by type and size.
--   types, device_keys, queue_keys, hosts, targets, comms, cgroups, tenants, classes, files,
--   namespaces, target_devices, paths   the values of io's io_type, device_key, queue_key,
--                  initiator_host, target_host, comm, cgroup, tenant, class, file, namespace,
--                  target_device_key, path to keep (--type, --device, ... --path)
--   pids, cpus     pid / cpu values to keep (--process takes names and pids: comms OR pids)
--   size_ranges    [{lo, hi}] bytes, inclusive (--size 4k: lo = hi = 4096; >=32k: hi 2^62)
--   streams        [{host, comm, pid, io_type, size_bytes}] (--stream; NULL matches NULL)
--   window_lo_ns, window_hi_ns   --window in ns from io_time_origin: lo <= i_setup_ts - t0 < hi
--   group_by       the --group-by fields (reports/report/spec.py FIELDS); NULL: type, size
--   bucket_ns      --time-bucket in ns
--   bucket_decimals   the decimals a time group's key prints (the bucket's as written: 0.25 -> 2;
--                  NULL: DuckDB's DOUBLE text)
CREATE OR REPLACE TABLE report_selection AS
SELECT NULL::VARCHAR[] AS types, NULL::STRUCT(lo BIGINT, hi BIGINT)[] AS size_ranges,
       NULL::VARCHAR[] AS device_keys, NULL::VARCHAR[] AS queue_keys, NULL::VARCHAR[] AS hosts,
       NULL::VARCHAR[] AS targets,
       NULL::STRUCT(host VARCHAR, comm VARCHAR, pid BIGINT, io_type VARCHAR, size_bytes BIGINT)[] AS streams,
       NULL::BIGINT[] AS cpus, NULL::VARCHAR[] AS comms, NULL::BIGINT[] AS pids, NULL::VARCHAR[] AS cgroups,
       NULL::VARCHAR[] AS tenants, NULL::VARCHAR[] AS classes, NULL::VARCHAR[] AS files,
       NULL::VARCHAR[] AS namespaces, NULL::VARCHAR[] AS target_devices, NULL::VARCHAR[] AS paths,
       NULL::BIGINT AS window_lo_ns, NULL::BIGINT AS window_hi_ns, NULL::VARCHAR[] AS group_by,
       NULL::BIGINT AS bucket_ns, NULL::INTEGER AS bucket_decimals;
