-- requires: core/stage_definitions, compare/input, compare/bootstrap, compare/lad, compare/tenants, compare/paths

-- cmp_queue_evidence: one row per (run, group): how crowded the I/Os' transport queues
-- were when they were submitted (from intf_io_ahead of each run, copied into cmp_io).
--   run, group_key
--   ios                    I/Os of the group
--   ahead_cmds_mean        commands in flight ahead on the same queue (any stream)
--   other_cpu_cmds_mean    of those, submitted from another CPU (queue shared across CPUs)
--   other_stream_bytes_mean  bytes ahead from other streams on the same queue (bytes)
--   device_other_bytes_mean  bytes ahead from other streams on the same device (bytes)
--   queues, cpus           distinct queues and submitting CPUs of the group
CREATE OR REPLACE TABLE cmp_queue_evidence AS
SELECT run, group_key,
       count(*) AS ios, avg(queue_ahead_cmds) AS ahead_cmds_mean,
       avg(queue_other_cpu_cmds) AS other_cpu_cmds_mean, avg(queue_other_bytes) AS other_stream_bytes_mean,
       avg(device_other_bytes) AS device_other_bytes_mean,
       count(DISTINCT qid) AS queues, count(DISTINCT cpu) AS cpus
FROM cmp_io_keyed
GROUP BY ALL;

-- cmp_stage_share: one row per (group, stage) of the verdict's stage set (cmp_stage_set):
-- how much of the change of the mean end-to-end time each stage explains. Top-level
-- stages tile end_to_end and means add, so their shares sum to 1 (up to I/Os missing a
-- stage); children's shares are of the same end-to-end change.
--   group_key, stage_set, stage, seq, parent, direction
--   change_ns, change_lo_ns, change_hi_ns, lad, lad_lo, lad_hi, significant   (cmp_lad, mean)
--   e2e_change_ns      change of the mean end_to_end (ns)
--   share              change_ns / e2e_change_ns (NULL when end_to_end did not change)
CREATE OR REPLACE VIEW cmp_stage_share AS
SELECT l.group_key, l.stage_set, l.stage, l.seq, l.parent, l.direction, l.change_ns, l.change_lo_ns,
       l.change_hi_ns, l.lad, l.lad_lo, l.lad_hi, l.significant, e.change_ns AS e2e_change_ns,
       l.change_ns / nullif(e.change_ns, 0) AS share
FROM cmp_lad l
JOIN cmp_lad e ON e.group_key = l.group_key AND e.stage_set = l.stage_set AND e.stage = 'end_to_end' AND e.statistic = 'mean'
WHERE l.statistic = 'mean' AND l.stage <> 'end_to_end' AND l.stage_set = (SELECT stage_set FROM cmp_stage_set);

-- cpu_wait_text: 'io_work a -> b us, NET_RX softirq c -> d us' (mean waits for the CPU, the
-- parts both runs recorded; '' when neither).
CREATE OR REPLACE MACRO cpu_wait_text(base_w, run_w, base_rx, run_rx) AS
    concat_ws(', ',
              CASE WHEN base_w IS NOT NULL AND run_w IS NOT NULL
                   THEN printf('io_work %.0f -> %.0f us', base_w / 1e3, run_w / 1e3) END,
              CASE WHEN base_rx IS NOT NULL AND run_rx IS NOT NULL
                   THEN printf('NET_RX softirq %.0f -> %.0f us', base_rx / 1e3, run_rx / 1e3) END);

-- cpu_late: true when a side's CPU wait per I/O (io_cpu_wait: how long the I/O's queue's
-- NVMe/TCP work waited for that host's CPU while the I/O was between the hosts, the group's
-- mean; both runs recorded) grew by at least cpu_wait_min_share of the bottleneck stage's
-- change (and min_abs_change_ns). Per I/O, not per softirq run: when many I/Os queue behind
-- one late softirq, each of them counts its wait, so the evidence grows with the I/Os a busy
-- CPU delays, whatever the intensity.
CREATE OR REPLACE MACRO cpu_late(base_io, run_io, change_ns, p) AS
    coalesce(run_io - base_io >= greatest(p.cpu_wait_min_share * change_ns, p.min_abs_change_ns), false);

-- cpu_wait_io_text: 'per I/O a -> b us (+c us, d% of STAGE's change)' ('' when either is NULL).
CREATE OR REPLACE MACRO cpu_wait_io_text(base_io, run_io, change_ns, stage) AS
    CASE WHEN base_io IS NOT NULL AND run_io IS NOT NULL THEN
         printf('per I/O %.0f -> %.0f us (%+.0f us, %.0f%% of %s''s change)', base_io / 1e3, run_io / 1e3,
                (run_io - base_io) / 1e3, 100 * (run_io - base_io) / nullif(change_ns, 0), stage) ELSE '' END;

-- mbps_text(bytes_per_s): '7.7 MB/s' (decimal megabytes).
CREATE OR REPLACE MACRO mbps_text(b) AS printf('%.1f MB/s', b / 1e6);

