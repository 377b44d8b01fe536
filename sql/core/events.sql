-- requires: core/stage_definitions, core/hosts
-- input: run_hosts, raw_<system>  the run's host folders and event files (sql/views.py)

-- probe_hits: one row per recorded hit of a capture probe (capture key probes=; groups
-- ntscope_nvme_tcp and ntscope_nvmet_tcp, probe_events) and the patched event it stands for.
-- A view.
--   host, role, system, event, ts, cpu, pid, comm   as in events (system: the probe group)
--   ctrl_id    initiator: controller instance (nvmeN); target: cntlid
--   cntlid     controller id the target assigned (initiator probes read it from nvme_ctrl)
--   qid, cid   queue id and command id as on the wire. Initiator probes read the blk-mq
--              request: qid is its hardware queue + 1 (0 for the admin queue, whose request
--              queue has no queuedata), and the cid, where a probe does not read it from the
--              command, is genctr << 12 | tag as nvme_cid() builds it
--   opcode     NVMe opcode (target probes)
--   stands_for the patched event whose milestone the hit gives (probe_events; NULL for a
--              socket send in a state that gives none)
CREATE OR REPLACE VIEW probe_hits AS
WITH hits AS (
    SELECT host, 'ntscope_nvme_tcp' AS system, event, ts, cpu, pid, comm,
           ctrl_instance AS ctrl_id, cntlid,
           CASE WHEN queuedata = 0 THEN 0 ELSE hctx_queue_num + 1 END AS qid,
           coalesce(cid, ((genctr & 15) << 12) | tag) AS cid, NULL::BIGINT AS opcode,
           NULL::VARCHAR AS send_kind
    FROM raw_ntscope_nvme_tcp
    UNION ALL
    SELECT host, 'ntscope_nvmet_tcp', event, ts, cpu, pid, comm, cntlid, cntlid, qid, cid, opcode,
           CASE send_state WHEN state_c2h THEN 'c2h' WHEN state_r2t THEN 'r2t' WHEN state_response THEN 'response' END
    FROM raw_ntscope_nvmet_tcp
)
SELECT h.host, hs.role, h.system, h.event, h.ts, h.cpu, h.pid, h.comm, h.ctrl_id, h.cntlid, h.qid, h.cid,
       h.opcode, pe.stands_for
FROM hits h JOIN hosts hs USING (host)
LEFT JOIN probe_events pe ON pe.system = h.system AND h.event LIKE pe.event
 AND (pe.hit_is IS NULL OR pe.hit_is = h.send_kind
      OR (pe.hit_is = 'write' AND (h.opcode & 1) = 1) OR (pe.hit_is = 'read' AND (h.opcode & 1) = 0));

-- host_milestones: one row per host: where its NVMe/TCP milestones come from. A host that
-- recorded both the patched events and the capture's probes (the lab's agreement check) gives
-- them from the patched events unless the analysis is asked for the probes' (ntscope analyze
-- --milestones probe, DuckDB variable ntscope_milestones). A table.
--   host
--   tracepoints   the host recorded the patched nvme_tcp / nvmet_tcp events (an event type in
--                 its trace, even one that never fired: metadata.json; else one that did)
--   probes        it recorded the capture's probes (host.json probes.active, or probe hits)
--   source        'tracepoint', 'probe' or 'none' (stock events only)
--   asked         the analysis' choice: 'auto' (patched events first), 'tracepoint' or 'probe'
CREATE OR REPLACE TABLE host_milestones AS
WITH recorded AS (
    SELECT r.host,
           EXISTS (SELECT 1 FROM host_event_types t WHERE t.host = r.host AND t.system IN ('nvme_tcp', 'nvmet_tcp')) AS tracepoints,
           coalesce(TRY_CAST(r.host_json->>'$.probes.active' AS BOOLEAN), false)
           OR EXISTS (SELECT 1 FROM host_event_types t WHERE t.host = r.host AND t.system IN ('ntscope_nvme_tcp', 'ntscope_nvmet_tcp'))
           AS probes
    FROM run_hosts r
), asked AS (
    SELECT coalesce(getvariable('ntscope_milestones'), 'auto') AS asked
)
SELECT host, tracepoints, probes,
       CASE WHEN a.asked = 'probe' THEN CASE WHEN probes THEN 'probe' ELSE 'none' END
            WHEN a.asked = 'tracepoint' THEN CASE WHEN tracepoints THEN 'tracepoint' ELSE 'none' END
            WHEN tracepoints THEN 'tracepoint' WHEN probes THEN 'probe' ELSE 'none' END AS source,
       a.asked
