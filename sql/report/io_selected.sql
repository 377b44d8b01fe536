-- requires: core/join, core/group_key, report/io_selection

-- The report's selection (report_selection, the loader's input: values, never SQL text) as
-- variables of the connection, one per column (ntscope_sel_<column>): a variable is a constant
-- when a query is planned, so a filter not given drops out of io_selected's plan, one given is
-- pushed down like a literal IN list, and the key is the default's or io_group_key_of's, never
-- both (a join with report_selection would test every filter on every row of every query over
-- io_selected; one struct variable read field by field made each query bind 3 ms longer).
-- Variables belong to the connection: a cursor or another connection of the same database
-- sees this module's values only after loading it itself.
--   ntscope_sel_<column>   report_selection's columns (sql/report/io_selection.sql)
--   ntscope_io_selected    the view io_selected is: io_selected_all or io_selected_by_selection
--   ntscope_t0_ns          io_time_origin's t0_ns when a window or time groups need it, else
--                          NULL (the origin is an aggregate over io: not computed otherwise)
SET VARIABLE ntscope_sel_types = (SELECT types FROM report_selection);
SET VARIABLE ntscope_sel_size_ranges = (SELECT size_ranges FROM report_selection);
SET VARIABLE ntscope_sel_device_keys = (SELECT device_keys FROM report_selection);
SET VARIABLE ntscope_sel_queue_keys = (SELECT queue_keys FROM report_selection);
SET VARIABLE ntscope_sel_hosts = (SELECT hosts FROM report_selection);
SET VARIABLE ntscope_sel_targets = (SELECT targets FROM report_selection);
SET VARIABLE ntscope_sel_streams = (SELECT streams FROM report_selection);
SET VARIABLE ntscope_sel_cpus = (SELECT cpus FROM report_selection);
SET VARIABLE ntscope_sel_comms = (SELECT comms FROM report_selection);
SET VARIABLE ntscope_sel_pids = (SELECT pids FROM report_selection);
SET VARIABLE ntscope_sel_cgroups = (SELECT cgroups FROM report_selection);
SET VARIABLE ntscope_sel_tenants = (SELECT tenants FROM report_selection);
SET VARIABLE ntscope_sel_classes = (SELECT classes FROM report_selection);
SET VARIABLE ntscope_sel_files = (SELECT files FROM report_selection);
SET VARIABLE ntscope_sel_namespaces = (SELECT namespaces FROM report_selection);
SET VARIABLE ntscope_sel_target_devices = (SELECT target_devices FROM report_selection);
SET VARIABLE ntscope_sel_paths = (SELECT paths FROM report_selection);
SET VARIABLE ntscope_sel_window_lo_ns = (SELECT window_lo_ns FROM report_selection);
SET VARIABLE ntscope_sel_window_hi_ns = (SELECT window_hi_ns FROM report_selection);
SET VARIABLE ntscope_sel_group_by = (SELECT group_by FROM report_selection);
SET VARIABLE ntscope_sel_bucket_ns = (SELECT bucket_ns FROM report_selection);
SET VARIABLE ntscope_sel_bucket_decimals = (SELECT bucket_decimals FROM report_selection);
SET VARIABLE ntscope_io_selected = (
    SELECT CASE WHEN types IS NULL AND size_ranges IS NULL AND device_keys IS NULL AND queue_keys IS NULL
                     AND hosts IS NULL AND targets IS NULL AND streams IS NULL AND cpus IS NULL AND comms IS NULL
                     AND pids IS NULL AND cgroups IS NULL AND tenants IS NULL AND classes IS NULL AND files IS NULL
                     AND namespaces IS NULL AND target_devices IS NULL AND paths IS NULL AND window_lo_ns IS NULL
                     AND window_hi_ns IS NULL AND group_by IS NULL
                THEN 'io_selected_all' ELSE 'io_selected_by_selection' END
    FROM report_selection);
SET VARIABLE ntscope_t0_ns = (
    SELECT t0_ns FROM io_time_origin
    WHERE getvariable('ntscope_sel_window_lo_ns') IS NOT NULL OR getvariable('ntscope_sel_window_hi_ns') IS NOT NULL
       OR list_contains(getvariable('ntscope_sel_group_by'), 'time'));

-- io_time_bucket_no(ts): the time bucket ts (ns, initiator clock) falls in, when grouping by
-- time (0, 1, ... from ntscope_t0_ns; NULL otherwise)
CREATE OR REPLACE MACRO io_time_bucket_no(ts) AS
    CASE WHEN list_contains(getvariable('ntscope_sel_group_by'), 'time') THEN (ts - getvariable('ntscope_t0_ns')) // getvariable('ntscope_sel_bucket_ns') END;

-- io_selected_all: every io, grouped by type and size, like ntprof's "group: type=read,
-- size=4096" (the default selection).
--   (the columns of io_selected)
CREATE OR REPLACE VIEW io_selected_all AS
SELECT *, type_size_group_key(io_type, size_bytes) AS group_key,
       json_object('type', io_type, 'size_bytes', size_bytes) AS group_json,
       NULL::BIGINT AS time_bucket_start_ts, NULL::BIGINT AS time_bucket_end_ts
FROM io;