-- cmp_group_change: one row per group of the verdict's stage set (cmp_stage_set) present in
-- both runs: how its mean end-to-end time changed, the top-level stage that changed most in
-- that direction and its dominant child, the most amplified stage, and the one-way split of
-- that top-level stage's change. What cmp_verdict's numbers are read from.
--   group_key, stage_set
--   verdict            'slower', 'faster' or 'no significant change' (cmp_lad's significant)
--   e2e_base_ns, e2e_run_ns, e2e_lad, e2e_lad_lo, e2e_lad_hi, e2e_change_ns, e2e_change_lo_ns,
--   e2e_change_hi_ns   end_to_end's mean per side, its LAD and the change with their CIs (ns)
--   reps_base, reps_run   runs per side
--   e2e_between_lo_ns, e2e_between_hi_ns   the change between repeated runs (ns; NULL without repeats)
--   top_stage          the top-level stage whose mean changed most in the direction of the
--                      end-to-end change (the bottleneck when the verdict names a change)
--   child_stage        its child stage carrying at least half of its change, if any
--   change_ns, change_lo_ns, change_hi_ns, lad, lad_lo, lad_hi, share   top_stage's (cmp_stage_share)
--   amplified_stage, amplified_lad, amplified_lad_lo, amplified_lad_hi   as in cmp_verdict
--   amplified_change_ns   the amplified stage's change of the mean (ns)
--   sub_ns, comp_ns    change of top_stage's submission / completion children (ns; NULL without one)
CREATE OR REPLACE VIEW cmp_group_change AS
WITH e AS (
    SELECT * FROM cmp_lad WHERE stage = 'end_to_end' AND statistic = 'mean'
      AND stage_set = (SELECT stage_set FROM cmp_stage_set)
), top AS (
    SELECT s.* FROM cmp_stage_share s JOIN e USING (group_key)
    WHERE s.parent IS NULL
    QUALIFY row_number() OVER (PARTITION BY s.group_key ORDER BY s.change_ns * sign(e.change_ns) DESC, s.seq) = 1
), child AS (
    SELECT c.group_key, c.stage, c.change_ns
    FROM cmp_stage_share c JOIN top t ON c.group_key = t.group_key AND c.parent = t.stage
    WHERE c.change_ns * sign(t.change_ns) >= 0.5 * abs(t.change_ns)
    QUALIFY row_number() OVER (PARTITION BY c.group_key ORDER BY c.change_ns * sign(t.change_ns) DESC) = 1
), amp AS (
    -- end-to-end changed: the most amplified stage in its direction that carries >= 5% of
    -- the change; unchanged within noise: a stage amplified >= 2x (CI) whose added time
    -- other stages absorbed (TCG runs vary by ms in network time between runs)
    SELECT s.group_key, s.stage AS amplified_stage, s.lad AS amplified_lad, s.lad_lo AS amplified_lad_lo,
           s.lad_hi AS amplified_lad_hi, s.change_ns AS amplified_change_ns
    FROM cmp_stage_share s JOIN e USING (group_key)
    WHERE s.significant AND CASE WHEN e.significant THEN s.change_ns * sign(e.change_ns) >= 0.05 * abs(e.change_ns)
                                 ELSE s.lad_lo >= 2 END
    QUALIFY row_number() OVER (PARTITION BY s.group_key
                               ORDER BY CASE WHEN e.change_ns > 0 OR NOT e.significant THEN s.lad ELSE 1 / s.lad END DESC, s.seq) = 1
), dir AS (
    -- one-way split of a network change, only meaningful on a synchronized clock
    SELECT s.group_key,
           max(s.change_ns) FILTER (WHERE s.direction = 'submission') AS sub_ns,
           max(s.change_ns) FILTER (WHERE s.direction = 'completion') AS comp_ns
    FROM cmp_stage_share s JOIN top t ON s.group_key = t.group_key AND s.parent = t.stage GROUP BY s.group_key
)
SELECT e.group_key, e.stage_set,
       CASE WHEN NOT e.significant THEN 'no significant change'
            WHEN e.change_ns > 0 THEN 'slower' ELSE 'faster' END AS verdict,
       e.base_ns AS e2e_base_ns, e.run_ns AS e2e_run_ns, e.lad AS e2e_lad, e.lad_lo AS e2e_lad_lo,
       e.lad_hi AS e2e_lad_hi, e.change_ns AS e2e_change_ns, e.change_lo_ns AS e2e_change_lo_ns,
       e.change_hi_ns AS e2e_change_hi_ns, e.reps_base, e.reps_run,
       e.between_change_lo_ns AS e2e_between_lo_ns, e.between_change_hi_ns AS e2e_between_hi_ns,
       t.stage AS top_stage, c.stage AS child_stage, t.change_ns, t.change_lo_ns, t.change_hi_ns,
       t.lad, t.lad_lo, t.lad_hi, t.share,
       amp.amplified_stage, amp.amplified_lad, amp.amplified_lad_lo, amp.amplified_lad_hi, amp.amplified_change_ns,
       dir.sub_ns, dir.comp_ns
FROM e LEFT JOIN top t USING (group_key) LEFT JOIN child c USING (group_key) LEFT JOIN amp USING (group_key)
LEFT JOIN dir USING (group_key);

-- cmp_group_queue_change: one row per group: how crowded its I/Os' transport queues were in
-- the run against the base (cmp_queue_evidence; a group the base lacks counts from 0).
--   group_key
--   other_cpu_growth     commands ahead from another CPU: run - base (commands)
--   other_bytes_growth   bytes of other streams ahead on the same queue: run - base (bytes)
--   device_bytes_growth  bytes of other streams ahead on the same device: run - base (bytes)
--   base_ahead, run_ahead   commands in flight ahead on the same queue, per side
--   base_queues, run_queues distinct queues the group used, per side
--   run_cpus             distinct submitting CPUs in the run
CREATE OR REPLACE VIEW cmp_group_queue_change AS
SELECT group_key,
       max(other_cpu_cmds_mean) FILTER (WHERE run = 'run') - coalesce(max(other_cpu_cmds_mean) FILTER (WHERE run = 'base'), 0) AS other_cpu_growth,
       max(other_stream_bytes_mean) FILTER (WHERE run = 'run') - coalesce(max(other_stream_bytes_mean) FILTER (WHERE run = 'base'), 0) AS other_bytes_growth,
       max(device_other_bytes_mean) FILTER (WHERE run = 'run') - coalesce(max(device_other_bytes_mean) FILTER (WHERE run = 'base'), 0) AS device_bytes_growth,
       max(ahead_cmds_mean) FILTER (WHERE run = 'run') AS run_ahead, max(ahead_cmds_mean) FILTER (WHERE run = 'base') AS base_ahead,
       max(queues) FILTER (WHERE run = 'run') AS run_queues, max(queues) FILTER (WHERE run = 'base') AS base_queues,
       max(cpus) FILTER (WHERE run = 'run') AS run_cpus
FROM cmp_queue_evidence GROUP BY group_key;

-- cmp_run_change: one row: what each side's runs recorded beside the I/Os (cmp_run_info), base
-- against run: the causes' evidence that is not per group. base_* / run_* are that side's
-- (mean over its repeats; NULL when its runs did not record it).
--   synced             every run's clocks synchronized (cmp_run_info.clock_synced)
--   unc_ns             the largest clock-offset uncertainty of any run (ns)
--   base_local_per_s, run_local_per_s   the target's own I/O on its devices (requests/s, max)
--   base_digest, run_digest   NVMe/TCP digests ('none', 'header', 'data', 'header,data'; max)
--   base_tw, run_tw, base_iw, run_iw   mean wait of the target's / initiator's io_work for its CPU (ns)
--   base_trx, run_trx, base_irx, run_irx   the same of the NET_RX softirq (ns)
--   base_other_bps, run_other_bps   TCP traffic that is not NVMe/TCP on the NVMe/TCP path (bytes/s)
--   run_nvme_bps       NVMe/TCP's data rate in the run (bytes/s)
--   run_other_path, run_other_top_flow   the run's path interface and its largest other flow (text)
--   base_srtt_us, run_srtt_us   the NVMe/TCP connections' smoothed round trip (nvme_srtt_us, us)
--   base_outages, run_outages   controller outages per run (outages)
--   run_outage_max_ns, run_outage_ios_held   the run's longest outage (ns) and the I/Os they held
CREATE OR REPLACE VIEW cmp_run_change AS
SELECT bool_and(clock_synced) AS synced, max(offset_uncertainty_ns) AS unc_ns,
       max(target_local_io_per_s) FILTER (WHERE run = 'base') AS base_local_per_s,
       max(target_local_io_per_s) FILTER (WHERE run = 'run') AS run_local_per_s,
       max(digest) FILTER (WHERE run = 'base') AS base_digest,
       max(digest) FILTER (WHERE run = 'run') AS run_digest,
       avg(target_io_work_wait_ns) FILTER (WHERE run = 'base') AS base_tw,
       avg(target_io_work_wait_ns) FILTER (WHERE run = 'run') AS run_tw,
       avg(initiator_io_work_wait_ns) FILTER (WHERE run = 'base') AS base_iw,
       avg(initiator_io_work_wait_ns) FILTER (WHERE run = 'run') AS run_iw,
       avg(target_net_rx_wait_ns) FILTER (WHERE run = 'base') AS base_trx,
       avg(target_net_rx_wait_ns) FILTER (WHERE run = 'run') AS run_trx,
       avg(initiator_net_rx_wait_ns) FILTER (WHERE run = 'base') AS base_irx,
       avg(initiator_net_rx_wait_ns) FILTER (WHERE run = 'run') AS run_irx,
       avg(other_traffic_bytes_per_s) FILTER (WHERE run = 'base') AS base_other_bps,
       avg(other_traffic_bytes_per_s) FILTER (WHERE run = 'run') AS run_other_bps,
       avg(nvme_data_bytes_per_s) FILTER (WHERE run = 'run') AS run_nvme_bps,
       min(other_traffic_path) FILTER (WHERE run = 'run') AS run_other_path,
       min(other_traffic_top_flow) FILTER (WHERE run = 'run') AS run_other_top_flow,
       avg(nvme_srtt_us) FILTER (WHERE run = 'base') AS base_srtt_us,
       avg(nvme_srtt_us) FILTER (WHERE run = 'run') AS run_srtt_us,
       avg(outages) FILTER (WHERE run = 'base') AS base_outages,
       avg(outages) FILTER (WHERE run = 'run') AS run_outages,
       max(outage_max_ns) FILTER (WHERE run = 'run') AS run_outage_max_ns,
       avg(outage_ios_held) FILTER (WHERE run = 'run') AS run_outage_ios_held
FROM cmp_run_info;

-- cmp_group_cpu_wait: one row per group: how long, per I/O, its queue's NVMe/TCP work waited for
-- each host's CPU while the I/O was between the hosts (cmp_io's io_cpu_wait columns), the
-- group's mean per side (ns; NULL when that side did not record cpu_wait).
--   group_key
--   base_t_io, run_t_io   the target's CPU
--   base_i_io, run_i_io   the initiator's CPU
CREATE OR REPLACE VIEW cmp_group_cpu_wait AS
SELECT group_key,
       avg(target_cpu_wait_ns) FILTER (WHERE run = 'base') AS base_t_io,
       avg(target_cpu_wait_ns) FILTER (WHERE run = 'run') AS run_t_io,
       avg(initiator_cpu_wait_ns) FILTER (WHERE run = 'base') AS base_i_io,
       avg(initiator_cpu_wait_ns) FILTER (WHERE run = 'run') AS run_i_io
