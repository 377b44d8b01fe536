-- The Perfetto timeline (report/timeline.perfetto-trace, reports/report/timeline.py): every
-- selected io as slices on per-io tracks under its host and transport queue, stages nested,
-- flows between the initiator and the target part, counters per queue and device. All times
-- are ns on the INITIATOR clock (target times minus io.offset_ns, as in io_milestones).
-- Views and table macros only: the writer reads timeline_tracks and timeline_names once, and
-- timeline_slice_packets_part and timeline_counters_part once per part of the I/Os (a long run
-- is sorted in parts of a bounded number of I/Os, so that no statement holds all of it).

-- timeline_stage_set: one row: the stage set the timeline draws, primary_stage_set (the
-- report replaces this view when its --stage-set leaves the primary set out).
--   stage_set
CREATE OR REPLACE VIEW timeline_stage_set AS
SELECT stage_set FROM primary_stage_set;

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
--   from_ms, to_ms   the milestones the slice spans (a clock-free stage is drawn over its
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
           len(t.path) AS depth, r.sib, r.seq, r.from_ms, r.to_ms,
           coalesce(t.path[1], 0) * 262144 + coalesce(t.path[2], 0) * 4096 + coalesce(t.path[3], 0) * 64 AS begin_pos,
           CASE WHEN r.side = 'both' AND r.from_ms LIKE 'i:%' AND r.to_ms LIKE 't:%' THEN 'out'
                WHEN r.side = 'both' AND r.from_ms LIKE 't:%' AND r.to_ms LIKE 'i:%' THEN 'back' END AS flow_kind
    FROM r JOIN tree t USING (stage)
)
SELECT stage, part, NULL AS parent_slice, 0 AS depth, 1 AS sib, -1 AS seq, NULL AS from_ms, NULL AS to_ms,
       0 AS begin_pos, 63 * 262144 AS end_pos, NULL AS flow
FROM (VALUES ('end_to_end', 'initiator'), ('target_side', 'target')) v(stage, part)
UNION ALL
SELECT stage, part, parent_slice, depth, sib, seq, from_ms, to_ms, begin_pos,
       begin_pos + 63 * CASE depth WHEN 1 THEN 4096 WHEN 2 THEN 64 ELSE 1 END AS end_pos,
       CASE WHEN flow_kind IS NOT NULL
             AND row_number() OVER (PARTITION BY flow_kind ORDER BY seq) = 1 THEN flow_kind END AS flow
FROM stages;

-- timeline_tracks: one row per fixed track (the per-io tracks are in timeline_slices).
--   uuid           1.. (Perfetto TrackDescriptor.uuid); parent_uuid NULL for a host
--   kind           'host' (a process: one per host directory), 'queue' (a transport queue as
--                  seen on that host), 'device' (a block device), 'counter'
--   host           host directory name;  pid  the process id shown for a host (1..)
--   resource_kind  'queue' or 'device' for queues, devices and their counters
--   key            the host name, queue_key or device_key (reports/README.md "Vocabulary")
--   counter        'in_flight' (commands the queue / requests the device had outstanding) or
--                  'mb_s' (10^6 bytes completed per second), counters only
--   name           what the UI shows: host name, queue_key, device_key or the counter id
--   unit           counters: 'commands', 'requests' or 'MB/s'
--   sibling_rank   order under the parent (queues, then devices; io tracks, then counters)
CREATE OR REPLACE VIEW timeline_tracks AS
WITH s AS (
    SELECT initiator_host, target_host, match_state, queue_key, device_key, target_device_key
    FROM io_selected
), r AS (
    SELECT DISTINCT initiator_host AS host, 0 AS hr, 'queue' AS resource_kind, queue_key AS key FROM s
    UNION SELECT DISTINCT initiator_host, 0, 'device', device_key FROM s
    UNION SELECT DISTINCT target_host, 1, 'queue', queue_key FROM s WHERE match_state = 'matched'
    UNION SELECT DISTINCT target_host, 1, 'device', target_device_key FROM s
          WHERE match_state = 'matched' AND target_device_key IS NOT NULL
), h AS (
    SELECT host, min(hr) AS hr FROM r GROUP BY host
), c AS (
    SELECT r.*, c.counter FROM r, (VALUES ('in_flight'), ('mb_s')) c(counter)
    WHERE NOT (r.resource_kind = 'queue' AND r.hr = 1 AND c.counter = 'mb_s')
), t AS (
    SELECT host, hr, 'host' AS kind, NULL AS resource_kind, host AS key, NULL AS counter FROM h
    UNION ALL SELECT host, hr, resource_kind, resource_kind, key, NULL FROM r
    UNION ALL SELECT host, hr, 'counter', resource_kind, key, counter FROM c
), n AS (
    SELECT *, row_number() OVER (ORDER BY hr, host, kind <> 'host', resource_kind DESC, key,
                                          kind = 'counter', counter) AS uuid
    FROM t
)
SELECT n.uuid,
       CASE n.kind WHEN 'host' THEN NULL
                   WHEN 'counter' THEN (SELECT p.uuid FROM n p WHERE p.kind = n.resource_kind AND p.host = n.host AND p.key = n.key)
                   ELSE (SELECT p.uuid FROM n p WHERE p.kind = 'host' AND p.host = n.host) END AS parent_uuid,
       n.kind, n.host,
       CASE WHEN n.kind = 'host' THEN dense_rank() OVER (ORDER BY n.hr, n.host) END AS pid,
       n.resource_kind, n.key, n.counter,
       coalesce(n.counter, n.key) AS name,
       CASE WHEN n.counter = 'mb_s' THEN 'MB/s' WHEN n.counter IS NULL THEN NULL
            WHEN n.resource_kind = 'queue' THEN 'commands' ELSE 'requests' END AS unit,
       CASE WHEN n.kind = 'queue' THEN 1 WHEN n.kind = 'device' THEN 2
            WHEN n.counter = 'in_flight' THEN 2 WHEN n.counter = 'mb_s' THEN 3 ELSE 0 END AS sibling_rank