-- io_selected_by_selection: the io report_selection keeps, grouped by its group_by.
--   (the columns of io_selected)
CREATE OR REPLACE VIEW io_selected_by_selection AS
SELECT *,
       CASE WHEN getvariable('ntscope_sel_group_by') IS NULL THEN type_size_group_key(io_type, size_bytes)
            ELSE io_group_key_of(getvariable('ntscope_sel_group_by'), io_group_texts(
                     io_type, size_bytes, device_key, queue_key, cpu, comm, pid, initiator_host, target_host, cgroup, tenant, class,
                     file, namespace, target_device_key, path,
                     CASE WHEN getvariable('ntscope_sel_bucket_decimals') IS NULL
                          THEN (io_time_bucket_no(i_setup_ts) * getvariable('ntscope_sel_bucket_ns') / 1e9)::VARCHAR
                          ELSE format('{:.{}f}', io_time_bucket_no(i_setup_ts) * getvariable('ntscope_sel_bucket_ns') / 1e9, getvariable('ntscope_sel_bucket_decimals')) END))
            END AS group_key,
       CASE WHEN getvariable('ntscope_sel_group_by') IS NULL THEN json_object('type', io_type, 'size_bytes', size_bytes)
            ELSE io_group_json_of(getvariable('ntscope_sel_group_by'), io_group_jsons(
                     io_type, size_bytes, device_key, queue_key, cpu, comm, pid, initiator_host, target_host, cgroup, tenant, class,
                     file, namespace, target_device_key, path,
                     io_time_bucket_no(i_setup_ts) * getvariable('ntscope_sel_bucket_ns') / 1e9)) END AS group_json,
       getvariable('ntscope_t0_ns') + io_time_bucket_no(i_setup_ts) * getvariable('ntscope_sel_bucket_ns') AS time_bucket_start_ts,
       getvariable('ntscope_t0_ns') + (io_time_bucket_no(i_setup_ts) + 1) * getvariable('ntscope_sel_bucket_ns') AS time_bucket_end_ts
FROM io
WHERE (getvariable('ntscope_sel_types') IS NULL OR list_contains(getvariable('ntscope_sel_types'), io_type))
  AND (getvariable('ntscope_sel_size_ranges') IS NULL
       OR list_bool_or(list_transform(getvariable('ntscope_sel_size_ranges'), lambda r: size_bytes BETWEEN r.lo AND r.hi)))
  AND (getvariable('ntscope_sel_device_keys') IS NULL OR list_contains(getvariable('ntscope_sel_device_keys'), device_key))
  AND (getvariable('ntscope_sel_queue_keys') IS NULL OR list_contains(getvariable('ntscope_sel_queue_keys'), queue_key))
  AND (getvariable('ntscope_sel_hosts') IS NULL OR list_contains(getvariable('ntscope_sel_hosts'), initiator_host))
  AND (getvariable('ntscope_sel_targets') IS NULL OR list_contains(getvariable('ntscope_sel_targets'), target_host))
  AND (getvariable('ntscope_sel_cpus') IS NULL OR list_contains(getvariable('ntscope_sel_cpus'), cpu))
  AND (getvariable('ntscope_sel_cgroups') IS NULL OR list_contains(getvariable('ntscope_sel_cgroups'), cgroup))
  AND (getvariable('ntscope_sel_tenants') IS NULL OR list_contains(getvariable('ntscope_sel_tenants'), tenant))
  AND (getvariable('ntscope_sel_classes') IS NULL OR list_contains(getvariable('ntscope_sel_classes'), class))
  AND (getvariable('ntscope_sel_files') IS NULL OR list_contains(getvariable('ntscope_sel_files'), file))
  AND (getvariable('ntscope_sel_namespaces') IS NULL OR list_contains(getvariable('ntscope_sel_namespaces'), namespace))
  AND (getvariable('ntscope_sel_target_devices') IS NULL OR list_contains(getvariable('ntscope_sel_target_devices'), target_device_key))
  AND (getvariable('ntscope_sel_paths') IS NULL OR list_contains(getvariable('ntscope_sel_paths'), path))
  AND (getvariable('ntscope_sel_streams') IS NULL
       OR list_contains(getvariable('ntscope_sel_streams'), {'host': initiator_host, 'comm': comm, 'pid': pid, 'io_type': io_type,
                                                       'size_bytes': size_bytes}))
  AND (getvariable('ntscope_sel_comms') IS NULL OR list_contains(getvariable('ntscope_sel_comms'), comm)
       OR list_contains(coalesce(getvariable('ntscope_sel_pids'), []), pid))
  AND (getvariable('ntscope_sel_window_lo_ns') IS NULL OR i_setup_ts >= getvariable('ntscope_t0_ns') + getvariable('ntscope_sel_window_lo_ns'))
  AND (getvariable('ntscope_sel_window_hi_ns') IS NULL OR i_setup_ts < getvariable('ntscope_t0_ns') + getvariable('ntscope_sel_window_hi_ns'));

-- io_selected: one row per io the report covers, with its group: io_selected_all when the
-- selection is the default (no filter, grouped by type and size), else io_selected_by_selection
-- (the variable ntscope_io_selected names which: a query binds only that one, and the default's
-- binds as fast as io itself, where the general one takes 5 ms more a query).
--   (all io columns)
--   group_key    display key, e.g. 'type=read, size=4096' (type_size_group_key, io_group_key_of)
--   group_json   the same as a JSON object, e.g. {"type":"read","size_bytes":4096}
--   time_bucket_start_ts, time_bucket_end_ts   grouping by time: the bucket the io was
--                submitted in (ns, initiator clock, [start, end), counted from ntscope_t0_ns);
--                NULL otherwise
CREATE OR REPLACE VIEW io_selected AS FROM query_table(getvariable('ntscope_io_selected'));
