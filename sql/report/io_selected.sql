-- requires: core/join, core/group_key
-- input: io_selected  the report's filters and grouping (reports/report/spec.py)

-- io_selected: one row per io the report covers, with its group. The report's filters and
-- grouping make it (reports/report/spec.py, an input of the loader); this default
-- keeps every io and groups by type and size, like ntprof's "group: type=read, size=4096".
--   (all io columns)
--   group_key    display key, e.g. 'type=read, size=4096'
--   group_json   the same as a JSON object, e.g. {"type":"read","size_bytes":4096}
--   time_bucket_start_ts, time_bucket_end_ts   grouping by time: the bucket the io was
--                submitted in (ns, initiator clock, [start, end)); NULL otherwise
CREATE OR REPLACE VIEW io_selected AS
SELECT *, type_size_group_key(io_type, size_bytes) AS group_key,
       json_object('type', io_type, 'size_bytes', size_bytes) AS group_json,
       NULL::BIGINT AS time_bucket_start_ts, NULL::BIGINT AS time_bucket_end_ts
FROM io;
