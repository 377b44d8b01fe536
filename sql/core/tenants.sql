-- requires: core/commands, core/tenant_rules
-- input: run_hosts, raw_ntscope_block, raw_cgroup  the host folders and event files (sql/views.py)

-- Whom each I/O was for (capture key tenants=): the cgroup its block request was issued for and
-- the file it read or wrote, read by the capture's probe ntscope_block:rq_owner at
-- blk_mq_start_request (for a buffered write the writeback owner), named by host.json
-- tenants.cgroups (the cgroup v2 directories at the start and the end of the recording) and the
-- cgroup:cgroup_mkdir events between, and by host.json tenants.files (the files processes held
-- open then). A tenant is a name for a set of cgroups: the first tenants-file rule whose pattern
-- matches the cgroup's path, else the top-level cgroup below the root ('/kubepods/pod1/c2' ->
-- 'kubepods', '/' -> '(root)'). A class groups tenants that share objectives (NeSt's QoS classes).

-- request_owner_rows: one row per initiator block request the capture's probe saw. The probe
-- fires at blk_mq_start_request's entry and block_rq_issue inside it, on the same CPU: the hit
-- is the last one on that CPU and sector at or before the issue, within a second (the two are
-- microseconds apart on hardware; under the lab's emulation a vCPU stalled 33 ms between them.
-- A hit lost to the ring buffer leaves its request without an owner unless the same CPU started
-- a request at that sector within the second before).
--   host, issue_ts, sector   the block request (block_request_rows: host, issue_ts, sector)
--   cgroup_id                its cgroup (cgroup v2 id: the directory's inode number)
--   file_dev, file_ino       its file (kernel dev_t of the file system, inode number); NULL
--                            when the I/O is no file's (the raw device, metadata, a flush).
--                            A direct I/O's (its bio ends in iomap_dio_bio_end_io, host.json
--                            tenants.dio_end_io) from its kiocb, else a page-cache I/O's from
--                            its first page's mapping (an anonymous page: none); kept only when
--                            the file's device is the request's own (the probe reads both on
--                            every bio: the other is whatever memory it points at)
CREATE OR REPLACE TABLE request_owner_rows AS
WITH dio AS (
    SELECT host, TRY_CAST(('0x' || lower(regexp_replace(host_json->>'$.tenants.dio_end_io', '^0x', ''))) AS UBIGINT) AS end_io
    FROM run_hosts WHERE host_json->>'$.tenants.dio_end_io' IS NOT NULL
), hits AS (
    SELECT r.host, r.cpu, r.ts, r.sector, r.cgroup_id,
           CASE WHEN r.end_io = d.end_io THEN r.dio_dev
                WHEN r.page_mapping <> 0 AND r.page_mapping % 2 = 0 THEN r.page_dev END AS file_dev,
           CASE WHEN r.end_io = d.end_io THEN r.dio_ino
                WHEN r.page_mapping <> 0 AND r.page_mapping % 2 = 0 THEN r.page_ino END AS file_ino
    FROM raw_ntscope_block r LEFT JOIN dio d ON d.host = r.host
    WHERE r.event = 'rq_owner'
), issues AS (
    SELECT host, dev, issue_cpu AS cpu, issue_ts, sector FROM block_request_rows
    WHERE role = 'initiator' AND issue_ts IS NOT NULL
)
SELECT i.host, i.issue_ts, i.sector, h.cgroup_id,
       CASE WHEN h.file_dev = i.dev THEN h.file_dev END AS file_dev,
       CASE WHEN h.file_dev = i.dev THEN h.file_ino END AS file_ino
FROM issues i ASOF JOIN hits h ON h.host = i.host AND h.cpu = i.cpu AND h.sector = i.sector AND h.ts <= i.issue_ts
WHERE i.issue_ts - h.ts <= 1000000000;

-- request_files: one row per (host, file) an initiator block request went to, with its name.
--   host, file_dev, file_ino
--   file       its path when a process held it open at the start or the end of the recording
--              (host.json tenants.files), else '<disk>:ino <n>' (host.json block_devices names
--              the disk)
CREATE OR REPLACE TABLE request_files AS
WITH ids AS (SELECT DISTINCT host, file_dev, file_ino FROM request_owner_rows WHERE file_ino IS NOT NULL),
names AS (
    SELECT host, TRY_CAST(f->>'dev_t' AS BIGINT) AS dev, TRY_CAST(f->>'ino' AS UBIGINT) AS ino,
           min(f->>'path') AS path   -- a file open under two names (hard links): the first
    FROM (SELECT host, unnest(from_json(host_json->'$.tenants.files', '["JSON"]')) AS f
          FROM run_hosts WHERE json_type(host_json, '$.tenants.files') = 'ARRAY')
    GROUP BY ALL
), disks AS (
    SELECT host, TRY_CAST(b->>'dev_t' AS BIGINT) AS dev, b->>'name' AS disk
    FROM (SELECT host, unnest(from_json(host_json->'block_devices', '["JSON"]')) AS b
          FROM run_hosts WHERE json_type(host_json, '$.block_devices') = 'ARRAY')
)
SELECT i.host, i.file_dev, i.file_ino,
       coalesce(n.path, coalesce(d.disk, i.file_dev::VARCHAR) || ':ino ' || i.file_ino) AS file
FROM ids i
LEFT JOIN names n ON n.host = i.host AND n.dev = i.file_dev AND n.ino = i.file_ino
LEFT JOIN (SELECT host, dev, min(disk) AS disk FROM disks GROUP BY ALL) d ON d.host = i.host AND d.dev = i.file_dev;

-- cgroup_names: one row per (host, cgroup) known by name: host.json's snapshots, else a
-- cgroup_mkdir event (a cgroup made and removed while recording). Paths are below the cgroup
-- v2 root, '/' the root itself.
--   host, cgroup_id, path
--   io_max, io_weight, io_latency, io_prio_class   the cgroup's io.* files as host.json saw
--                  them (the end's when both), NULL when not seen (made while recording)
--   seen           'start', 'end', 'both' (host.json) or 'mkdir' (made while recording)
CREATE OR REPLACE TABLE cgroup_names AS
WITH snap AS (
    SELECT host, TRY_CAST(c->>'id' AS UBIGINT) AS cgroup_id, c->>'path' AS path,
           nullif(c->>'io_max', '') AS io_max, nullif(c->>'io_weight', '') AS io_weight,
           nullif(c->>'io_latency', '') AS io_latency, nullif(c->>'io_prio_class', '') AS io_prio_class,
           c->>'at' AS seen
    FROM (SELECT host, unnest(from_json(host_json->'$.tenants.cgroups', '["JSON"]')) AS c
          FROM run_hosts WHERE json_type(host_json, '$.tenants.cgroups') = 'ARRAY')
), made AS (
    -- hierarchy 0 is cgroup v2's (a v1 hierarchy numbers its own cgroups)
    SELECT host, id::UBIGINT AS cgroup_id, arg_max(path, ts) AS path FROM raw_cgroup
    WHERE event = 'cgroup_mkdir' AND root = 0 AND id IS NOT NULL GROUP BY ALL
)
SELECT * FROM snap WHERE cgroup_id IS NOT NULL
UNION ALL
SELECT m.host, m.cgroup_id, m.path, NULL, NULL, NULL, NULL, 'mkdir' FROM made m
WHERE NOT EXISTS (SELECT 1 FROM snap s WHERE s.host = m.host AND s.cgroup_id = m.cgroup_id);

-- cgroup_ids: one row per (host, cgroup) an I/O was issued for or host.json names.
--   host, cgroup_id, path (NULL: the id names no directory the capture saw)
CREATE OR REPLACE TABLE cgroup_ids AS
SELECT host, cgroup_id, any_value(path) FILTER (WHERE path IS NOT NULL) AS path
FROM (SELECT host, cgroup_id, NULL::VARCHAR AS path FROM request_owner_rows
      UNION ALL SELECT host, cgroup_id, path FROM cgroup_names)
GROUP BY ALL;

-- default_tenant(path): the top-level cgroup below the root ('/a/b' -> 'a'; '/' -> '(root)')
CREATE OR REPLACE MACRO default_tenant(path) AS
    CASE WHEN path IS NULL THEN NULL WHEN split_part(path, '/', 2) = '' THEN '(root)' ELSE split_part(path, '/', 2) END;

-- cgroup_tenants: one row per (host, cgroup) of cgroup_ids with its tenant and class.
--   host, cgroup_id
--   cgroup       its path ('?<id>' when the capture saw no directory of that id)
--   tenant       the first matching rule's tenant, else default_tenant(path) ('?<id>' unnamed)
--   class        the matching rule's class (NULL: no rule matched, or the rule has none)
-- A table (the rules are an input: a new tenants file builds it and the io rows again): io_joined
-- joins it as a plain lookup table, not the correlated rule match
CREATE OR REPLACE TABLE cgroup_tenants AS
SELECT c.host, c.cgroup_id, coalesce(c.path, '?' || c.cgroup_id) AS cgroup,
       coalesce(r.tenant, default_tenant(c.path), '?' || c.cgroup_id) AS tenant, r.class
FROM cgroup_ids c
LEFT JOIN LATERAL (SELECT tenant, class FROM tenant_rules t WHERE c.path GLOB t.pattern
                   ORDER BY t.rule_n LIMIT 1) r ON true;

-- namespace_names: one row per initiator disk whose namespace host.json names.
--   host, disk (e.g. 'nvme0n1')
--   namespace    '<subsystem NQN>/ns<nsid>': the same namespace from every initiator
CREATE OR REPLACE TABLE namespace_names AS
SELECT host, disk, nqn || '/ns' || nsid AS namespace
FROM (SELECT host, c->>'subsysnqn' AS nqn,
             unnest(from_json(c->'namespaces', '["VARCHAR"]')) AS disk,
             unnest(coalesce(from_json(c->'namespace_nsids', '["BIGINT"]'), [])) AS nsid
      FROM (SELECT host, unnest(from_json(host_json->'nvme_controllers', '["JSON"]')) AS c
            FROM run_hosts WHERE json_type(host_json, '$.nvme_controllers') = 'ARRAY'))
WHERE nsid IS NOT NULL AND nqn IS NOT NULL;
