-- requires: none

-- The default group of the reports, one spelling for analyze (report/io_selected), compare's
-- input and its verdict. Another --group-by is built by reports/report/spec.py in the same form
-- ('field=value', joined by ', '); compare builds it with io_group_key below (a test holds the
-- two equal, field by field: reports/compare/tests/test_compare_group_by.py).

-- type_size_group_key(io_type, size_bytes): the group key of an I/O type and size
--   'type=<io_type, ? unknown>, size=<bytes>', e.g. 'type=read, size=4096'
CREATE OR REPLACE MACRO type_size_group_key(io_type, size_bytes) AS
    'type=' || coalesce(io_type, '?') || ', size=' || size_bytes;

-- io_group_key(fields, r): the group key of row r (an io row, or any row with io's columns)
-- for the --group-by fields, in their order: '<field>=<value, ? unknown>' joined by ', ', e.g.
-- io_group_key(['path'], i) = 'path=initiator/nvme1@10.0.0.2:4420'. The fields and the io
-- column each reads are reports/report/spec.py's FIELDS (time excepted: a bucket of one run's
-- clock, which means nothing across runs); io_group_key(['type', 'size'], r) =
-- type_size_group_key(r.io_type, r.size_bytes).
CREATE OR REPLACE MACRO io_group_key(fields, r) AS array_to_string(list_transform(fields, lambda f:
    f || '=' || coalesce(CASE f
        WHEN 'type' THEN r.io_type WHEN 'size' THEN r.size_bytes::VARCHAR
        WHEN 'device' THEN r.device_key WHEN 'queue' THEN r.queue_key WHEN 'cpu' THEN r.cpu::VARCHAR
        WHEN 'process' THEN r.comm WHEN 'pid' THEN r.pid::VARCHAR WHEN 'host' THEN r.initiator_host
        WHEN 'target' THEN r.target_host WHEN 'cgroup' THEN r.cgroup WHEN 'tenant' THEN r.tenant
        WHEN 'class' THEN r.class WHEN 'file' THEN r.file WHEN 'namespace' THEN r.namespace
        WHEN 'target_device' THEN r.target_device_key WHEN 'path' THEN r.path END, '?')), ', ');
