-- requires: core/stage_definitions, core/join, core/stages, core/cpu_wait, report/io_selected, report/reports, recovery/paths, recovery/outages, timeline/stage_set
-- loaded: with every run

-- The Perfetto timeline (report/timeline.perfetto-trace, reports/timeline/perfetto_trace.py): every
-- selected io as slices on the io lanes of its host's transport queue (the encoder puts each io
-- on the first lane of its queue that is free), stages nested, flows between the initiator and
-- the target part, counters per queue and device, per CPU the runs of NVMe/TCP's io_work
-- and of the NET_RX softirq (sql/core/cpu_wait.sql), and per initiator path (native multipath,
-- or a path with an outage) its commands in flight, its MB/s and its events: ANA change
-- notices, switches, controller outages (sql/recovery/), and per tenant of a host with several
-- its commands in flight and MB/s. All times are ns on the INITIATOR clock
-- (target times minus io.offset_ns, as in io_milestones).
-- Views and table macros only: the writer reads timeline_tracks, timeline_names and
-- timeline_slots once, and per part of the I/Os (a long run is sorted in parts of a bounded
-- number of I/Os, so that no statement holds all of it) stores timeline_io_order_part in a table
-- of its own that timeline_io_rows_of and timeline_spans_of read, and reads
-- timeline_counters_part. The encoder (analyzer/src/timeline.rs) lays each io's slices out from
-- its row and spans and merges them with the counters in time order.

-- timeline_layout: one row per slice kind of an io: the two roots and each stage of the
-- timeline's set (stages nested more than 3 deep are not drawn).
--   stage        'end_to_end' (root of the initiator part: the io, end to end),
--                'target_side' (root of the target part: the io's first to last target
--                point), or a stage_definitions.stage
--   part         'initiator' or 'target': whose queue track holds the slice (target-side
--                stages on the target; initiator and clock-free 'both' stages on the initiator)
--   parent_slice the slice it nests in: its parent stage on the same part, else the root
--   depth        0 roots, 1 top-level stages, 2.. their children
--   sib          1.. rank among the slices sharing parent_slice (by seq)
--   from_milestone, to_milestone   the milestones the slice spans (a clock-free stage is drawn over its
--                whole from..to span; its duration is in the slice's stage_dur_ns arg)
--   begin_pos, end_pos   order of the slice's begin and end among events of one track at
--                one timestamp: depth-first (a parent begins before and ends after its children)
--   flow         'out': the initiator slice whose end the target part starts from (a 'both'
--                stage from an i: to a t: milestone); 'back': the one the target part returns
--                to (from t: to i:); else NULL
CREATE OR REPLACE VIEW timeline_layout AS
WITH RECURSIVE d AS (
    SELECT d.*, CASE WHEN d.side = 'target' THEN 'target' ELSE 'initiator' END AS part
    FROM stage_definitions d
    WHERE d.stage_set = (SELECT stage_set FROM timeline_stage_set) AND d.stage <> 'end_to_end'
), e AS (
    SELECT d.*, CASE WHEN p.part = d.part THEN d.parent END AS eff_parent
    FROM d LEFT JOIN d p ON p.stage = d.parent
), r AS (
    SELECT *, dense_rank() OVER (PARTITION BY part, eff_parent ORDER BY seq) AS sib FROM e
), tree AS (
    SELECT stage, [sib] AS path FROM r WHERE eff_parent IS NULL
    UNION ALL
    SELECT r.stage, tree.path || [r.sib] FROM r JOIN tree ON r.eff_parent = tree.stage
    WHERE len(tree.path) < 3
), stages AS (
    SELECT r.stage, r.part,
           coalesce(r.eff_parent, CASE r.part WHEN 'initiator' THEN 'end_to_end' ELSE 'target_side' END) AS parent_slice,
           len(t.path) AS depth, r.sib, r.seq, r.from_milestone, r.to_milestone,
           coalesce(t.path[1], 0) * 262144 + coalesce(t.path[2], 0) * 4096 + coalesce(t.path[3], 0) * 64 AS begin_pos,
           CASE WHEN r.side = 'both' AND r.from_milestone LIKE 'i:%' AND r.to_milestone LIKE 't:%' THEN 'out'
                WHEN r.side = 'both' AND r.from_milestone LIKE 't:%' AND r.to_milestone LIKE 'i:%' THEN 'back' END AS flow_kind
    FROM r JOIN tree t USING (stage)
)
SELECT stage, part, NULL AS parent_slice, 0 AS depth, 1 AS sib, -1 AS seq, NULL AS from_milestone, NULL AS to_milestone,
       0 AS begin_pos, 63 * 262144 AS end_pos, NULL AS flow
FROM (VALUES ('end_to_end', 'initiator'), ('target_side', 'target')) v(stage, part)
UNION ALL
SELECT stage, part, parent_slice, depth, sib, seq, from_milestone, to_milestone, begin_pos,
       begin_pos + 63 * CASE depth WHEN 1 THEN 4096 WHEN 2 THEN 64 ELSE 1 END AS end_pos,
       CASE WHEN flow_kind IS NOT NULL
             AND row_number() OVER (PARTITION BY flow_kind ORDER BY seq) = 1 THEN flow_kind END AS flow
FROM stages;

-- timeline_host_shift: one row per host with I/Os or CPU runs to draw: what moves its own
-- trace times onto the run's reference clock (the initiators' clock, initiator_clock).
--   host
--   shift_ns   add to the host's times (ns): an initiator's initiator_clock.shift_ns (0 for the
--              reference, and for one not placed); a target's -(the median io.offset_ns of its
--              matched selected io: the offsets applied to its io, whose drift over a run is
--              within the clock uncertainty)
CREATE OR REPLACE VIEW timeline_host_shift AS
SELECT host, coalesce(shift_ns, 0) AS shift_ns FROM initiator_clock
UNION ALL
SELECT target_host, -quantile_disc(offset_ns, 0.5) FROM io_selected
WHERE match_state = 'matched' AND target_host IS NOT NULL GROUP BY target_host;

