-- requires: none
-- input: run_hosts  the run's host folders (sql/views.py)

-- The nvme-tcp driver's recovery works the capture recorded (capture key recovery: workqueue
-- events of nvme_tcp_error_recovery_work, nvme_tcp_reconnect_ctrl_work and
-- nvme_reset_ctrl_work, filtered by their addresses, named in host.json recovery.works). The
-- workqueue events of io_work and of these works share one event file: sql/core/cpu_wait.sql
-- leaves these out, sql/recovery/outages.sql reads them.

-- recovery_work_functions: one row per (host, work function) the capture recorded.
--   host, function (e.g. 'nvme_tcp_error_recovery_work'), address (kallsyms, the events' function)
CREATE OR REPLACE TABLE recovery_work_functions AS
SELECT host, w->>'function' AS function,
       TRY_CAST(('0x' || lower(regexp_replace(w->>'address', '^0x', ''))) AS UBIGINT) AS address
FROM (SELECT host, unnest(from_json(host_json->'$.recovery.works', '["JSON"]')) AS w
      FROM run_hosts WHERE json_type(host_json, '$.recovery.works') = 'ARRAY');
