-- requires: core/join
-- loaded: with every run

-- Paths (native multipath): each path an initiator's I/O took to a namespace, its ANA state and
-- the moments the I/O left one path for another. A path is a controller (io.path, the
-- controller_paths of sql/core/join.sql: '<host>/nvme<N>@<traddr>:<trsvcid>'); a namespace
-- is its device (io.disk, nvme<S>n<N> for all its paths). Loaded with every run: compare's side
-- facts read path_summary (sql/compare/paths.sql).

-- path_summary: one row per (initiator host, namespace device, path) with I/O, or with an ANA
-- state in host.json.
--   host, disk (the namespace's device), path, ctrl_id
--   ios, bytes         its I/Os and their bytes
--   share              of the namespace's I/Os (0..1)
--   paths              the namespace's paths on that host (rows of this table with its disk)
--   first_submit_ts, last_submit_ts   its first and last I/O's submission (ns, reference clock)
--   ana_grpid, ana_state_start, ana_state_end   the ANA group and state when recording started
--                      and ended (host.json nvme_ana; NULL without ANA)
--   ana_notices        ANA change notices the controller received (ana_notices)
CREATE OR REPLACE TABLE path_summary AS
WITH used AS (
    SELECT initiator_host AS host, disk, path, any_value(ctrl_id) AS ctrl_id, count(*) AS ios,
           sum(size_bytes)::BIGINT AS bytes, min(first_setup_ts) AS first_submit_ts, max(i_setup_ts) AS last_submit_ts
    FROM io_rows GROUP BY ALL
), listed AS (
    SELECT s.host, namespace_head(s.path_disk) AS disk, coalesce(cp.path, s.host || '/nvme' || s.ctrl_id) AS path,
           s.ctrl_id, s.ana_grpid, s.state_start, s.state_end
    FROM path_ana_states s LEFT JOIN controller_paths cp ON cp.host = s.host AND cp.ctrl_id = s.ctrl_id
)
SELECT coalesce(u.host, l.host) AS host, coalesce(u.disk, l.disk) AS disk, coalesce(u.path, l.path) AS path,
       coalesce(u.ctrl_id, l.ctrl_id) AS ctrl_id, coalesce(u.ios, 0) AS ios, coalesce(u.bytes, 0) AS bytes,
       coalesce(u.ios, 0) / sum(coalesce(u.ios, 0)) OVER (PARTITION BY coalesce(u.host, l.host), coalesce(u.disk, l.disk)) AS share,
       count(*) OVER (PARTITION BY coalesce(u.host, l.host), coalesce(u.disk, l.disk)) AS paths,
       u.first_submit_ts, u.last_submit_ts, l.ana_grpid, l.state_start AS ana_state_start, l.state_end AS ana_state_end,
       (SELECT count(*) FROM ana_notices n WHERE n.host = coalesce(u.host, l.host) AND n.ctrl_id = coalesce(u.ctrl_id, l.ctrl_id)) AS ana_notices
FROM used u FULL JOIN listed l ON l.host = u.host AND l.disk = u.disk AND l.path = u.path
ORDER BY host, disk, path;

-- path_events: one row per event of a path, in time order (ns, reference clock):
--   host, disk, path, ts
--   event   'ana_change'  the controller was told its ANA state changed (an asynchronous event
--                         notice); state_after: the state at the end of the recording when it
--                         was the path's last notice, else NULL (not known)
--           'path_left'   the namespace's I/O stopped using this path (its last I/O, while another
--                         path of the namespace carried I/O more than switch_gap after it)
--           'path_joined' the namespace's I/O started using this path (its first I/O, later than
--                         switch_gap after the namespace's first I/O on another path)
--   state_after, detail
-- switch_gap: 100 ms, far above a round-robin turn and far below a failover's effect.
CREATE OR REPLACE VIEW path_events AS
WITH head AS (
    SELECT host, disk, min(first_submit_ts) AS first_ts, max(last_submit_ts) AS last_ts, count(*) AS paths
    FROM path_summary WHERE ios > 0 GROUP BY ALL
), notices AS (
    SELECT n.host, p.disk, p.path, n.ts + coalesce(c.shift_ns, 0) AS ts,
           CASE WHEN n.ts = max(n.ts) OVER (PARTITION BY n.host, n.ctrl_id) THEN p.ana_state_end END AS state_after
    FROM ana_notices n JOIN path_summary p ON p.host = n.host AND p.ctrl_id = n.ctrl_id
    LEFT JOIN initiator_clock c ON c.host = n.host
)
SELECT host, disk, path, ts, 'ana_change' AS event, state_after,
       'ANA change notice' || coalesce(': ' || state_after || ' at the end', '') AS detail
FROM notices
UNION ALL
SELECT p.host, p.disk, p.path, p.last_submit_ts, 'path_left', NULL,
       printf('last of its %d I/Os; the namespace''s I/O went on for %.3f s on other paths', p.ios, (h.last_ts - p.last_submit_ts) / 1e9)
FROM path_summary p JOIN head h USING (host, disk)
WHERE h.paths > 1 AND h.last_ts - p.last_submit_ts > 100000000
UNION ALL
SELECT p.host, p.disk, p.path, p.first_submit_ts, 'path_joined', NULL,
       printf('first of its %d I/Os, %.3f s after the namespace''s first', p.ios, (p.first_submit_ts - h.first_ts) / 1e9)
FROM path_summary p JOIN head h USING (host, disk)
WHERE h.paths > 1 AND p.first_submit_ts - h.first_ts > 100000000
ORDER BY ts, host, path;