FROM cmp_io_keyed GROUP BY 1;

-- cmp_cause: one row per group of cmp_group_change: the evidence each cause is read from and
-- the cause it gives. cmp_group_change's columns, then those of cmp_group_queue_change,
-- cmp_run_change and cmp_group_cpu_wait that the causes read, and:
--   cstage             the stage the cause is read from: the bottleneck (its dominant child
--                      when it has one), or without an end-to-end change the amplified stage
--   queue_shared_by_cpus, queue_shared_by_streams, device_shared_by_streams   the queue or device
--                      got crowded since the base (a command from another CPU, >= 4 KiB of
--                      other streams ahead of the average I/O)
--   device_busier      the target's own I/O on its devices grew by >= 10 requests/s
--   digest_added       digests turned on (or more of them) since the base
--   target_cpu_late, initiator_cpu_late   that side's CPU wait per I/O grew enough (cpu_late)
--   other_traffic_grew other TCP traffic on the NVMe/TCP path grew (cmp_params.nic_other_min_share)
--   ccat, cside        category and side of cstage (stage_definitions)
--   acat               category of the amplified stage
--   transport_or_network  cstage or the amplified stage is where queue crowding shows
--   cause_id           cause_ids.cause_id ('none' without a stage to read it from)
--   dir                for a network cause: 'submission' / 'completion' / 'both', 'unknown'
--                      off a synchronized clock or on a one-host round trip; NULL otherwise
CREATE OR REPLACE VIEW cmp_cause AS
WITH k AS (
    SELECT g.*, q.* EXCLUDE (group_key), r.synced, r.unc_ns,
           -- the stage the cause is read from: the bottleneck (its dominant child when it
           -- has one), or without an end-to-end change the amplified stage
           CASE WHEN g.verdict = 'no significant change' THEN g.amplified_stage
                ELSE coalesce(g.child_stage, g.top_stage) END AS cstage,
           -- transport queue crowding: a command from another CPU, or >= 4 KiB of another
           -- stream, ahead of the average I/O on its queue, that the base did not have
           coalesce(q.other_cpu_growth >= 0.5, false) AS queue_shared_by_cpus,
           coalesce(q.other_bytes_growth >= 4096, false) AS queue_shared_by_streams,
           coalesce(q.device_bytes_growth >= 4096, false) AS device_shared_by_streams,
           -- a busier device: the target's own I/O on it grew (>= 10 requests/s more than the base)
           coalesce(r.run_local_per_s - coalesce(r.base_local_per_s, 0) >= 10, false) AS device_busier,
           r.base_local_per_s, r.run_local_per_s,
           -- digests turned on (or more of them) since the base, both runs' settings known
           coalesce(r.run_digest <> r.base_digest AND r.run_digest <> 'none'
                    AND length(r.run_digest) >= length(replace(r.base_digest, 'none', '')), false) AS digest_added,
           r.base_digest, r.run_digest,
           -- a side's NVMe/TCP work (io_work, NET_RX softirq) waited longer for its CPU while the
           -- I/Os were between the hosts (capture key cpu_wait), per I/O by at least
           -- cpu_wait_min_share of the bottleneck's change: that CPU is where the time went (a
           -- busy network also makes the CPUs wait, less: see cmp_params)
           cpu_late(cw.base_t_io, cw.run_t_io, g.change_ns, p) AS target_cpu_late,
           cpu_late(cw.base_i_io, cw.run_i_io, g.change_ns, p) AS initiator_cpu_late,
           cw.base_t_io, cw.run_t_io, cw.base_i_io, cw.run_i_io,
           r.base_tw, r.run_tw, r.base_iw, r.run_iw, r.base_trx, r.run_trx, r.base_irx, r.run_irx,
           -- traffic that is not NVMe/TCP on the NVMe/TCP path's interface grew (capture key
           -- net_flows, both runs): by >= nic_other_min_share of all the path carried in the run
           coalesce(r.run_other_bps - r.base_other_bps
                    >= p.nic_other_min_share * (r.run_other_bps + coalesce(r.run_nvme_bps, 0)), false) AS other_traffic_grew,
           r.base_other_bps, r.run_other_bps, r.run_nvme_bps, r.run_other_path, r.run_other_top_flow,
           r.base_srtt_us, r.run_srtt_us,
           -- the run had controller outages the base did not (a reset, a reconnect): the I/O
           -- they held is the slowdown, whichever stage it shows in
           coalesce(r.run_outages, 0) > coalesce(r.base_outages, 0) AS outage_added,
           r.base_outages, r.run_outages, r.run_outage_max_ns, r.run_outage_ios_held,
           -- one path's network and target time grew, the other paths' did not (native
           -- multipath: cmp_degraded_path)
           dp.path AS degraded_path, dp.base_ns AS path_base_ns, dp.run_ns AS path_run_ns,
           dp.others_change_ns AS other_paths_change_ns
    FROM cmp_group_change g LEFT JOIN cmp_group_queue_change q USING (group_key)
    LEFT JOIN cmp_degraded_path dp ON dp.stage_set = g.stage_set
    LEFT JOIN cmp_run_change r ON true
    LEFT JOIN cmp_group_cpu_wait cw ON cw.group_key = g.group_key, cmp_params p
), cat AS (
    -- where each stage's time goes (stage_definitions, the one stage table)
    SELECT stage_set, stage, category, side FROM stage_definitions
), c AS (
    SELECT k.*, cc.category AS ccat, cc.side AS cside, ac.category AS acat,
           -- the initiator transport queue's own stage, or the connection behind it (network,
           -- or the stock fabric stages that hold both): where queue crowding shows
           -- (without the target, its estimated side too: the initiator's TCP stamps the segments
           -- when it processes them, which a crowded queue's io_work delays)
           coalesce(cc.category IN ('transport_queue', 'network', 'fabric', 'target_side'), false)
             OR coalesce(ac.category = 'transport_queue', false)
             -- fewer queues than the base: one queue's io_work also receives every CPU's
             -- responses and completes them on the submitter's CPU, so the initiator's
             -- completion stage is where it amplifies (lab fs-ext4 queues=1: LAD 46-140)
             OR coalesce(ac.category = 'host_cpu' AND ac.side = 'initiator' AND k.run_queues < k.base_queues, false)
             AS transport_or_network
    FROM k
    LEFT JOIN cat cc ON cc.stage_set = k.stage_set AND cc.stage = k.cstage
    LEFT JOIN cat ac ON ac.stage_set = k.stage_set AND ac.stage = k.amplified_stage
)
SELECT c.*,
       CASE WHEN verdict = 'slower' AND outage_added THEN 'controller_reset'
            WHEN ccat IS NULL THEN 'none'
            WHEN verdict = 'slower' AND degraded_path IS NOT NULL
                 AND ccat IN ('network', 'fabric', 'target_cpu', 'target', 'target_device', 'target_side') THEN 'path_degraded'
            -- digests are computed where PDUs are built and parsed: both transports
            -- (CPU) and what the clock-free network stage spans on their way
            -- (work added: never the cause of a faster run)
            WHEN digest_added AND verdict <> 'faster'
                 AND ccat IN ('network', 'fabric', 'transport_queue', 'target_cpu', 'host_cpu') THEN 'digest'
            WHEN transport_or_network AND queue_shared_by_cpus THEN 'few_queues'
            WHEN transport_or_network AND (queue_shared_by_streams OR device_shared_by_streams) THEN 'interference'
            -- other traffic on the NVMe/TCP path's interface grew: the network time is the
            -- link's (or the hosts' network stacks') share of it; a CPU that waited meanwhile
            -- was busy with that traffic (checked before the CPU rules)
            WHEN verdict <> 'faster' AND other_traffic_grew AND ccat IN ('network', 'fabric') THEN 'nic_contention'
            -- a side whose NVMe/TCP work waited far longer for its CPU: commands wait in
            -- the target's socket for its receive softirq (network to the clock-free stages)
            WHEN verdict = 'slower' AND target_cpu_late
                 AND ccat IN ('network', 'fabric', 'target_cpu', 'target') THEN 'target_cpu'
            WHEN verdict = 'slower' AND initiator_cpu_late
                 AND ccat IN ('network', 'fabric', 'transport_queue', 'host_cpu') THEN 'io_cpu_contention'
            WHEN ccat IN ('network', 'fabric') THEN 'slow_network'
            WHEN ccat = 'transport_queue' THEN 'host_transport'
            WHEN ccat = 'target_device' THEN CASE WHEN device_busier THEN 'busy_device' ELSE 'slow_device' END
            ELSE ccat END AS cause_id,
       -- one-way split of a network change: only on a synchronized clock, and not from a
       -- round trip measured on one host (the R2T wait: both ends on the target; the
       -- initiator's estimate up to the target's ACK)
       CASE WHEN ccat IS NULL OR ccat NOT IN ('network', 'fabric') THEN NULL
            WHEN NOT synced OR cside IN ('target', 'initiator') THEN 'unknown'
            WHEN coalesce(sub_ns, 0) >= 0.7 * change_ns THEN 'submission'
            WHEN coalesce(comp_ns, 0) >= 0.7 * change_ns THEN 'completion'
            ELSE 'both' END AS dir
