-- requires: core/group_key, compare/params
-- input: cmp_source, cmp_io, cmp_run_info, cmp_side_defs  each side's rows (sql/compare_sides.py)

-- Compare layer, input. The loader (sql/compare_sides.py) loads each run with
-- sql/views.py and hands its per-I/O stages here unchanged, as cmp_source (one row per (run,
-- io, stage)) and cmp_io (one row per (run, io)): views over two Parquet files per run in the
-- comparison's spill folder (copying them into a table took 7.2 s for 773 k + 256 k I/Os, and
-- the comparison after loading took 35 s that way, 26 s this way).
-- cmp_source:
--   run          'base' or 'run' (the side)
--   rep          which run of the side: 1, 2, ... (`compare base1,base2 run1,run2`: repeats
--                of one condition); 1 for a single run
--   io_rank      the io's place in io.io_id order within its run (1, 2, ...; unique with rep,
--                not across reps): the bootstrap's sample order. The io itself, in that run:
--                SELECT * FROM (SELECT *, row_number() OVER (ORDER BY io_id) AS io_rank FROM io)
--                WHERE io_rank = ...
--   io_type, size_bytes   io columns (size in bytes): what groups the io
--   stage_set, stage, seq, parent, direction   as in stage_definitions
--   def_no       the stage's number in that run's io_stage_definitions (the side's file holds
--                def_no, its metadata the names of each number: sql/compare_sides.py)
--   dur          ns (NULL when a milestone was missing; every io has a row for each def_no
--                of its run)
-- cmp_io (the io's other columns, once per io rather than on each of its stage rows):
--   run, rep, io_rank, io_type, size_bytes   as in cmp_source
--   qid, cpu, pid, comm, tenant, class, path, cgroup, file, namespace, target_device_key   io columns
--   queue_ahead_cmds, queue_other_cpu_cmds, queue_other_bytes, device_other_bytes
--                what was in flight ahead of the I/O at submit (intf_io_ahead of that run)
--   target_cpu_wait_ns, initiator_cpu_wait_ns   how long its queue's NVMe/TCP work waited for
--                that host's CPU while the io was between the hosts (io_cpu_wait; NULL when
--                the host did not record cpu_wait, or the io was not matched)
-- plus cmp_run_info (one row per run of each side: run, rep, run_dir, offset_uncertainty_ns, trace_clocks, clock_synced,
-- input_errors: that run's input_error:* pipeline_stats names or NULL, roles: its hosts'
-- roles, e.g. 'initiator,target', target_local_io_per_s: requests/s the target's backing
-- devices served for the target itself, from target_local_io, digest: the initiator's
-- NVMe/TCP digests from host.json, NULL when not recorded, initiator_io_work_wait_ns /
-- target_io_work_wait_ns / initiator_net_rx_wait_ns / target_net_rx_wait_ns: mean wait of
-- that side's NVMe/TCP io_work / NET_RX softirq for its CPU (io_work_runs, net_rx_runs),
-- NULL when not recorded, target_cpu_wait_per_io_ns / initiator_cpu_wait_per_io_ns: the mean of
-- io_cpu_wait over the run's I/Os, other_traffic_bytes_per_s / other_traffic_path /
-- other_traffic_top_flow / nvme_data_bytes_per_s: run_other_traffic, NULL when no host recorded
-- net_flows), cmp_side_defs (one row per stage definition of each run of each
-- side, from its stages file's metadata: run, rep, def_no, stage_set, stage, seq, parent,
-- direction, from_milestone, to_milestone, minus_from_milestone, minus_to_milestone, as in that run's
-- io_stage_definitions) and cmp_params; and the
-- stage table with its vocabularies (core/stage_definitions.sql).

-- cmp_ci_level(): the confidence level as the reports write it, e.g. '95%' or '99.9%'
CREATE OR REPLACE MACRO cmp_ci_level() AS (SELECT printf('%g%%', 100 * confidence) FROM cmp_params);

