-- requires: core/join, core/stages, report/io_selected
-- loaded: with every run

-- Per-I/O data on disk (report/io.parquet, report/io_stages.parquet) and the ids every
-- output shares (reports/README.md "Vocabulary"). Views (and io_stage_names, a connection
-- variable io_stage_export reads); the report writes them with DuckDB COPY
-- (reports/report/export.py), streamed.

-- io_keys: one row per io: the ids of the resources it used.
--   io_id
--   queue_key          '<initiator host>/c<controller instance>/q<qid>', the transport queue
--                      (= its TCP connection), e.g. 'initiator/c0/q1'
--   device_key         '<initiator host>/<disk>', the initiator's block device ('?' unknown)
--   target_device_key  '<target host>/<disk>', the target's backing device as nvmet names it
--                      ('/dev/' dropped, e.g. 'target/nullb0'); NULL when the io is unmatched
-- (a projection of io, which computes them once; the reports read them from io directly)
CREATE OR REPLACE VIEW io_keys AS
SELECT io_id, queue_key, device_key, target_device_key FROM io;

-- io_export: one row per io the report covers (io_selected: its filters applied), the
-- columns of report/io.parquet before the milestone columns (io_export_milestones).
--   io_id                        io.io_id (the initiator command's key, stable for a run)
--   initiator_host, target_host  host directory names (target_host NULL: no target controller)
--   queue_key, device_key, target_device_key   see io_keys
--   io_type                      'read', 'write', 'flush', ...;  size_bytes  data bytes
--   disk, slba                   the initiator's disk (e.g. 'nvme0n1') and the command's start
--                                LBA (in the namespace's LBAs), from nvme_setup_cmd
--   group_key                    the report's group of this io, e.g. 'type=read, size=4096'
--   cpu, pid, comm               submitting CPU; the bio's owner process
--   qid, cid, cntlid             NVMe queue id, command id (as on the wire), target controller id
--   match_state                  'matched' or why not (see io)
--   status                       NVMe completion status on the initiator
--   offset_ns                    clock offset applied to this io's target milestones
--                                (target clock - initiator clock, ns; with several
--                                initiators: target clock - the reference initiator's)
--   cgroup, tenant, class, file, namespace   whom it was for and where it went (io; NULL
--                                when not recorded: capture key tenants=)
--   path                         the controller and target address it went through (io)
--   ana_grpid, ana_state         its path's ANA group and state at submission (io; NULL without
--                                native multipath's ANA)
--   attempts                     commands it took (1: none failed and was sent again)
--   io_n                         io.io_n: the key the milestone columns are joined on (not
--                                written to io.parquet)
CREATE OR REPLACE VIEW io_export AS
SELECT s.io_id, s.initiator_host, s.target_host, s.queue_key, s.device_key, s.target_device_key,
       s.io_type, s.size_bytes, s.disk, s.slba, s.group_key, s.cpu, s.pid, s.comm, s.qid, s.cid, s.cntlid,
       s.match_state, s.status, s.offset_ns, s.cgroup, s.tenant, s.class, s.file, s.namespace, s.path,
       s.ana_grpid, s.ana_state, s.attempts, s.io_n
FROM io_selected s;

-- io_export_milestones: one row per milestone column of report/io.parquet, in column order.
--   milestone       an io_milestones.milestone some selected io has ('i:<event>' initiator,
--                   't:<event>' target, '<event>#last' the last of repeated NVMe/TCP events)
--   mean_offset_ns  mean time after the io's first initiator point (block_bio_queue, else
--                   nvme_setup_cmd): the columns follow an io's life
-- The stock milestones are averaged over io_stock_milestones' columns, one pass (over
-- io_milestone_ts's rows it took 0.76 s against 0.05 s for 773 k I/Os), the NVMe/TCP ones
-- over io_tcp_milestone_spans' (first and last in one pass).
CREATE OR REPLACE VIEW io_export_milestones AS
WITH stock AS (
    SELECT m.*, coalesce(s.i_bio_queue_ts, s.i_setup_ts) AS start_ts
    FROM io_stock_milestones m JOIN io_selected s USING (io_n)
), stock_counts AS (
    SELECT * FROM (SELECT count(COLUMNS(* EXCLUDE (io_n, start_ts))) FROM stock)
    UNPIVOT (n FOR milestone IN (COLUMNS(*)))
), stock_means AS (
    SELECT * FROM (SELECT avg(COLUMNS(* EXCLUDE (io_n, start_ts)) - start_ts) FROM stock)
    UNPIVOT INCLUDE NULLS (mean_offset_ns FOR milestone IN (COLUMNS(*)))
)
SELECT milestone, m.mean_offset_ns
FROM stock_counts c JOIN stock_means m USING (milestone)
WHERE c.n > 0
UNION ALL
SELECT c.milestone, CASE WHEN c.is_last THEN t.last_mean ELSE t.first_mean END
FROM (SELECT m.ms_no, count(m.first_ts) AS first_n, count(m.last_ts) AS last_n,
             avg(m.first_ts - coalesce(s.i_bio_queue_ts, s.i_setup_ts)) AS first_mean,
             avg(m.last_ts - coalesce(s.i_bio_queue_ts, s.i_setup_ts)) AS last_mean
      FROM io_tcp_milestone_spans m JOIN io_selected s USING (io_n) GROUP BY m.ms_no) t
JOIN tcp_milestones c USING (ms_no)
WHERE CASE WHEN c.is_last THEN t.last_n ELSE t.first_n END > 0;

-- io_stage_names: the names of each io_stage_definitions row as lists indexed by def_no (1..),
-- and its rank in (stage_set, seq) order: a connection variable that io_stage_export reads, so
-- that it sorts narrow rows (an io, a def_no) and puts the names on them after the sort (a join
-- there would not keep the order). At 40 M events (37 M rows) the sort with the names carried
-- along took 13.4 s, 9.9 s without; at 10 M 2.4 and 1.8 s; the same rows in the same order.
SET VARIABLE io_stage_names = (
    SELECT {'stage_set': list(stage_set ORDER BY def_no), 'stage': list(stage ORDER BY def_no),
            'seq': list(seq ORDER BY def_no), 'parent': list(parent ORDER BY def_no),
            'direction': list(direction ORDER BY def_no), 'from_milestone': list(from_milestone ORDER BY def_no),
            'to_milestone': list(to_milestone ORDER BY def_no), 'minus_from_milestone': list(minus_from_milestone ORDER BY def_no),
            'minus_to_milestone': list(minus_to_milestone ORDER BY def_no),
            'rank': list(rank ORDER BY def_no)}
    FROM (SELECT *, row_number() OVER (ORDER BY stage_set, seq, def_no) AS rank FROM io_stage_definitions)
);

-- stage_def_field(field, def_no): FIELD of io_stage_names for def_no. A macro.
CREATE OR REPLACE MACRO stage_def_field(field, def_no) AS struct_extract(getvariable('io_stage_names'), field)[def_no];

-- io_stage_export_part(lo, hi): one row per (io the report covers, stage) of every stage set,
-- for the ios with lo <= io_n < hi (NULL: no bound), sorted. analyze writes
-- report/io_stages.parquet as parts of about 4 M rows, each sorted on its own (each sort fits
-- in memory; one sort of 22 M rows spilled), put together by `ntscope-analyzer parquet-concat`
-- (reports/report/export.py); the writer keeps the report's sets.
--   io_id, stage_set, stage, seq, parent   as in io_stages / stage_definitions
--   direction   'submission' (initiator -> target), 'completion' (target -> initiator), 'both'
--   dur         the stage's duration (ns); NULL when a milestone of this io is missing
--   missing     that first missing milestone, NULL when dur is known
-- Rows in io order (io.io_n: initiator, then submit time), then stage_set, seq: sorted, the
-- file is deterministic and 4.6x smaller (123.5 -> 26.8 MB at 10 M events, zstd) for 2.2 s
-- more (3.6 -> 5.8 s).
CREATE OR REPLACE MACRO io_stage_export_part(lo, hi) AS TABLE
SELECT io_id, stage_def_field('stage_set', def_no) AS stage_set, stage_def_field('stage', def_no) AS stage,
       stage_def_field('seq', def_no) AS seq, stage_def_field('parent', def_no) AS parent,
       stage_def_field('direction', def_no) AS direction, dur,
       missing_milestone(missing_no, stage_def_field('from_milestone', def_no), stage_def_field('to_milestone', def_no),
                         stage_def_field('minus_from_milestone', def_no), stage_def_field('minus_to_milestone', def_no)) AS missing
FROM (SELECT sel.io_id, s.def_no, s.dur, s.missing_no
      FROM io_stage_durations s JOIN io_selected sel USING (io_n)
      WHERE (lo IS NULL OR s.io_n >= lo) AND (hi IS NULL OR s.io_n < hi)
      ORDER BY s.io_n, stage_def_field('rank', s.def_no));

-- io_stage_export: every io's rows (the whole of io_stage_export_part), for SQL users.
CREATE OR REPLACE VIEW io_stage_export AS FROM io_stage_export_part(NULL, NULL);