FROM c;

-- cmp_verdict: one row per group present in both runs: what changed and the likely cause, in
-- words (cmp_cause's numbers and cause_id, cause_ids' text).
--   group_key, stage_set
--   verdict            'slower', 'faster' or 'no significant change' (end-to-end mean: its
--                      CI includes no change, or the change is below cmp_params' minimums);
--                      'no verdict' when cmp_input_problems has a row (evidence says which)
--   e2e_base_ns, e2e_run_ns, e2e_lad, e2e_lad_lo, e2e_lad_hi, e2e_change_ns   (mean, ns)
--   bottleneck_stage   top-level stage whose mean changed most in the direction of the
--                      end-to-end change (NULL when no significant change)
--   detail_stage       its child stage that carries most of that change, if any
--   stage_change_ns, stage_change_lo_ns, stage_change_hi_ns, stage_lad, stage_lad_lo, stage_lad_hi
--   share              bottleneck's share of the end-to-end change (0..1)
--   amplified_stage    the stage (any level) with the highest LAD of the mean among the
--                      significant ones that carry >= 5% of the end-to-end change: the queue
--                      that built up most (the paper's LAD localization; a small stage can
--                      amplify 30x while most added time sits elsewhere)
--   amplified_lad, amplified_lad_lo, amplified_lad_hi   its LAD of the mean and CI (cmp_params.confidence)
--   network_direction  kept for compatibility: direction when the verdict names a change
--   cause              in a storage engineer's words (cause_ids.meaning + this run's specifics)
--   evidence           one sentence: which stage, by how much, how sure
--   cause_id           cause_ids.cause_id: read from the category (stage_definitions) of the
--                      stage the cause is read from, with the queue, stream, target-device and digest
--                      evidence; 'none' without a change, 'input_error' without a verdict
--   direction          for a network cause: 'submission' / 'completion' / 'both' on a
--                      synchronized clock (the stage's children), else 'unknown'; NULL otherwise
--   reps_base, reps_run   runs per side (repeats: `compare base1,base2 run1,run2`)
--   target_cpu_wait_base_ns, target_cpu_wait_run_ns, initiator_cpu_wait_base_ns,
--   initiator_cpu_wait_run_ns   the group's mean CPU wait per I/O on that host (io_cpu_wait,
--                      ns; NULL when a run did not record cpu_wait): the target_cpu and
--                      io_cpu_contention evidence
--   other_traffic_base_bytes_per_s, other_traffic_run_bytes_per_s   TCP traffic that is not
--                      NVMe/TCP on the NVMe/TCP path (run_other_traffic; NULL when a run did not
--                      record net_flows): the nic_contention evidence
--   degraded_path      for path_degraded: the path (io.path) whose network and target time grew
--                      alone (cmp_degraded_path); NULL otherwise
--   offending_tenant, offending_class   for a cause that is traffic sharing the path
--                      (interference, few_queues, busy_device, target_side, target_cpu,
--                      nic_contention): the tenant whose bytes grew most since the base and its
--                      class (cmp_tenant_growth; NULL otherwise or without tenants)
CREATE OR REPLACE VIEW cmp_verdict AS
-- an inconsistent input (cmp_input_problems) gets no verdict, whatever its numbers say
SELECT j.* REPLACE (
           CASE WHEN p.problems IS NULL THEN j.verdict ELSE 'no verdict' END AS verdict,
           CASE WHEN p.problems IS NULL THEN j.bottleneck_stage END AS bottleneck_stage,
           CASE WHEN p.problems IS NULL THEN j.detail_stage END AS detail_stage,
           CASE WHEN p.problems IS NULL THEN j.network_direction END AS network_direction,
           CASE WHEN p.problems IS NULL THEN j.cause ELSE 'no verdict: the input cannot support one' END AS cause,
           CASE WHEN p.problems IS NULL THEN j.evidence ELSE p.problems END AS evidence,
           CASE WHEN p.problems IS NULL THEN j.cause_id ELSE 'input_error' END AS cause_id,
           CASE WHEN p.problems IS NULL THEN j.direction END AS direction)