-- cmp_input_problems: one row per run whose input cannot support a verdict: an input error
-- in its pipeline_stats (same trace for two hosts, a role its events contradict, hosts of
-- different runs ...), or not both an initiator and a target traced (a run without a target
-- whose initiator recorded the target's ACKs is compared on the initiator_only set). cmp_verdict gives
-- 'no verdict' while any row exists.
--   run       'base' or 'run';  problem   what is wrong (text)
CREATE OR REPLACE VIEW cmp_input_problems AS
SELECT run, 'input errors: ' || input_errors AS problem FROM cmp_run_info WHERE input_errors IS NOT NULL
UNION ALL
SELECT run, 'hosts traced: ' || coalesce(roles, 'none') || ' (a comparison needs an initiator and a target in both runs, '
           || CASE WHEN nvme_srtt_us IS NULL THEN 'or an initiator that recorded the target''s TCP ACKs: capture key nvme_acks, stage set initiator_only)'
                   ELSE 'or target ACKs that split I/Os: this initiator recorded them, but every ACK rode on its command''s response '
                        || '(a target that delays its ACKs answers both at once when one command is in flight): run the workload '
                        || 'with more commands in flight (iodepth >= 2) or trace the target)' END
FROM cmp_run_info i
WHERE coalesce(roles, '') NOT LIKE '%initiator%'
   OR (coalesce(roles, '') NOT LIKE '%target%'
       AND NOT EXISTS (SELECT 1 FROM cmp_side_defs d WHERE d.run = i.run AND d.rep = i.rep AND d.stage_set = 'initiator_only'));

-- cmp_io_group: one row per io when cmp_params.group_by is not type and size (none else): its
-- group.
--   run, rep, io_rank
--   group_key    io_group_key of cmp_params.group_by over the io columns compare's input keeps
--                (type, size, cpu, process, pid, tenant, class, path, cgroup, file, namespace,
--                target_device: reports/compare/params.py
--                refuses the other fields; the columns of io they would read are NULL here)
CREATE OR REPLACE VIEW cmp_io_group AS
SELECT i.run, i.rep, i.io_rank,
       io_group_key(p.group_by, {'io_type': i.io_type, 'size_bytes': i.size_bytes, 'cpu': i.cpu, 'comm': i.comm,
                                 'pid': i.pid, 'tenant': i.tenant, 'class': i.class, 'path': i.path,
                                 'cgroup': i.cgroup, 'file': i.file, 'namespace': i.namespace,
                                 'target_device_key': i.target_device_key,
                                 'device_key': NULL::VARCHAR, 'queue_key': NULL::VARCHAR,
                                 'initiator_host': NULL::VARCHAR, 'target_host': NULL::VARCHAR}) AS group_key
FROM cmp_io i CROSS JOIN (SELECT group_by FROM cmp_params WHERE group_by <> ['type', 'size']) p;

-- cmp_io_keyed: the columns of cmp_io the verdict's per-group evidence reads, with each io's
-- group (not the --group-by columns: their strings are read only by cmp_io_group).
--   run, rep, io_rank, io_type, size_bytes, qid, cpu, queue_ahead_cmds, queue_other_cpu_cmds,
--   queue_other_bytes, device_other_bytes, target_cpu_wait_ns, initiator_cpu_wait_ns
--   group_key    cmp_io_group's, by default 'type=<io_type>, size=<bytes>' (the same key as the
--                analyze report's with the same --group-by)
CREATE OR REPLACE VIEW cmp_io_keyed AS
SELECT i.run, i.rep, i.io_rank, i.io_type, i.size_bytes, i.qid, i.cpu, i.queue_ahead_cmds, i.queue_other_cpu_cmds,
       i.queue_other_bytes, i.device_other_bytes, i.target_cpu_wait_ns, i.initiator_cpu_wait_ns,
       coalesce(g.group_key, type_size_group_key(i.io_type, i.size_bytes)) AS group_key
FROM cmp_io i LEFT JOIN cmp_io_group g USING (run, rep, io_rank);

-- cmp_io_stage: one row per (run, io, stage) with a known duration, with its group.
--   run, rep, io_rank, stage_set, stage, seq, parent, direction, dur (ns)
--   group_key    as in cmp_io_keyed. By type and size it comes from the stage rows themselves;
--                by other fields from cmp_io_group, a join of the stage rows with their io
--                (empty, and so not paid, by type and size)
CREATE OR REPLACE VIEW cmp_io_stage AS
SELECT s.run, s.rep, s.io_rank, coalesce(g.group_key, type_size_group_key(s.io_type, s.size_bytes)) AS group_key,
       s.stage_set, s.stage, s.seq, s.parent, s.direction, s.dur
FROM cmp_source s LEFT JOIN cmp_io_group g USING (run, rep, io_rank)
WHERE s.dur IS NOT NULL;