-- timeline_cpu_key(cpu, kind): the key of a CPU track in timeline_tracks ('cpu000003/io_work':
-- sorts by CPU number).
CREATE OR REPLACE MACRO timeline_cpu_key(cpu, kind) AS 'cpu' || lpad(cpu::VARCHAR, 6, '0') || '/' || kind;

-- timeline_cpu_runs: one row per run of an io_work (io_work_runs) or of the NET_RX softirq
-- (net_rx_runs) that ended, overlapping the selected io's window (report_window): what ran on
-- the host's CPUs while the io waited.
--   host, cpu
--   kind        'io_work' or 'net_rx': its track (one per host, CPU and kind)
--   name        the slice's name: the io_work's queue (io_work_names.queue_key) or 'NET_RX softirq'
--   s, e        start and end (ns, reference clock: timeline_host_shift applied); e is cut at
--               the next run's start on the track (runs of one track never overlap; a work
--               that slept can let another kworker run on its CPU meanwhile)
--   wait_ns     how long it waited for the CPU (io_work_runs.wait_ns, net_rx_runs.wait_ns)
CREATE OR REPLACE VIEW timeline_cpu_runs AS
WITH r AS (
    SELECT w.host, w.cpu, 'io_work' AS kind, n.queue_key AS name, w.start_ts AS s, w.end_ts AS e, w.wait_ns
    FROM io_work_runs w JOIN io_work_names n USING (host, work)
    UNION ALL
    SELECT host, cpu, 'net_rx', 'NET_RX softirq', start_ts, end_ts, wait_ns FROM net_rx_runs
), placed AS (
    SELECT r.host, r.cpu, r.kind, r.name, r.s + h.shift_ns AS s, r.e + h.shift_ns AS e, r.wait_ns
    FROM r JOIN timeline_host_shift h USING (host), report_window w
    WHERE r.e IS NOT NULL AND r.e >= r.s AND r.e + h.shift_ns >= w.start_ts AND r.s + h.shift_ns <= w.end_ts
    -- two runs starting together on one track: the longer one
    QUALIFY row_number() OVER (PARTITION BY r.host, r.cpu, r.kind, r.s ORDER BY r.e DESC, r.name) = 1
)
SELECT host, cpu, kind, name, s, least(e, lead(s) OVER (PARTITION BY host, cpu, kind ORDER BY s)) AS e, wait_ns
FROM placed;

-- timeline_path_marks: one row per event of an initiator path drawn on its 'events' track, in
-- the selected io's window (report_window; ns, reference clock as io's times):
--   host, path     the path (io.path, path_summary.path)
--   kind           'instant' (a moment) or 'slice' (a span: e its end)
--   s, e           when (e NULL for an instant; a slice's e is cut at the next slice's start on
--                  its track, so that slices of one track never overlap)
--   name           what the UI shows: 'ANA change' (': <state>' when the state after it is
--                  known), 'path left', 'path joined' (path_events); 'outage (reset)' or
--                  'outage (error recovery)' from the controller's last answer to its first
--                  answer after (the trace's end when none came), 'failure detected' and
--                  'reconnected' inside it (controller_outages)
--   detail         the event's sentence (path_events.detail; the outage's figures)
-- An outage whose controller is not known (no command was in flight) has no path: not drawn.
CREATE OR REPLACE VIEW timeline_path_marks AS
WITH outages AS (
    SELECT o.*, coalesce(cp.path, o.host || '/nvme' || o.ctrl_id) AS path,
           CASE o.kind WHEN 'reset' THEN 'reset' ELSE 'error recovery' END AS what
    FROM controller_outages o LEFT JOIN controller_paths cp ON cp.host = o.host AND cp.ctrl_id = o.ctrl_id
    WHERE o.ctrl_id IS NOT NULL
), m AS (
    SELECT host, path, 'instant' AS kind, ts AS s, NULL::BIGINT AS e,
           CASE event WHEN 'ana_change' THEN 'ANA change' || coalesce(': ' || state_after, '')
                      WHEN 'path_left' THEN 'path left' ELSE 'path joined' END AS name, detail
    FROM path_events
    UNION ALL
    SELECT host, path, 'slice', coalesce(last_answer_ts, detected_ts),
           coalesce(first_answer_ts, (SELECT end_ts FROM report_window)),
           'outage (' || what || ')',
           printf('no answer for %s; %d commands cancelled, %d reconnect attempts, %d I/Os held for %.3f s in all',
                  CASE WHEN outage_ns IS NULL THEN 'the rest of the trace' ELSE printf('%.3f s', outage_ns / 1e9) END,
                  cancelled, reconnect_attempts, ios_held, held_ns / 1e9)
    FROM outages
    UNION ALL
    SELECT host, path, 'instant', detected_ts, NULL, 'failure detected',
           printf('%s began; its teardown ran %.3f ms', what, teardown_ns / 1e6)
    FROM outages
    UNION ALL
    SELECT host, path, 'instant', recovered_ts, NULL, 'reconnected',
           printf('the last of %d reconnect attempts ended', reconnect_attempts)
    FROM outages WHERE recovered_ts IS NOT NULL
)
SELECT m.host, m.path, m.kind, m.s,
       CASE WHEN m.kind = 'slice'
            THEN least(m.e, lead(m.s) OVER (PARTITION BY m.host, m.path, m.kind ORDER BY m.s)) END AS e,
       m.name, m.detail
