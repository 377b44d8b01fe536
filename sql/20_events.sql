-- events: one row per NVMe, NVMe/TCP or block event of every host, normalized.
--   host, role      host directory name and its role (see hosts)
--   system, event   trace system and event name (e.g. nvme, nvme_setup_cmd)
--   ts              event time (ns, that host's trace clock)
--   cpu, pid, comm  where it ran
--   ctrl_id         controller as the event reports it: on the initiator the host
--                   instance (nvmeN), on the target the cntlid
--   cntlid          target controller id when the event carries it (patched kernels)
--   qid, cid        NVMe queue id and command id (full 16 bits, as on the wire)
--   opcode          NVMe opcode (2 read, 1 write, 0 flush, 127 fabrics)
--   fctype          fabrics command type (1 connect) when opcode = 127
--   slba, nlb       starting LBA and number of LBAs (NVM read/write/compare/write-zeroes)
--   status          NVMe completion status (completion events)
--   dev, sector, nr_sector, bytes, rwbs   block layer fields (sector in 512 B units)
--   disk            block device name the NVMe event names (nvme0n1, /dev/nullb0)
--   data_len     command data bytes (patched-kernel NVMe/TCP events)
--   queue_len    queue snapshot of NVMe/TCP enqueue events: req_list_len (host) or
--                resp_list_len (target), entries ahead of this one
--   send_list_len  send list snapshot (NVMe/TCP events)
--   queue_idx    nvmet-tcp connection number (target NVMe/TCP events)
-- A view, not a table: each use reads only the columns and events it needs from the
-- Parquet files; a table of 10 M events held 1.4 GB that spilled under the memory limit (the
-- views of a 10 M-event run: 57 -> 48 s).
CREATE OR REPLACE VIEW events AS
WITH nv AS (
    SELECT host, 'nvme' AS system, event, ts, cpu, pid, comm, ctrl_id, NULL::BIGINT AS cntlid,
           qid, cid, opcode, fctype, cdw10, status, disk FROM raw_nvme
    UNION ALL
    SELECT host, 'nvmet', event, ts, cpu, pid, comm, ctrl_id, ctrl_id, qid, cid, opcode, fctype,
           cdw10, status, disk FROM raw_nvmet
)
SELECT nv.host, h.role, system, event, ts, cpu, pid, comm, ctrl_id, cntlid, qid, cid, opcode, fctype,
       CASE WHEN qid > 0 AND opcode IN (1, 2, 5, 8) AND len(cdw10) >= 10 THEN
            cdw10[1]::UBIGINT + (cdw10[2]::UBIGINT << 8) + (cdw10[3]::UBIGINT << 16)
            + (cdw10[4]::UBIGINT << 24) + (cdw10[5]::UBIGINT << 32) + (cdw10[6]::UBIGINT << 40)
            + (cdw10[7]::UBIGINT << 48) + (cdw10[8]::UBIGINT << 56) END AS slba,
       CASE WHEN qid > 0 AND opcode IN (1, 2, 5, 8) AND len(cdw10) >= 10 THEN
            cdw10[9]::BIGINT + (cdw10[10]::BIGINT << 8) + 1 END AS nlb,
       status, NULL::BIGINT AS dev, NULL::UBIGINT AS sector, NULL::BIGINT AS nr_sector,
       NULL::BIGINT AS bytes, NULL::VARCHAR AS rwbs, nullif(disk, '') AS disk,
       NULL::BIGINT AS data_len, NULL::BIGINT AS queue_len, NULL::BIGINT AS send_list_len,
       NULL::BIGINT AS queue_idx
FROM nv JOIN hosts h USING (host)
UNION ALL
SELECT b.host, h.role, 'block', event, ts, cpu, pid, comm, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, dev, sector, nr_sector, bytes, rwbs, NULL,
       NULL, NULL, NULL, NULL
FROM raw_block b JOIN hosts h USING (host)
UNION ALL
SELECT t.host, h.role, 'nvme_tcp', event, ts, cpu, pid, comm, ctrl_instance, cntlid, qid, cid, opcode, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       data_len, req_list_len, send_list_len, NULL
FROM raw_nvme_tcp t JOIN hosts h USING (host)
UNION ALL
SELECT t.host, h.role, 'nvmet_tcp', event, ts, cpu, pid, comm, cntlid, cntlid, qid, cid, opcode, NULL,
       NULL, status, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       data_len, resp_list_len, send_list_len, queue_idx
FROM raw_nvmet_tcp t JOIN hosts h USING (host);