FROM (SELECT string_agg(run || ' ' || problem, '; ' ORDER BY run) AS problems FROM cmp_input_problems) p,
(SELECT d.group_key, d.stage_set, d.verdict, d.e2e_base_ns, d.e2e_run_ns, d.e2e_lad, d.e2e_lad_lo, d.e2e_lad_hi,
       d.e2e_change_ns, d.e2e_change_lo_ns, d.e2e_change_hi_ns,
       CASE WHEN d.verdict <> 'no significant change' THEN d.top_stage END AS bottleneck_stage,
       CASE WHEN d.verdict <> 'no significant change' THEN d.child_stage END AS detail_stage,
       d.change_ns AS stage_change_ns, d.change_lo_ns AS stage_change_lo_ns, d.change_hi_ns AS stage_change_hi_ns,
       d.lad AS stage_lad, d.lad_lo AS stage_lad_lo, d.lad_hi AS stage_lad_hi, d.share,
       d.amplified_stage, d.amplified_lad, d.amplified_lad_lo, d.amplified_lad_hi,
       CASE WHEN d.verdict <> 'no significant change' THEN d.dir END AS network_direction,
       -- the cause in words: the cause_ids text, with what this run adds to it; for a faster
       -- run it is what slowed the base, said so (a cause sentence never contradicts the verdict)
       CASE WHEN d.verdict = 'faster' AND d.cause_id NOT IN ('none', 'input_error')
            THEN 'the run is faster in ' || coalesce(d.child_stage, d.top_stage) || ': the base was the slower side there (what slowed the base: '
            ELSE '' END ||
       CASE WHEN d.cause_id = 'few_queues' AND d.queue_shared_by_streams
                 THEN ci.meaning || ' (other streams'' commands ahead of them: a shared transport queue)'
            WHEN d.cause_id = 'interference' AND NOT (d.queue_shared_by_streams AND d.transport_or_network)
                 THEN 'interference from other streams on the same device but other queues: they share the network path and the target''s CPUs and device, not the transport queue'
            WHEN d.cause_id = 'interference'
                 THEN 'shared transport queue: other streams'' commands (bytes) are ahead of this one on its nvme-tcp queue'
            WHEN d.cause_id = 'slow_network' AND d.cside = 'target'
                 THEN 'network path for write data: the R2T round trip (R2T to the initiator, H2CData back) grew, not the target''s CPU; direction unknown from this stage'
            WHEN d.cause_id IN ('slow_network', 'nic_contention') AND d.cside = 'initiator'
                 THEN ci.meaning || ': ' || coalesce(d.cstage, d.top_stage) || ' grew (the target was not traced: estimated on the '
                      || 'initiator from the target''s TCP ACKs and the responses'' segments), direction unknown from one host; '
                      || 'a target whose CPU leaves its TCP stack waiting delays its ACKs alike: from the initiator alone the two look the same'
                      || CASE WHEN d.cause_id = 'nic_contention' THEN '; TCP traffic that is not NVMe/TCP on the path ' || mbps_text(d.base_other_bps)
                                   || ' -> ' || mbps_text(d.run_other_bps) || coalesce(', most of it ' || d.run_other_top_flow, '') ELSE '' END
            WHEN d.cause_id = 'slow_network'
                 THEN ci.meaning || ', direction ' ||
                      CASE d.dir WHEN 'submission' THEN 'initiator->target' WHEN 'completion' THEN 'target->initiator'
                                 WHEN 'both' THEN 'both ways' ELSE 'unknown (hosts traced with their own clocks)' END
                      || CASE WHEN d.ccat = 'fabric' THEN '; on stock kernels this stage also holds both nvme-tcp transports and the target''s nvmet-tcp CPU work' ELSE '' END
            WHEN d.cause_id = 'digest'
                 THEN ci.meaning || ': ' || coalesce(d.base_digest, '?') || ' -> ' || d.run_digest
            WHEN d.cause_id = 'controller_reset'
                 THEN ci.meaning || printf(': %d outage(s) a run (the base %d), the longest %.1f s without an answer, %d I/Os held (recovery.json)',
                                           d.run_outages::BIGINT, coalesce(d.base_outages, 0)::BIGINT,
                                           d.run_outage_max_ns / 1e9, d.run_outage_ios_held::BIGINT)
            WHEN d.cause_id = 'path_degraded'
                 THEN ci.meaning || printf(': %s, its network and target time %.0f -> %.0f us an I/O (mean), the other paths %+.0f us',
                                           d.degraded_path, d.path_base_ns / 1e3, d.path_run_ns / 1e3, d.other_paths_change_ns / 1e3)
            WHEN d.cause_id = 'target_cpu'
                 THEN ci.meaning || ': NVMe/TCP''s work waited longer for the target''s CPU, '
                      || cpu_wait_io_text(d.base_t_io, d.run_t_io, d.change_ns, d.top_stage)
                      || coalesce('; ' || nullif(cpu_wait_text(d.base_tw, d.run_tw, d.base_trx, d.run_trx), '') || ' per run', '')
                      || ', and ' || coalesce(d.cstage, d.top_stage) || ' built up'
            WHEN d.cause_id = 'io_cpu_contention'
                 THEN ci.meaning || ': NVMe/TCP''s work waited longer for the initiator''s CPU, '
                      || cpu_wait_io_text(d.base_i_io, d.run_i_io, d.change_ns, d.top_stage)
                      || coalesce('; ' || nullif(cpu_wait_text(d.base_iw, d.run_iw, d.base_irx, d.run_irx), '') || ' per run', '')
            WHEN d.cause_id = 'nic_contention'
                 THEN ci.meaning || ': TCP traffic that is not NVMe/TCP on the NVMe/TCP path ('
                      || coalesce(d.run_other_path, '?') || ') ' || mbps_text(d.base_other_bps) || ' -> ' || mbps_text(d.run_other_bps)
                      || ' beside NVMe/TCP''s ' || mbps_text(coalesce(d.run_nvme_bps, 0)) || ' of data'
                      || coalesce(', most of it ' || d.run_other_top_flow, '') || ', direction '
                      || CASE d.dir WHEN 'submission' THEN 'initiator->target' WHEN 'completion' THEN 'target->initiator'
                                    WHEN 'both' THEN 'both ways' ELSE 'unknown (hosts traced with their own clocks)' END
            ELSE ci.meaning END ||
       CASE WHEN d.verdict = 'slower' AND g.tenant IS NOT NULL
            THEN printf('; the traffic that grew most since the base: tenant %s%s, %.1f -> %.1f MB a run',
                        g.tenant, coalesce(' (class ' || g.class || ')', ''), g.base_bytes / 1e6, g.run_bytes / 1e6)
            ELSE '' END ||
       CASE WHEN d.verdict = 'faster' AND d.cause_id NOT IN ('none', 'input_error') THEN ')' ELSE '' END AS cause,
       CASE WHEN d.verdict = 'no significant change' THEN
              printf('end_to_end mean %.0f us -> %.0f us (LAD %.2f, %s CI %.2f-%.2f): within noise',
                     d.e2e_base_ns / 1e3, d.e2e_run_ns / 1e3, d.e2e_lad, cmp_ci_level(), d.e2e_lad_lo, d.e2e_lad_hi)
              || CASE WHEN d.e2e_between_lo_ns IS NOT NULL THEN
                      printf(' (%d and %d runs per side: between runs the change is %+.0f..%+.0f us, run-to-run variation)',
                             d.reps_base, d.reps_run, d.e2e_between_lo_ns / 1e3, d.e2e_between_hi_ns / 1e3)
                 ELSE '' END
              || CASE WHEN d.amplified_stage IS NOT NULL THEN
                      printf('; but %s mean %+.0f us, LAD %.2f [%.2f-%.2f]: other stages absorbed it',
                             d.amplified_stage, d.amplified_change_ns / 1e3, d.amplified_lad, d.amplified_lad_lo, d.amplified_lad_hi)
                      || CASE WHEN d.transport_or_network THEN printf('; commands ahead on the same queue %.1f -> %.1f (from other CPUs %+.1f), queues used %d -> %d',
                             coalesce(d.base_ahead, 0), coalesce(d.run_ahead, 0), coalesce(d.other_cpu_growth, 0), coalesce(d.base_queues, 0), coalesce(d.run_queues, 0)) ELSE '' END
                 ELSE '' END
            ELSE printf('%s%s mean %+.0f us (%s CI %+.0f..%+.0f us, LAD %.2f [%.2f-%.2f]) of end_to_end %+.0f us (LAD %.2f [%.2f-%.2f]): %.0f%% of the change',
                     d.top_stage, CASE WHEN d.child_stage IS NOT NULL THEN ' (mostly ' || d.child_stage || ')' ELSE '' END,
                     d.change_ns / 1e3, cmp_ci_level(), d.change_lo_ns / 1e3, d.change_hi_ns / 1e3, coalesce(d.lad, 'NaN'::DOUBLE), coalesce(d.lad_lo, 'NaN'::DOUBLE), coalesce(d.lad_hi, 'NaN'::DOUBLE),
                     d.e2e_change_ns / 1e3, d.e2e_lad, d.e2e_lad_lo, d.e2e_lad_hi, 100 * d.share)
              || CASE WHEN d.amplified_stage IS NOT NULL AND d.amplified_stage <> d.top_stage
                      THEN printf('; most amplified: %s LAD %.2f [%.2f-%.2f]', d.amplified_stage, d.amplified_lad, d.amplified_lad_lo, d.amplified_lad_hi)
                      ELSE '' END
              || CASE WHEN d.transport_or_network THEN printf('; commands ahead on the same queue %.1f -> %.1f, other streams'' KiB ahead on the same device %+.0f, queues used %d -> %d',
                     coalesce(d.base_ahead, 0), coalesce(d.run_ahead, 0), coalesce(d.device_bytes_growth, 0) / 1024, coalesce(d.base_queues, 0), coalesce(d.run_queues, 0)) ELSE '' END
              || CASE WHEN d.ccat = 'target_device' THEN printf('; the target''s own I/O on the device %.0f -> %.0f requests/s',
                     coalesce(d.base_local_per_s, 0), coalesce(d.run_local_per_s, 0)) ELSE '' END
              || CASE WHEN d.ccat IN ('network', 'fabric') AND d.base_other_bps IS NOT NULL AND d.run_other_bps IS NOT NULL
                      THEN '; other TCP traffic on the NVMe/TCP path ' || mbps_text(d.base_other_bps) || ' -> ' || mbps_text(d.run_other_bps)
                           || ' (NVMe/TCP data ' || mbps_text(coalesce(d.run_nvme_bps, 0)) || ')'
                           || coalesce(', largest flow ' || d.run_other_top_flow, '') ELSE '' END
              || CASE WHEN d.ccat IN ('network', 'fabric', 'target_side') AND d.base_srtt_us IS NOT NULL AND d.run_srtt_us IS NOT NULL
                      THEN printf('; the NVMe/TCP connections'' smoothed round trip (the kernel''s srtt, median) %.0f -> %.0f us',
                                  d.base_srtt_us, d.run_srtt_us) ELSE '' END
              || coalesce('; target CPU wait: ' || nullif(concat_ws(', ', nullif(cpu_wait_io_text(d.base_t_io, d.run_t_io, d.change_ns, d.top_stage), ''),
                                                                     nullif(cpu_wait_text(d.base_tw, d.run_tw, d.base_trx, d.run_trx) || ' per run', ' per run')), ''), '')
              || coalesce('; initiator CPU wait: ' || nullif(concat_ws(', ', nullif(cpu_wait_io_text(d.base_i_io, d.run_i_io, d.change_ns, d.top_stage), ''),
                                                                        nullif(cpu_wait_text(d.base_iw, d.run_iw, d.base_irx, d.run_irx) || ' per run', ' per run')), ''), '')
       END AS evidence,
       d.cause_id,
       d.dir AS direction,
       d.reps_base, d.reps_run,
       d.base_t_io AS target_cpu_wait_base_ns, d.run_t_io AS target_cpu_wait_run_ns,
       d.base_i_io AS initiator_cpu_wait_base_ns, d.run_i_io AS initiator_cpu_wait_run_ns,
       d.base_other_bps AS other_traffic_base_bytes_per_s, d.run_other_bps AS other_traffic_run_bytes_per_s,
       CASE WHEN d.cause_id = 'path_degraded' THEN d.degraded_path END AS degraded_path,
       CASE WHEN d.verdict = 'slower' THEN g.tenant END AS offending_tenant,
       CASE WHEN d.verdict = 'slower' THEN g.class END AS offending_class
FROM cmp_cause d LEFT JOIN cause_ids ci USING (cause_id)
-- (the growth is named only where others' traffic is the cause)
LEFT JOIN cmp_tenant_growth g ON d.cause_id IN ('interference', 'few_queues', 'busy_device', 'target_side', 'target_cpu',
                                                'nic_contention')) j;
