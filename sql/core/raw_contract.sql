-- requires: none

-- raw_contract: the columns the views below read from each trace system's Parquet
-- files, as the converter writes them (analyzer/: <host>/parquet/<system>/<event>.parquet).
-- One row = one (system, column). The loader (sql/views.py) builds one view
-- raw_<system> per system: every event file of every host, union by column name, plus
-- `host` (the <host> directory name) and `event` (the file name without .parquet);
-- a contract column an event does not have is NULL, a system with no file at all is an
-- empty view with exactly these columns. Adding a column here makes it visible upstream.
--   system       trace system (directory under parquet/)
--   column_name  column name in the Parquet file
--   column_type  DuckDB type the views rely on (values are cast to it)
CREATE OR REPLACE TABLE raw_contract AS
SELECT * FROM (VALUES
    -- common to every event
    ('*', 'ts', 'BIGINT'), ('*', 'cpu', 'INTEGER'), ('*', 'pid', 'INTEGER'), ('*', 'comm', 'VARCHAR'),
    -- nvme: host driver (nvme_setup_cmd, nvme_complete_rq, nvme_sq)
    ('nvme', 'disk', 'VARCHAR'), ('nvme', 'ctrl_id', 'BIGINT'), ('nvme', 'qid', 'BIGINT'),
    ('nvme', 'cid', 'BIGINT'), ('nvme', 'opcode', 'BIGINT'), ('nvme', 'fctype', 'BIGINT'),
    ('nvme', 'nsid', 'BIGINT'), ('nvme', 'cdw10', 'UTINYINT[]'), ('nvme', 'status', 'BIGINT'),
    ('nvme', 'retries', 'BIGINT'), ('nvme', 'result', 'UBIGINT'),
    -- nvmet: target core (nvmet_req_init, nvmet_req_complete)
    ('nvmet', 'disk', 'VARCHAR'), ('nvmet', 'ctrl_id', 'BIGINT'), ('nvmet', 'qid', 'BIGINT'),
    ('nvmet', 'cid', 'BIGINT'), ('nvmet', 'opcode', 'BIGINT'), ('nvmet', 'fctype', 'BIGINT'),
    ('nvmet', 'nsid', 'BIGINT'), ('nvmet', 'cdw10', 'UTINYINT[]'), ('nvmet', 'status', 'BIGINT'),
    ('nvmet', 'result', 'UBIGINT'),
    -- block layer, both hosts
    ('block', 'dev', 'BIGINT'), ('block', 'sector', 'UBIGINT'), ('block', 'nr_sector', 'BIGINT'),
    ('block', 'bytes', 'BIGINT'), ('block', 'rwbs', 'VARCHAR'), ('block', 'error', 'BIGINT'),
    -- block_bio_remap: where the bio came from (native multipath: the namespace's device)
    ('block', 'old_dev', 'BIGINT'), ('block', 'old_sector', 'UBIGINT'),
    -- patched kernels: nvme_tcp (initiator) and nvmet_tcp (target); see kernel-patches/EVENTS.md
    ('nvme_tcp', 'ctrl_instance', 'BIGINT'), ('nvme_tcp', 'cntlid', 'BIGINT'), ('nvme_tcp', 'qid', 'BIGINT'),
    ('nvme_tcp', 'cid', 'BIGINT'), ('nvme_tcp', 'tag', 'BIGINT'), ('nvme_tcp', 'opcode', 'BIGINT'),
    ('nvme_tcp', 'is_write', 'BIGINT'), ('nvme_tcp', 'data_len', 'BIGINT'),
    ('nvme_tcp', 'req_list_len', 'BIGINT'), ('nvme_tcp', 'send_list_len', 'BIGINT'),
    ('nvmet_tcp', 'cntlid', 'BIGINT'), ('nvmet_tcp', 'qid', 'BIGINT'), ('nvmet_tcp', 'queue_idx', 'BIGINT'),
    ('nvmet_tcp', 'cid', 'BIGINT'), ('nvmet_tcp', 'opcode', 'BIGINT'), ('nvmet_tcp', 'is_write', 'BIGINT'),
    ('nvmet_tcp', 'data_len', 'BIGINT'), ('nvmet_tcp', 'status', 'BIGINT'),
    ('nvmet_tcp', 'resp_list_len', 'BIGINT'), ('nvmet_tcp', 'send_list_len', 'BIGINT'),
    -- probe events the capture places (capture key probes=; capture/ntscope-capture, probe_catalogue):
    -- group ntscope_nvme_tcp on an initiator, ntscope_nvmet_tcp on a target; every probe reads a
    -- part of these (the command's identity, and a socket send's state)
    ('ntscope_nvme_tcp', 'cid', 'BIGINT'), ('ntscope_nvme_tcp', 'genctr', 'BIGINT'), ('ntscope_nvme_tcp', 'tag', 'BIGINT'),
    ('ntscope_nvme_tcp', 'hctx_queue_num', 'BIGINT'), ('ntscope_nvme_tcp', 'queuedata', 'UBIGINT'),
    ('ntscope_nvme_tcp', 'ctrl_instance', 'BIGINT'), ('ntscope_nvme_tcp', 'cntlid', 'BIGINT'),
    ('ntscope_nvme_tcp', 'send_state', 'BIGINT'), ('ntscope_nvme_tcp', 'send_offset', 'UBIGINT'),
    ('ntscope_nvmet_tcp', 'cid', 'BIGINT'), ('ntscope_nvmet_tcp', 'opcode', 'BIGINT'), ('ntscope_nvmet_tcp', 'qid', 'BIGINT'),
    ('ntscope_nvmet_tcp', 'cntlid', 'BIGINT'), ('ntscope_nvmet_tcp', 'trtype', 'BIGINT'),
    ('ntscope_nvmet_tcp', 'send_state', 'BIGINT'), ('ntscope_nvmet_tcp', 'send_offset', 'UBIGINT'),
    ('ntscope_nvmet_tcp', 'state_c2h', 'BIGINT'), ('ntscope_nvmet_tcp', 'state_r2t', 'BIGINT'),
    ('ntscope_nvmet_tcp', 'state_response', 'BIGINT'),
    -- workqueue: the capture keeps only the NVMe/TCP io_work (capture key cpu_wait) and the
    -- recovery works (capture key recovery);
    -- field_cpu is the pool's CPU of workqueue_queue_work (the event's own CPU is cpu)
    ('workqueue', 'work', 'UBIGINT'), ('workqueue', 'function', 'UBIGINT'),
    ('workqueue', 'req_cpu', 'BIGINT'), ('workqueue', 'field_cpu', 'BIGINT'),
    -- irq: softirq_raise / _entry / _exit, the capture keeps NET_RX (vec 3) (capture key cpu_wait)
    ('irq', 'vec', 'BIGINT'),
    -- tcp: tcp_probe of the connections that are not NVMe/TCP (capture key net_flows) and of
    -- the NVMe/TCP ones (nvme_acks): sockaddr_in/_in6 as bytes, ports, payload length,
    -- snd_una, snd_nxt, the smoothed round trip (srtt, us), the socket's cookie
    ('tcp', 'family', 'BIGINT'), ('tcp', 'saddr', 'UTINYINT[]'), ('tcp', 'daddr', 'UTINYINT[]'),
    ('tcp', 'sport', 'BIGINT'), ('tcp', 'dport', 'BIGINT'), ('tcp', 'data_len', 'BIGINT'),
    ('tcp', 'snd_una', 'BIGINT'), ('tcp', 'snd_nxt', 'BIGINT'), ('tcp', 'srtt', 'BIGINT'), ('tcp', 'sock_cookie', 'UBIGINT'),
    -- tenants (capture key tenants=): the probe ntscope_block:rq_owner (a block request's
    -- sector, bytes, cgroup v2 id, its first bio's end_io, and the file of a direct I/O's kiocb
    -- and of its first page's mapping) and cgroup:cgroup_mkdir / _rmdir (hierarchy, id, path)
    ('ntscope_block', 'sector', 'UBIGINT'), ('ntscope_block', 'nr_bytes', 'BIGINT'),
    ('ntscope_block', 'cgroup_id', 'UBIGINT'), ('ntscope_block', 'end_io', 'UBIGINT'),
    ('ntscope_block', 'dio_ino', 'UBIGINT'), ('ntscope_block', 'dio_dev', 'BIGINT'),
    ('ntscope_block', 'page_mapping', 'UBIGINT'), ('ntscope_block', 'page_ino', 'UBIGINT'),
    ('ntscope_block', 'page_dev', 'BIGINT'),
    ('cgroup', 'root', 'BIGINT'), ('cgroup', 'id', 'BIGINT'), ('cgroup', 'level', 'BIGINT'),
    ('cgroup', 'path', 'VARCHAR')
) AS t(system, column_name, column_type);