FROM n;

-- timeline_ios: one row per selected io the timeline draws (it has its initiator queue's track),
-- with what its slices need. An io's number n (timeline_slices) is its rank by (order_ts, io_id).
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

-- timeline_slices_part(lo_ts, hi_ts, n_before): the rows of timeline_slices for the io with
-- lo_ts <= order_ts < hi_ts (hi_ts NULL: no upper bound), numbered from n_before + 1, n_before
-- being the count of timeline_ios with order_ts < lo_ts: any split of the io into such ranges
-- gives, together, the rows of the whole. The writer sorts a long run's slices a part at a
-- time; a part's io, stages and clamping windows are all a statement holds.
CREATE OR REPLACE MACRO timeline_slices_part(lo_ts, hi_ts, n_before) AS TABLE
-- inside, an io is its number n (BIGINT) and a slice kind its slot (timeline_layout's row,
-- 1..): the grouping, windows and joins below run on integers instead of the io_id, stage
-- and part strings (io_id: 9.8 -> 7.1 s for 204 k I/Os; stage and part: 48.0 -> 41.6 CPU-s
-- for the sorted slices of 773 k I/Os); the strings are joined back at the end
WITH ios AS MATERIALIZED (
    SELECT *, n_before + row_number() OVER (ORDER BY order_ts, io_id) AS n
    FROM timeline_ios WHERE order_ts >= lo_ts AND (hi_ts IS NULL OR order_ts < hi_ts)
), lay0 AS (
    SELECT *, row_number() OVER (ORDER BY part, stage) AS slot FROM timeline_layout
), lay AS MATERIALIZED (
    -- part_no 0 initiator, 1 target; parent_slot the slot of parent_slice on the same part
    SELECT l.*, (l.part = 'target')::INT AS part_no, p.slot AS parent_slot
    FROM lay0 l LEFT JOIN lay0 p ON p.stage = l.parent_slice AND p.part = l.part
), root_slot AS (
    SELECT max(CASE WHEN stage = 'end_to_end' THEN slot END) AS initiator,
           max(CASE WHEN stage = 'target_side' THEN slot END) AS target
    FROM lay
), spans AS MATERIALIZED (
    -- each drawn stage's span and own duration, as io_stages has them (one scan: the span is
    -- its from_ts..to_ts, which a clock-free stage's dur is not)
    SELECT i.n, l.part_no, l.slot, l.parent_slot, l.depth, l.sib, st.from_ts AS s, st.to_ts AS e, st.dur
    FROM io_stage_durations st JOIN ios i ON i.io_n = st.io_n
    JOIN io_stage_definitions d ON d.def_no = st.def_no
     AND d.stage_set = (SELECT stage_set FROM timeline_stage_set)
    JOIN lay l ON l.stage = d.stage AND l.depth > 0
    WHERE st.from_ts IS NOT NULL AND st.to_ts IS NOT NULL
), roots AS (
    SELECT n, 0 AS part_no, (SELECT initiator FROM root_slot) AS slot, root_s AS s,
           greatest(coalesce(root_e, root_s), root_s) AS e, NULL::BIGINT AS dur
    FROM ios
    UNION ALL
    SELECT n, 1, (SELECT target FROM root_slot), min(s), max(greatest(e, s)), NULL FROM spans
    WHERE part_no = 1 GROUP BY n
), l1 AS (
    -- clamp into the parent, then after the earlier siblings
    SELECT c.*, greatest(c.cs, coalesce(max(c.ce) OVER w, c.cs)) AS fs FROM (
        SELECT x.n, x.slot, least(greatest(x.s, p.s), p.e) AS cs,
               least(greatest(x.e, x.s, p.s), p.e) AS ce, x.sib, x.dur, x.parent_slot
        FROM spans x JOIN roots p ON p.n = x.n AND p.part_no = x.part_no WHERE x.depth = 1) c
    WINDOW w AS (PARTITION BY c.n, c.parent_slot ORDER BY c.sib ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
), l1f AS (
    SELECT n, slot, fs AS s, greatest(ce, fs) AS e, dur FROM l1
), l2 AS (
    SELECT c.*, greatest(c.cs, coalesce(max(c.ce) OVER w, c.cs)) AS fs FROM (
        SELECT x.n, x.slot, x.parent_slot, least(greatest(x.s, p.s), p.e) AS cs,
               least(greatest(x.e, x.s, p.s), p.e) AS ce, x.sib, x.dur
        FROM spans x JOIN l1f p ON p.n = x.n AND p.slot = x.parent_slot WHERE x.depth = 2) c
    WINDOW w AS (PARTITION BY c.n, c.parent_slot ORDER BY c.sib ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
), l2f AS (
    SELECT n, slot, fs AS s, greatest(ce, fs) AS e, dur FROM l2
), l3 AS (
    SELECT c.*, greatest(c.cs, coalesce(max(c.ce) OVER w, c.cs)) AS fs FROM (
        SELECT x.n, x.slot, x.parent_slot, least(greatest(x.s, p.s), p.e) AS cs,
               least(greatest(x.e, x.s, p.s), p.e) AS ce, x.sib, x.dur
        FROM spans x JOIN l2f p ON p.n = x.n AND p.slot = x.parent_slot WHERE x.depth = 3) c
    WINDOW w AS (PARTITION BY c.n, c.parent_slot ORDER BY c.sib ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
), drawn AS MATERIALIZED (
    SELECT d.*, l.part_no, l.depth, l.flow FROM (
        SELECT n, slot, s, e, dur FROM roots
        UNION ALL SELECT * FROM l1f
        UNION ALL SELECT * FROM l2f
        UNION ALL SELECT n, slot, fs, greatest(ce, fs), dur FROM l3) d
    JOIN lay l USING (slot)
), io_flows AS (
    -- an io's flows exist when it has both ends: a target part and the slice the flow leaves
    -- (or returns to); one GROUP BY (a window per io cost 2.6 of 7 s at 204 k I/Os)
    SELECT n, bool_or(flow = 'out') AND bool_or(part_no = 1) AS has_out,
           bool_or(flow = 'back') AND bool_or(part_no = 1) AS has_back
    FROM drawn GROUP BY n
)
SELECT i.io_id, i.n, l.part, l.stage, l.parent_slice, l.depth, l.begin_pos, l.end_pos,
       (SELECT max(uuid) FROM timeline_tracks) + 2 * i.n - 1 + f.part_no AS track_uuid,
       CASE f.part_no WHEN 0 THEN i.queue_track ELSE i.target_queue_track END AS parent_uuid,
       f.s AS ts, f.e - f.s AS dur,
       CASE WHEN f.dur IS DISTINCT FROM f.e - f.s THEN f.dur END AS stage_dur_ns,
       CASE WHEN f.flow = 'out' AND g.has_out THEN 2 * i.n - 1
            WHEN f.slot = (SELECT target FROM root_slot) AND g.has_back THEN 2 * i.n END AS flow_out,
       CASE WHEN f.flow = 'back' AND g.has_back THEN 2 * i.n
            WHEN f.slot = (SELECT target FROM root_slot) AND g.has_out THEN 2 * i.n - 1 END AS flow_in,
       i.io_type, i.size_bytes, i.cid, i.match_state
FROM drawn f JOIN io_flows g USING (n) JOIN ios i USING (n) JOIN lay l USING (slot)
WHERE f.depth = 0 OR f.dur IS NOT NULL;

-- timeline_slices: one row per slice: each selected io's two roots (the target's when it has
-- target points) and every stage of the timeline's set whose duration it has (io_stages.dur
-- known), clamped so that slices nest on their track: a
-- child within its parent, siblings one after the other (only offset-based stages can
-- need it, by up to the clock uncertainty).
--   io_id, n       the io and its number (1.. by nvme_setup_cmd time)
--   part, stage, parent_slice, depth, begin_pos, end_pos   as in timeline_layout
--   track_uuid     the io's own track for this part: it sits under parent_uuid, the queue's
--                  track on that part's host (per-io tracks share the name 'io', which the
--                  Perfetto UI draws as one track per queue)
--   parent_uuid    timeline_tracks.uuid of that queue track
--   ts, dur        the drawn slice (ns, initiator clock)
--   stage_dur_ns   the stage's own duration (io_stages.dur) where it differs from dur
--                  (clock-free stages, clamped slices); NULL otherwise and on roots
--   flow_out, flow_in   flow ids leaving / ending at this slice: 2n-1 from the 'out' slice
--                  to the target root, 2n from the target root to the 'back' slice
--   io_type, size_bytes, cid, match_state   the io (args of the roots; io_type is every
--                  slice's category)
CREATE OR REPLACE VIEW timeline_slices AS
FROM timeline_slices_part(-9223372036854775808, NULL, 0);

-- timeline_counters: one row per counter value (the value holds until the counter's next row).
--   uuid     timeline_tracks.uuid of the counter track
--   ts       ns, initiator clock
--   int_value     in_flight tracks: commands on the queue (initiator: nvme_setup_cmd ..
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
), iv AS (
    -- each interval with its counter tracks' uuids: the steps, bins and windows below group
    -- and sort on them instead of (host, resource_kind, key) strings (773 k I/Os: 13.0 -> 9.5
    -- CPU-s for the counters, same rows). Not materialized: each use below reads what it needs
    -- of it (a materialized copy of every interval of a 100 M-event run is 1 GB).
    SELECT f.uuid AS in_flight_uuid, m.uuid AS mb_s_uuid, iv.s, iv.e, iv.size_bytes
    FROM (
        SELECT initiator_host AS host, 'queue' AS resource_kind, queue_key AS key,
               i_setup_ts AS s, i_complete_rq_ts AS e, size_bytes FROM io_selected
        UNION ALL
        SELECT initiator_host, 'device', device_key, i_rq_issue_ts, i_rq_complete_ts, size_bytes FROM io_selected
        UNION ALL
        SELECT target_host, 'queue', queue_key, t_init_ts - offset_ns, t_complete_ts - offset_ns, size_bytes
        FROM io_selected WHERE match_state = 'matched'
        UNION ALL
        SELECT target_host, 'device', target_device_key, t_dev_issue_ts - offset_ns, t_dev_complete_ts - offset_ns,
               size_bytes
        FROM io_selected WHERE match_state = 'matched' AND target_device_key IS NOT NULL
    ) iv
    JOIN tracks f ON f.counter = 'in_flight' AND f.host = iv.host
                 AND f.resource_kind = iv.resource_kind AND f.key = iv.key
    LEFT JOIN tracks m ON m.counter = 'mb_s' AND m.host = iv.host
                      AND m.resource_kind = iv.resource_kind AND m.key = iv.key
    WHERE iv.s IS NOT NULL AND iv.e IS NOT NULL AND iv.e >= iv.s
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
    SELECT uuid, ts, sum(d) AS d FROM (
        SELECT in_flight_uuid AS uuid, s AS ts, 1 AS d FROM iv WHERE s >= lo_ts AND (hi_ts IS NULL OR s < hi_ts)
        UNION ALL
        SELECT in_flight_uuid, e, -1 FROM iv WHERE e >= lo_ts AND (hi_ts IS NULL OR e < hi_ts)) GROUP BY ALL
    UNION ALL
    -- the track's value at lo_ts, as a step there that the output leaves out (below)
    SELECT uuid, NULL, v FROM at_start
), bin_range AS (
    SELECT mb_s_uuid AS uuid, min((e - w.start_ts) // 10000000) AS lo, max((e - w.start_ts) // 10000000) AS hi
    FROM iv, report_window w WHERE mb_s_uuid IS NOT NULL GROUP BY ALL
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
-- same rows.
SELECT uuid, ts, int_value, NULL::DOUBLE AS double_value FROM (
    SELECT s.uuid, s.ts,
           ((sum(s.d) OVER (ORDER BY s.uuid, s.ts NULLS FIRST ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))
            - a.v_before)::BIGINT AS int_value
    FROM steps s JOIN at_start a USING (uuid))
WHERE ts IS NOT NULL
UNION ALL
SELECT e.uuid, w.start_ts + e.bin * 10000000, NULL, coalesce(b.bytes, 0) * 1e3 / 10000000
FROM part_bins e LEFT JOIN bins b USING (uuid, bin), report_window w;

CREATE OR REPLACE VIEW timeline_counters AS
FROM timeline_counters_part(-9223372036854775808, NULL);

-- timeline_names: one row per interned string of the trace.
--   kind    'event' (slice names: the stages of timeline_layout) or 'category' (io types)
--   name
--   iid     1.. within its kind (Perfetto's interned ids)
CREATE OR REPLACE VIEW timeline_names AS
SELECT 'event' AS kind, stage AS name, row_number() OVER (ORDER BY depth, seq, stage) AS iid FROM timeline_layout
UNION ALL
SELECT 'category', io_type, row_number() OVER (ORDER BY io_type)
FROM (SELECT DISTINCT coalesce(io_type, 'unknown') AS io_type FROM io_selected);

-- timeline_slice_packets: one row per slice of timeline_slices, with what its packets say:
-- a slice is a begin packet at ts and an end packet at end_ts, on track_uuid; a root (depth 0)
-- opens its per-io track, so a track descriptor packet precedes its begin. The writer reads
-- them ORDER BY ts, track_uuid, begin_pos and the encoder (analyzer/src/timeline.rs) merges
-- begins, ends and timeline_counters into one stream in the order (ts, track_uuid, pos), pos
-- being -1 for a descriptor, begin_pos, end_pos, 0 for a counter (at one time on one track,
-- depth-first). Sorting one row per slice instead of one per packet: 21.6 M packet rows of
-- 773 k I/Os were most of the timeline's time.
--   ts, end_ts        ns, initiator clock (end_ts = ts + dur)
--   track_uuid, begin_pos, end_pos   as in timeline_slices
--   opens_track       true on roots: the descriptor of track_uuid (under parent_uuid) comes first
--   parent_uuid       roots: the queue track their track sits under (may be NULL)
--   name_iid, category_iid   timeline_names iids of the slice's name and io type
--   flow_out, flow_in        flow ids (timeline_slices)
--   io_id, size_bytes, cid, match_state   args: io_id on both roots, the rest on end_to_end
--   stage_dur_ns      see timeline_slices
-- timeline_slice_packets_part(lo_ts, hi_ts, n_before): the same for a part of the io, as
-- timeline_slices_part (the writer's parts); the view is the whole.
CREATE OR REPLACE MACRO timeline_slice_packets_part(lo_ts, hi_ts, n_before) AS TABLE
WITH ev AS (SELECT name, iid FROM timeline_names WHERE kind = 'event'),
cat AS (SELECT name, iid FROM timeline_names WHERE kind = 'category')
SELECT s.ts, s.ts + s.dur AS end_ts, s.track_uuid, s.begin_pos, s.end_pos,
       s.depth = 0 AS opens_track,
       CASE WHEN s.depth = 0 THEN s.parent_uuid END AS parent_uuid,
       ev.iid AS name_iid, cat.iid AS category_iid, s.flow_out, s.flow_in,
       CASE WHEN s.depth = 0 THEN s.io_id END AS io_id,
       CASE WHEN s.stage = 'end_to_end' THEN s.size_bytes END AS size_bytes,
       CASE WHEN s.stage = 'end_to_end' THEN s.cid END AS cid,
       CASE WHEN s.stage = 'end_to_end' THEN s.match_state END AS match_state,
       s.stage_dur_ns
FROM timeline_slices_part(lo_ts, hi_ts, n_before) s
JOIN ev ON ev.name = s.stage JOIN cat ON cat.name = coalesce(s.io_type, 'unknown');

CREATE OR REPLACE VIEW timeline_slice_packets AS
FROM timeline_slice_packets_part(-9223372036854775808, NULL, 0);