FROM recorded CROSS JOIN asked a;

-- host_milestone_events: one row per (host, patched event) the host's milestone source can
-- give, whether or not a command made it fire (a run of reads never builds an R2T): from the
-- patched systems' event types in its trace (metadata.json, else the events), or the probes
-- host.json says the capture placed (their milestones; else the events they stand for). A table.
--   host, event   e.g. 'nvmet_tcp_setup_r2t_pdu'
--   source        host_milestones.source ('tracepoint' or 'probe')
CREATE OR REPLACE TABLE host_milestone_events AS
WITH tracepoint_types AS (
    SELECT host, event FROM host_event_types WHERE system IN ('nvme_tcp', 'nvmet_tcp')
), placed AS (
    SELECT host, unnest(coalesce(from_json(p->'milestones', '["VARCHAR"]'), [])) AS event
    FROM (SELECT host, unnest(from_json(host_json->'probes'->'placed', '["JSON"]')) AS p FROM run_hosts)
    UNION
    SELECT host, stands_for FROM probe_hits WHERE stands_for IS NOT NULL
), probe_types AS (
    -- the capture names one milestone for execution, read or write
    SELECT host, unnest(CASE WHEN event = 'nvmet_tcp_exec_req'
                             THEN ['nvmet_tcp_exec_read_req', 'nvmet_tcp_exec_write_req'] ELSE [event] END) AS event
    FROM placed
)
SELECT m.host, t.event, m.source FROM host_milestones m JOIN tracepoint_types t USING (host) WHERE m.source = 'tracepoint'
UNION
SELECT m.host, t.event, m.source FROM host_milestones m JOIN probe_types t USING (host) WHERE m.source = 'probe';

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
--   evidence     'stock', 'tracepoint' (a patched event) or 'probe' (system nvme_tcp / nvmet_tcp
--                and the event the hit of a capture probe stands for: probe_hits). A host's
--                NVMe/TCP events come from one of the two (host_milestones.source); a probe
--                that fired again for the same command before another of its probes did (a
--                socket send retried at offset 0) is its first hit only
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
       NULL::BIGINT AS queue_idx, 'stock' AS evidence
FROM nv JOIN hosts h USING (host)
UNION ALL
SELECT b.host, h.role, 'block', event, ts, cpu, pid, comm, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, dev, sector, nr_sector, bytes, rwbs, NULL,
       NULL, NULL, NULL, NULL, 'stock'
FROM raw_block b JOIN hosts h USING (host)
UNION ALL
SELECT t.host, h.role, 'nvme_tcp', event, ts, cpu, pid, comm, ctrl_instance, cntlid, qid, cid, opcode, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       data_len, req_list_len, send_list_len, NULL, 'tracepoint'
FROM raw_nvme_tcp t JOIN hosts h USING (host)
WHERE t.host IN (SELECT host FROM host_milestones WHERE source = 'tracepoint')
UNION ALL
SELECT t.host, h.role, 'nvmet_tcp', event, ts, cpu, pid, comm, cntlid, cntlid, qid, cid, opcode, NULL,
       NULL, status, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       data_len, resp_list_len, send_list_len, queue_idx, 'tracepoint'
FROM raw_nvmet_tcp t JOIN hosts h USING (host)
WHERE t.host IN (SELECT host FROM host_milestones WHERE source = 'tracepoint')
UNION ALL
SELECT host, role, CASE WHEN system = 'ntscope_nvme_tcp' THEN 'nvme_tcp' ELSE 'nvmet_tcp' END, stands_for,
       ts, cpu, pid, comm, ctrl_id, cntlid, qid, cid, opcode, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, 'probe'
FROM (SELECT *, lag(stands_for) OVER (PARTITION BY host, system, ctrl_id, qid, cid ORDER BY ts) AS prev
      FROM probe_hits
      WHERE stands_for IS NOT NULL AND host IN (SELECT host FROM host_milestones WHERE source = 'probe'))
WHERE prev IS DISTINCT FROM stands_for;