FROM m, report_window w
WHERE m.s IS NOT NULL AND m.s <= w.end_ts AND coalesce(m.e, m.s) >= w.start_ts;

-- timeline_paths: one row per initiator path that gets tracks (a group named after the path with
-- its events, in-flight and MB/s tracks): each path with selected I/O of a namespace the host
-- reached over more than one path (path_summary.paths), and a path with marks
-- (timeline_path_marks). A path per namespace with nothing to mark has none: its queues'
-- tracks already show its I/O.
--   host, path
CREATE OR REPLACE VIEW timeline_paths AS
SELECT DISTINCT p.host, p.path
FROM path_summary p JOIN (SELECT DISTINCT initiator_host AS host, path FROM io_selected) s USING (host, path)
WHERE p.paths > 1
UNION
SELECT DISTINCT host, path FROM timeline_path_marks;

-- timeline_tenants: one row per tenant of an initiator host that gets tracks (a group named
-- 'tenant <name>' with its in-flight and MB/s tracks): each tenant with selected I/O on a host
-- whose selected I/O belongs to more than one (io.tenant: the tenants file's names, else the
-- top-level cgroup below the root; I/O of no known cgroup belongs to none). One tenant or none:
-- no tracks, the queues' tracks show the same I/O.
--   host, tenant
CREATE OR REPLACE VIEW timeline_tenants AS
SELECT host, tenant
FROM (SELECT DISTINCT initiator_host AS host, tenant FROM io_selected WHERE tenant IS NOT NULL)
QUALIFY count(*) OVER (PARTITION BY host) > 1;

