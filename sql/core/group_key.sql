-- requires: none

-- The group key of the reports, one definition: analyze's io_selected (sql/report/io_selected.sql)
-- and compare's input (sql/compare/input.sql) both key their I/Os with these macros. Each takes
-- its row's values as a list in io_group_fields() order, so that a view binds each io column
-- once (a struct of the columns handed to a macro that reads it field by field is copied into
-- every reference: 13 ms to bind io_selected, against 1 ms for io).

-- type_size_group_key(io_type, size_bytes): the group key of an I/O type and size, the default
--   'type=<io_type, ? unknown>, size=<bytes>', e.g. 'type=read, size=4096'
CREATE OR REPLACE MACRO type_size_group_key(io_type, size_bytes) AS
    'type=' || coalesce(io_type, '?') || ', size=' || size_bytes;

-- io_group_fields(): the --group-by fields (reports/report/spec.py FIELDS), in the order of the
-- value lists below
CREATE OR REPLACE MACRO io_group_fields() AS
    ['type', 'size', 'device', 'queue', 'cpu', 'process', 'pid', 'host', 'target', 'cgroup', 'tenant', 'class',
     'file', 'namespace', 'target_device', 'path', 'time'];

-- io_group_texts(...): an io's value of each field, as text, in io_group_fields() order: the io
-- columns io_type, size_bytes, device_key, queue_key, cpu, comm, pid, initiator_host,
-- target_host, cgroup, tenant, class, file, namespace, target_device_key, path, and the time
-- bucket's text (io_selected's; NULL elsewhere)
CREATE OR REPLACE MACRO io_group_texts(io_type, size_bytes, device_key, queue_key, cpu, comm, pid, initiator_host,
                                       target_host, cgroup, tenant, class, file, namespace, target_device_key, path,
                                       time_text) AS
    [io_type, size_bytes::VARCHAR, device_key, queue_key, cpu::VARCHAR, comm, pid::VARCHAR, initiator_host, target_host,
     cgroup, tenant, class, file, namespace, target_device_key, path, time_text];

-- io_group_jsons(...): the same values as JSON (numbers as numbers: size, cpu, pid, time_s)
CREATE OR REPLACE MACRO io_group_jsons(io_type, size_bytes, device_key, queue_key, cpu, comm, pid, initiator_host,
                                       target_host, cgroup, tenant, class, file, namespace, target_device_key, path,
                                       time_s) AS
    [to_json(io_type), to_json(size_bytes), to_json(device_key), to_json(queue_key), to_json(cpu), to_json(comm),
     to_json(pid), to_json(initiator_host), to_json(target_host), to_json(cgroup), to_json(tenant), to_json(class),
     to_json(file), to_json(namespace), to_json(target_device_key), to_json(path), to_json(time_s)];

-- io_group_key_of(fields, texts): the group key for the --group-by fields, in their order:
-- '<field>=<value, ? unknown>' joined by ', ', e.g. 'path=initiator/nvme1@10.0.0.2:4420'
CREATE OR REPLACE MACRO io_group_key_of(fields, texts) AS array_to_string(list_transform(fields, lambda f:
    f || '=' || coalesce(texts[list_position(io_group_fields(), f)], '?')), ', ');

-- io_group_json_of(fields, jsons): the same group as a JSON object, a member per field in its
-- order, named as report.json's groups[].key names them (size: 'size_bytes', time: 'time_s',
-- the others the field), unknown values null, e.g. {"queue":"initiator/c0/q1","size_bytes":4096}
CREATE OR REPLACE MACRO io_group_json_of(fields, jsons) AS ('{' || array_to_string(list_transform(fields, lambda f:
    to_json(CASE f WHEN 'size' THEN 'size_bytes' WHEN 'time' THEN 'time_s' ELSE f END)::VARCHAR || ':'
    || coalesce(jsons[list_position(io_group_fields(), f)]::VARCHAR, 'null')), ',') || '}')::JSON;

-- io_group_key(fields, r): the group key of row r (a struct or row with io's columns) for
-- fields without time (a bucket of one run's clock, which means nothing across runs: compare);
-- io_group_key(['type', 'size'], r) = type_size_group_key(r.io_type, r.size_bytes).
CREATE OR REPLACE MACRO io_group_key(fields, r) AS io_group_key_of(fields, io_group_texts(
    r.io_type, r.size_bytes, r.device_key, r.queue_key, r.cpu, r.comm, r.pid, r.initiator_host, r.target_host, r.cgroup,
    r.tenant, r.class, r.file, r.namespace, r.target_device_key, r.path, NULL::VARCHAR));