-- timeline_tracks: one row per fixed track (the io lanes are made by the encoder).
--   uuid           1.. (Perfetto TrackDescriptor.uuid); parent_uuid NULL for a host
--   kind           'host' (a process: one per host directory), 'queue' (a transport queue as
--                  seen on that host), 'device' (a block device), 'path' (an initiator path:
--                  timeline_paths), 'path_events' (its events: timeline_path_marks), 'tenant'
--                  (a tenant's I/O on that host: timeline_tenants), 'counter',
--                  'cpu' (the runs of one kind on one CPU of the host: timeline_cpu_runs)
--   host           host directory name;  pid  the process id shown for a host (1..)
--   resource_kind  'queue', 'device', 'path', 'tenant' or 'cpu' for queues, devices, paths,
--                  tenants, CPUs and the tracks under them
--   key            the host name, queue_key, device_key, io.path, io.tenant or 'cpu<N>/<kind>'
--                  (reports/README.md "Vocabulary")
--   counter        'in_flight' (commands the queue, path or tenant / requests the device had
--                  outstanding) or 'mb_s' (10^6 bytes completed per second), counters only
--   name           what the UI shows: host name; on an initiator the queue_key, on a target its
--                  own name of the queue ('<target host>/cntlid<cntlid>/q<qid>', as io_work_queues
--                  names it); device_key; the path; 'tenant <name>'; 'events'; 'cpu <N> io_work' / 'cpu <N>
--                  NET_RX'; the counter id
--   unit           counters: 'commands', 'requests' or 'MB/s'
--   sibling_rank   order under the parent (queues, devices, paths and tenants, then CPUs by number; io
--                  lanes or a path's events, then counters)
CREATE OR REPLACE VIEW timeline_tracks AS
WITH s AS (
    SELECT initiator_host, target_host, match_state, queue_key, device_key, target_device_key, cntlid, qid
    FROM io_selected
), r AS (
    SELECT DISTINCT initiator_host AS host, 0 AS hr, 'queue' AS resource_kind, queue_key AS key, queue_key AS name,
           0 AS rank FROM s
    UNION SELECT DISTINCT initiator_host, 0, 'device', device_key, device_key, 0 FROM s
    UNION SELECT target_host, 1, 'queue', queue_key,
                 target_host || '/cntlid' || coalesce(any_value(cntlid)::VARCHAR, '?') || '/q' || any_value(qid), 0
          FROM s WHERE match_state = 'matched' GROUP BY target_host, queue_key
    UNION SELECT DISTINCT target_host, 1, 'device', target_device_key, target_device_key, 0 FROM s
          WHERE match_state = 'matched' AND target_device_key IS NOT NULL
    UNION SELECT p.host, 0, 'path', p.path, p.path, 0 FROM timeline_paths p
          WHERE p.host IN (SELECT initiator_host FROM s)
    UNION SELECT t.host, 0, 'tenant', t.tenant, 'tenant ' || t.tenant, 0 FROM timeline_tenants t
), h AS (
    SELECT host, min(hr) AS hr FROM r GROUP BY host
), cpus AS (
    -- every (host, CPU, kind) with runs (not only in the window: a cheap aggregate, read by
    -- every statement that reads the tracks)
    SELECT DISTINCT host, cpu, 'io_work' AS kind FROM io_work_runs
    UNION SELECT DISTINCT host, cpu, 'net_rx' FROM net_rx_runs
), c AS (
    SELECT r.*, c.counter FROM r, (VALUES ('in_flight'), ('mb_s')) c(counter)
    WHERE NOT (r.resource_kind = 'queue' AND r.hr = 1 AND c.counter = 'mb_s')
), t AS (
    SELECT host, hr, 'host' AS kind, NULL AS resource_kind, host AS key, host AS name, NULL AS counter, 0 AS rank FROM h
    UNION ALL SELECT host, hr, resource_kind, resource_kind, key, name, NULL, rank FROM r
    UNION ALL SELECT host, hr, 'counter', resource_kind, key, counter, counter, rank FROM c
    UNION ALL SELECT host, hr, 'path_events', resource_kind, key, 'events', NULL, rank FROM r WHERE resource_kind = 'path'
    UNION ALL SELECT host, hr, 'cpu', 'cpu', timeline_cpu_key(cpu, kind),
                     'cpu ' || cpu || CASE kind WHEN 'io_work' THEN ' io_work' ELSE ' NET_RX' END, NULL,
                     2 * cpu + (kind = 'net_rx')::INT
              FROM cpus JOIN h USING (host)
), n AS (
    SELECT *, row_number() OVER (ORDER BY hr, host, kind <> 'host', resource_kind DESC, key,
                                          kind = 'counter', counter, kind) AS uuid
    FROM t
)
SELECT n.uuid,
       CASE n.kind WHEN 'host' THEN NULL
                   WHEN 'counter' THEN (SELECT p.uuid FROM n p WHERE p.kind = n.resource_kind AND p.host = n.host AND p.key = n.key)
                   WHEN 'path_events' THEN (SELECT p.uuid FROM n p WHERE p.kind = 'path' AND p.host = n.host AND p.key = n.key)
                   ELSE (SELECT p.uuid FROM n p WHERE p.kind = 'host' AND p.host = n.host) END AS parent_uuid,
       n.kind, n.host,
       CASE WHEN n.kind = 'host' THEN dense_rank() OVER (ORDER BY n.hr, n.host) END AS pid,
       n.resource_kind, n.key, n.counter, n.name,
       CASE WHEN n.counter = 'mb_s' THEN 'MB/s' WHEN n.counter IS NULL THEN NULL
            WHEN n.resource_kind IN ('queue', 'path', 'tenant') THEN 'commands' ELSE 'requests' END AS unit,
       CASE WHEN n.kind = 'queue' THEN 1 WHEN n.kind = 'device' THEN 2 WHEN n.kind IN ('path', 'tenant') THEN 3
            WHEN n.kind = 'cpu' THEN 4 + n.rank WHEN n.kind = 'path_events' THEN 1
            WHEN n.counter = 'in_flight' THEN 2 WHEN n.counter = 'mb_s' THEN 3 ELSE 0 END AS sibling_rank
FROM n;

-- timeline_ios: one row per selected io the timeline draws (it has its initiator queue's track),
-- with what its slices need. An io's number n (timeline_io_order) is its rank by (order_ts, io_id).
--   io_id, io_type, size_bytes, cid, match_state   the io
--   order_ts       nvme_setup_cmd time (ns, initiator clock); 2^63 - 1 when unknown (last)
--   root_s, root_e the initiator root's span: first and last initiator point (ns)
--   queue_track, target_queue_track   timeline_tracks.uuid of its queue on each host (target:
--                  NULL unless matched)
CREATE OR REPLACE VIEW timeline_ios AS
WITH tracks AS MATERIALIZED (
    SELECT uuid, kind, host, key FROM timeline_tracks WHERE kind = 'queue'
)
SELECT s.io_id, s.io_n, s.io_type, s.size_bytes, s.cid, s.match_state,
       coalesce(s.i_setup_ts, 9223372036854775807) AS order_ts,
       coalesce(s.i_bio_queue_ts, s.i_getrq_ts, s.i_setup_ts, s.i_complete_rq_ts) AS root_s,
       coalesce(s.i_rq_complete_ts, s.i_complete_rq_ts) AS root_e,
       q.uuid AS queue_track, tq.uuid AS target_queue_track
FROM io_selected s
JOIN tracks q ON q.host = s.initiator_host AND q.key = s.queue_key
LEFT JOIN tracks tq ON s.match_state = 'matched' AND tq.host = s.target_host AND tq.key = s.queue_key;

-- timeline_counters: one row per counter value (the value holds until the counter's next row).
--   uuid     timeline_tracks.uuid of the counter track
--   ts       ns, initiator clock
--   int_value     in_flight tracks: commands on the queue, path or tenant (initiator: nvme_setup_cmd ..
--                 nvme_complete_rq; target: nvmet_req_init .. nvmet_req_complete) or requests
--                 on the device (block_rq_issue .. block_rq_complete) from ts on
--   double_value  mb_s tracks: 10^6 bytes per second completed in the 10 ms bin starting at
--                 ts (bins from report_window.start_ts; a last 0 after the last bin)
-- timeline_counters_part(lo_ts, hi_ts): its rows with lo_ts <= ts < hi_ts (hi_ts NULL: no upper
-- bound). The writer reads the counters in the time ranges of its slice parts: a statement
-- groups and sorts one range's changes, and each in-flight counter starts from its value at
-- lo_ts (the intervals begun before it minus those ended before it: one small aggregate).
CREATE OR REPLACE MACRO timeline_counters_part(lo_ts, hi_ts) AS TABLE
WITH tracks AS MATERIALIZED (
    SELECT * FROM timeline_tracks WHERE kind = 'counter'
), resource_iv AS NOT MATERIALIZED (
    -- each interval of the run on its resource: read by the two uses below, each taking what
    -- it needs of the io rows
    SELECT initiator_host AS host, 'queue' AS resource_kind, queue_key AS key,
           i_setup_ts AS s, i_complete_rq_ts AS e, size_bytes FROM io_selected
    UNION ALL
    SELECT initiator_host, 'device', device_key, i_rq_issue_ts, i_rq_complete_ts, size_bytes FROM io_selected
    UNION ALL
    -- only the paths with tracks (timeline_paths: none on most runs, then nothing is scanned)
    SELECT initiator_host, 'path', path, i_setup_ts, i_complete_rq_ts, size_bytes FROM io_selected
    WHERE EXISTS (SELECT 1 FROM tracks WHERE resource_kind = 'path')
    UNION ALL
    -- only when tenants have tracks (timeline_tenants: none on a run of one tenant or none)
    SELECT initiator_host, 'tenant', tenant, i_setup_ts, i_complete_rq_ts, size_bytes FROM io_selected
    WHERE EXISTS (SELECT 1 FROM tracks WHERE resource_kind = 'tenant')
    UNION ALL
    SELECT target_host, 'queue', queue_key, t_init_ts - offset_ns, t_complete_ts - offset_ns, size_bytes
    FROM io_selected WHERE match_state = 'matched'
    UNION ALL
    SELECT target_host, 'device', target_device_key, t_dev_issue_ts - offset_ns, t_dev_complete_ts - offset_ns,
           size_bytes
    FROM io_selected WHERE match_state = 'matched' AND target_device_key IS NOT NULL
), iv AS (
    -- the intervals that touch the part (open at lo_ts, or ending before the end of its last
    -- bin), with their counter tracks' uuids: the steps, bins and windows below group and sort
    -- on them instead of (host, resource_kind, key) strings (773 k I/Os: 13.0 -> 9.5 CPU-s for
    -- the counters, same rows). Only the part's: every interval of a 3 M-I/O run is 12 M rows,
    -- and joining them to their tracks in each part's query made the parts grow with the run.
    SELECT f.uuid AS in_flight_uuid, m.uuid AS mb_s_uuid, iv.s, iv.e, iv.size_bytes
    FROM resource_iv iv
    JOIN tracks f ON f.counter = 'in_flight' AND f.host = iv.host
                 AND f.resource_kind = iv.resource_kind AND f.key = iv.key
    LEFT JOIN tracks m ON m.counter = 'mb_s' AND m.host = iv.host
                      AND m.resource_kind = iv.resource_kind AND m.key = iv.key
    WHERE iv.s IS NOT NULL AND iv.e IS NOT NULL AND iv.e >= iv.s
      AND iv.e >= lo_ts AND (hi_ts IS NULL OR iv.s < hi_ts + 10000000)
), at_start AS (
    -- each in-flight track's value at lo_ts (v) and at hi_ts (v_end: 0 at the end of the run),
    -- and the sum of v_end over the tracks before it (by uuid): see the running sum below
    SELECT uuid, v, coalesce(sum(v_end) OVER (ORDER BY uuid ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)
           AS v_before
    FROM (SELECT in_flight_uuid AS uuid,
                 (count(*) FILTER (WHERE s < lo_ts) - count(*) FILTER (WHERE e < lo_ts))::BIGINT AS v,
                 (count(*) FILTER (WHERE hi_ts IS NULL OR s < hi_ts)
                  - count(*) FILTER (WHERE hi_ts IS NULL OR e < hi_ts))::BIGINT AS v_end
          FROM iv GROUP BY 1)
), steps AS (
    -- +1 at each start, -1 at each end (several at one ts: the running sum below keeps the last)
    SELECT in_flight_uuid AS uuid, s AS ts, 1 AS d FROM iv WHERE s >= lo_ts AND (hi_ts IS NULL OR s < hi_ts)
    UNION ALL
    SELECT in_flight_uuid, e, -1 FROM iv WHERE e >= lo_ts AND (hi_ts IS NULL OR e < hi_ts)
    UNION ALL
    -- the track's value at lo_ts, as a step there that the output leaves out (below)
    SELECT uuid, NULL, v FROM at_start
), bin_range AS (
    -- each mb_s track's first and last bin over the whole run: its intervals' ends grouped by
    -- resource first (a few groups), then joined to the tracks
    SELECT m.uuid, (r.min_e - w.start_ts) // 10000000 AS lo, (r.max_e - w.start_ts) // 10000000 AS hi
    FROM (SELECT host, resource_kind, key, min(e) AS min_e, max(e) AS max_e FROM resource_iv
          WHERE s IS NOT NULL AND e IS NOT NULL AND e >= s GROUP BY ALL) r
    JOIN tracks f ON f.counter = 'in_flight' AND f.host = r.host AND f.resource_kind = r.resource_kind AND f.key = r.key
    JOIN tracks m ON m.counter = 'mb_s' AND m.host = r.host AND m.resource_kind = r.resource_kind AND m.key = r.key
    CROSS JOIN report_window w
), part_bins AS (
    -- the part's bins of each track: those starting in [lo_ts, hi_ts), from the track's first
    -- bin to the one after its last (a last 0)
    SELECT uuid, bin FROM (SELECT uuid, unnest(range(lo, hi + 2)) AS bin FROM bin_range), report_window w
    WHERE w.start_ts + bin * 10000000 >= lo_ts AND (hi_ts IS NULL OR w.start_ts + bin * 10000000 < hi_ts)
), bins AS (
    SELECT mb_s_uuid AS uuid, (e - w.start_ts) // 10000000 AS bin, sum(size_bytes) AS bytes
    FROM iv, report_window w
    WHERE mb_s_uuid IS NOT NULL AND w.start_ts + (e - w.start_ts) // 10000000 * 10000000 >= lo_ts
      AND (hi_ts IS NULL OR w.start_ts + (e - w.start_ts) // 10000000 * 10000000 < hi_ts)
    GROUP BY ALL
)
-- a running sum per track, computed as one running sum over the tracks in turn: each track's
-- rows, its value at lo_ts first, add up to its value at hi_ts (v_end), so subtracting the
-- v_end of the tracks before it (v_before) leaves the track's own. A window partitioned by
-- track sorts a few huge partitions: 22.7 s against 12 s for 6.6 M steps (773 k I/Os), the
-- same rows. The steps at one (track, ts) are summed by keeping the last row of each such run
-- (lead() in the same window): grouping them first was a hash aggregate of as many groups as
-- rows, 1.6 -> 1.0 s for the same 6.6 M steps.
SELECT uuid, ts, int_value, NULL::DOUBLE AS double_value FROM (
    SELECT s.uuid, s.ts, ((sum(s.d) OVER w) - a.v_before)::BIGINT AS int_value,
           lead(s.uuid) OVER w AS next_uuid, lead(s.ts) OVER w AS next_ts
    FROM steps s JOIN at_start a USING (uuid)
    WINDOW w AS (ORDER BY s.uuid, s.ts NULLS FIRST ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))
WHERE ts IS NOT NULL AND (next_uuid IS DISTINCT FROM uuid OR next_ts IS DISTINCT FROM ts)
UNION ALL
SELECT e.uuid, w.start_ts + e.bin * 10000000, NULL, coalesce(b.bytes, 0) * 1e3 / 10000000
FROM part_bins e LEFT JOIN bins b USING (uuid, bin), report_window w;

-- timeline_counters: timeline_counters_part over the whole run (every counter sample).
CREATE OR REPLACE VIEW timeline_counters AS
FROM timeline_counters_part(-9223372036854775808, NULL);

-- timeline_names: one row per interned string of the trace.
--   kind    'event' (slice names: the stages of timeline_layout, then the names of CPU runs and
--           path marks: the io_work queues, 'NET_RX softirq', timeline_path_marks.name) or
--           'category' (io types)
--   name
--   iid     1.. within its kind (Perfetto's interned ids)
CREATE OR REPLACE VIEW timeline_names AS
WITH stages AS (
    SELECT stage AS name, row_number() OVER (ORDER BY depth, seq, stage) AS iid FROM timeline_layout
), cpu AS (
    SELECT name FROM (SELECT queue_key AS name FROM io_work_names
                      UNION SELECT DISTINCT 'NET_RX softirq' FROM net_rx_runs
                      UNION SELECT name FROM timeline_path_marks)
    WHERE name NOT IN (SELECT name FROM stages)
)
SELECT 'event' AS kind, name, iid FROM stages
UNION ALL
SELECT 'event', name, (SELECT count(*) FROM stages) + row_number() OVER (ORDER BY name) FROM cpu
UNION ALL
SELECT 'category', io_type, row_number() OVER (ORDER BY io_type)
FROM (SELECT DISTINCT coalesce(io_type, 'unknown') AS io_type FROM io_selected);

-- timeline_slots: one row per slice kind an io has on the timeline (timeline_layout's rows,
-- numbered): what the encoder lays each io's slices out by (analyzer/src/timeline_slices.rs:
-- clamped so that slices nest on their track, a child within its parent, siblings one after
-- the other; only offset-based stages can need it, by up to the clock uncertainty).
--   slot         1.. (by part, stage)
--   part_no      0 initiator, 1 target: which of the io's two tracks holds the slice
--   parent_slot  the slot of parent_slice on the same part (NULL for the roots)
--   depth, sib, begin_pos, end_pos   as in timeline_layout
--   flow         1 the slice the initiator part hands over to the target from ('out'), 2 the one
--                the target part hands back to ('back'), else 0
--   name_iid     timeline_names iid of the stage (the slice's name)
--   stage, part  as in timeline_layout
CREATE OR REPLACE VIEW timeline_slots AS
WITH lay0 AS (
    SELECT *, row_number() OVER (ORDER BY part, stage) AS slot FROM timeline_layout
)
SELECT l.slot, (l.part = 'target')::INT AS part_no, p.slot AS parent_slot, l.depth, l.sib, l.begin_pos,
       l.end_pos, CASE l.flow WHEN 'out' THEN 1 WHEN 'back' THEN 2 ELSE 0 END AS flow, n.iid AS name_iid,
       l.stage, l.part
FROM lay0 l LEFT JOIN lay0 p ON p.stage = l.parent_slice AND p.part = l.part
JOIN timeline_names n ON n.kind = 'event' AND n.name = l.stage;

-- timeline_io_order: one row per selected io the timeline draws: its number and the time the
-- encoder reads it at.
--   io_n        io.io_n
--   n           1.., its rank by (order_ts, io_id) (timeline_ios): its tracks and flows are
--               numbered by it
--   start_ts    the earliest time any packet of the io has: its initiator root's start, or its
--               first target span's when earlier (ns, initiator clock). The encoder reads the io
--               in (start_ts, n) order, so that a slice can go out once no io still unread can
--               begin before it
-- timeline_io_order_part(lo_ts, hi_ts, n_before): the rows of the io with lo_ts <= order_ts <
-- hi_ts (hi_ts NULL: no upper bound), numbered from n_before + 1, n_before being the count of
-- timeline_ios with order_ts < lo_ts: any split of the io into such ranges gives, together, the
-- rows of the whole. The writer sorts a long run a part at a time (it stores each part's rows
-- for timeline_io_rows_of and timeline_spans_of); the view is the whole.
CREATE OR REPLACE MACRO timeline_io_order_part(lo_ts, hi_ts, n_before) AS TABLE
WITH ios AS (
    SELECT io_n, n_before + row_number() OVER (ORDER BY order_ts, io_id) AS n, root_s
    FROM timeline_ios WHERE order_ts >= lo_ts AND (hi_ts IS NULL OR order_ts < hi_ts)
), target_starts AS (
    -- only the part's io: a join with them, which DuckDB also turns into a range of io_n that
    -- skips the other parts' stage rows (an aggregate over every io made each part's query
    -- grow with the run, not with the part)
    SELECT st.io_n, min(st.from_ts) AS s
    FROM io_stage_durations st
    JOIN (SELECT io_n FROM ios) USING (io_n)
    JOIN io_stage_definitions d ON d.def_no = st.def_no
     AND d.stage_set = (SELECT stage_set FROM timeline_stage_set)
    JOIN timeline_slots l ON l.stage = d.stage AND l.depth > 0 AND l.part_no = 1
    WHERE st.from_ts IS NOT NULL AND st.to_ts IS NOT NULL
    GROUP BY st.io_n
)
SELECT i.io_n, i.n, least(i.root_s, t.s) AS start_ts FROM ios i LEFT JOIN target_starts t USING (io_n);

-- timeline_io_order: timeline_io_order_part over the whole run (every I/O's place).
CREATE OR REPLACE VIEW timeline_io_order AS
FROM timeline_io_order_part(-9223372036854775808, NULL, 0);

-- timeline_io_rows: one row per selected io the timeline draws: what its slices carry beyond
-- their times. Read ORDER BY start_ts, n.
--   start_ts, n     as in timeline_io_order
--   s, e            its initiator root's span: first and last initiator point (ns, initiator
--                   clock; e may be NULL)
--   queue_track, target_queue_track   timeline_tracks uuids of its queue on each part's host
--                   (the target's NULL unless matched): the encoder draws each part of the io on
--                   a lane under it, the first lane of that queue free since before the part
--                   begins (a new lane when none is), so a queue has as many lanes as it had io
--                   in flight at once, not one track per io
--   out_flow, back_flow   flow ids: 2n-1 from the 'out' slice to the target root, 2n from the
--                   target root to the 'back' slice
--   category_iid    timeline_names iid of its io type (every slice's category)
--   io_id, size_bytes, cid, match_state   the io (arguments of its roots)
-- timeline_io_rows_of(order_rel): the rows of the io in ORDER_REL, the name of a relation with
-- timeline_io_order's columns (io_n, n, start_ts): timeline_io_order itself (the view below), or
-- a table of timeline_io_order_part(...)'s rows that the writer stores once per part, so that
-- this and timeline_spans_of share one computation of the part's order (0.25-0.3 s each at
-- 773 k I/Os).
CREATE OR REPLACE MACRO timeline_io_rows_of(order_rel) AS TABLE
SELECT o.start_ts, o.n, i.root_s AS s, i.root_e AS e,
       i.queue_track, i.target_queue_track, 2 * o.n - 1 AS out_flow, 2 * o.n AS back_flow,
       c.iid AS category_iid, i.io_id, i.size_bytes, i.cid, i.match_state
FROM query_table(order_rel) o JOIN timeline_ios i USING (io_n)
JOIN timeline_names c ON c.kind = 'category' AND c.name = coalesce(i.io_type, 'unknown');

-- timeline_io_rows: timeline_io_rows_of every I/O in timeline_io_order.
CREATE OR REPLACE VIEW timeline_io_rows AS
FROM timeline_io_rows_of('timeline_io_order');

-- timeline_spans: one row per span of a drawn stage of a selected io (the stages of
-- timeline_stage_set whose from and to milestones it has: io_stage_durations), keyed by
-- integers as the stage rows are. Read ORDER BY start_ts, n, slot: each io's spans in the order
-- of its timeline_io_rows row.
--   start_ts, n     the io (timeline_io_order)
--   slot            timeline_slots.slot of the stage
--   s, e, dur       the stage's from_ts, to_ts and own duration (io_stages.dur; NULL when
--                   unknown: laid out, not drawn). ns, initiator clock
-- timeline_spans_of(order_rel): the spans of the io in ORDER_REL, as timeline_io_rows_of.
CREATE OR REPLACE MACRO timeline_spans_of(order_rel) AS TABLE
SELECT o.start_ts, o.n, l.slot, st.from_ts AS s, st.to_ts AS e, st.dur
FROM io_stage_durations st JOIN query_table(order_rel) o USING (io_n)
JOIN io_stage_definitions d ON d.def_no = st.def_no
 AND d.stage_set = (SELECT stage_set FROM timeline_stage_set)
JOIN timeline_slots l ON l.stage = d.stage AND l.depth > 0
WHERE st.from_ts IS NOT NULL AND st.to_ts IS NOT NULL;

-- timeline_spans: timeline_spans_of every I/O in timeline_io_order.
CREATE OR REPLACE VIEW timeline_spans AS
FROM timeline_spans_of('timeline_io_order');

-- timeline_cpu_events_part(lo_ts, hi_ts): the begin and the end of each timeline_cpu_runs row
-- that starts in [lo_ts, hi_ts) (hi_ts NULL: no upper bound), as rows of the encoder's counter
-- input (analyzer/src/timeline.rs: slices on fixed tracks). Read ORDER BY ts, uuid, pos.
--   uuid          its CPU track (timeline_tracks.uuid)
--   ts            the begin (s) or the end (e) (ns, reference clock)
--   pos           order at one (ts, track): an end (0) before a begin (1), and after it the end
--                 of a run that begins there (2)
--   type          1 slice begin, 2 slice end (Perfetto's TrackEvent.Type)
--   name_iid      begin: timeline_names iid of the run's name
--   cpu_wait_ns   begin: how long the run waited for its CPU (ns; NULL when unknown)
--   int_value, double_value   NULL (counter values)
CREATE OR REPLACE MACRO timeline_cpu_events_part(lo_ts, hi_ts) AS TABLE
WITH r AS (
    SELECT t.uuid, c.s, c.e, c.wait_ns, n.iid
    FROM timeline_cpu_runs c
    JOIN timeline_tracks t ON t.kind = 'cpu' AND t.host = c.host AND t.key = timeline_cpu_key(c.cpu, c.kind)
    JOIN timeline_names n ON n.kind = 'event' AND n.name = c.name
    WHERE c.s >= lo_ts AND (hi_ts IS NULL OR c.s < hi_ts)
)
SELECT uuid, s AS ts, 1 AS pos, 1 AS type, iid AS name_iid, wait_ns AS cpu_wait_ns,
       NULL::BIGINT AS int_value, NULL::DOUBLE AS double_value FROM r
UNION ALL
SELECT uuid, e, CASE WHEN e = s THEN 2 ELSE 0 END, 2, NULL, NULL, NULL, NULL FROM r;

-- timeline_path_events_part(lo_ts, hi_ts): the timeline_path_marks rows that start in [lo_ts,
-- hi_ts) (hi_ts NULL: no upper bound), on their path's events track, as rows of the encoder's
-- counter input (as timeline_cpu_events_part). Read ORDER BY ts, uuid, pos.
--   uuid          the path's 'events' track (timeline_tracks.uuid)
--   ts            an instant's time; a slice's begin (s) or end (e) (ns, reference clock)
--   pos           order at one (ts, track): a slice's end (0), a begin (1), an instant (3)
--                 (inside a slice that begins there), the end of a slice that begins there (4)
--   type          1 slice begin, 2 slice end, 3 instant (Perfetto's TrackEvent.Type)
--   name_iid      begin, instant: timeline_names iid of the mark's name
--   detail        begin, instant: timeline_path_marks.detail (the slice's 'detail' argument)
--   cpu_wait_ns, int_value, double_value   NULL
CREATE OR REPLACE MACRO timeline_path_events_part(lo_ts, hi_ts) AS TABLE
WITH m AS (
    SELECT t.uuid, m.kind, m.s, m.e, m.detail, n.iid
    FROM timeline_path_marks m
    JOIN timeline_tracks t ON t.kind = 'path_events' AND t.host = m.host AND t.key = m.path
    JOIN timeline_names n ON n.kind = 'event' AND n.name = m.name
    WHERE m.s >= lo_ts AND (hi_ts IS NULL OR m.s < hi_ts)
)
SELECT uuid, s AS ts, CASE kind WHEN 'instant' THEN 3 ELSE 1 END AS pos, CASE kind WHEN 'instant' THEN 3 ELSE 1 END AS type,
       iid AS name_iid, detail, NULL::BIGINT AS cpu_wait_ns, NULL::BIGINT AS int_value, NULL::DOUBLE AS double_value
FROM m
UNION ALL
SELECT uuid, e, CASE WHEN e = s THEN 4 ELSE 0 END, 2, NULL, NULL, NULL, NULL, NULL FROM m WHERE kind = 'slice';
