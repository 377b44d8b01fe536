-- cmp_queue_evidence: one row per (run, group): how crowded the I/Os' transport queues
-- were when they were submitted (from intf_io_ahead of each run, copied into cmp_source).
--   run, group_key
--   ios                    I/Os of the group
--   ahead_cmds_mean        commands in flight ahead on the same queue (any stream)
--   other_cpu_cmds_mean    of those, submitted from another CPU (queue shared across CPUs)
--   other_stream_bytes_mean  bytes ahead from other streams on the same queue (bytes)
--   device_other_bytes_mean  bytes ahead from other streams on the same device (bytes)
--   queues, cpus           distinct queues and submitting CPUs of the group
CREATE OR REPLACE VIEW cmp_queue_evidence AS
SELECT run, 'type=' || coalesce(io_type, '?') || ', size=' || size_bytes AS group_key,
       count(*) AS ios, avg(queue_ahead_cmds) AS ahead_cmds_mean,
       avg(queue_other_cpu_cmds) AS other_cpu_cmds_mean, avg(queue_other_bytes) AS other_stream_bytes_mean,
       avg(device_other_bytes) AS device_other_bytes_mean,
       count(DISTINCT qid) AS queues, count(DISTINCT cpu) AS cpus
FROM (SELECT DISTINCT run, io_id, io_type, size_bytes, qid, cpu, queue_ahead_cmds, queue_other_cpu_cmds, queue_other_bytes, device_other_bytes
      FROM cmp_source)
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

-- cmp_verdict: one row per group present in both runs: what changed and the likely cause.
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
--   amplified_lad, amplified_lad_lo, amplified_lad_hi   its LAD of the mean and 95% CI
--   network_direction  for network stages: 'unknown' unless both hosts traced with a
--                      synchronized clock (then 'submission' / 'completion' / 'both')
--   cause              in a storage engineer's words
--   evidence           one sentence: which stage, by how much, how sure
CREATE OR REPLACE VIEW cmp_verdict AS
-- an inconsistent input (cmp_input_problems) gets no verdict, whatever its numbers say
SELECT j.* REPLACE (
           CASE WHEN p.problems IS NULL THEN j.verdict ELSE 'no verdict' END AS verdict,
           CASE WHEN p.problems IS NULL THEN j.bottleneck_stage END AS bottleneck_stage,
           CASE WHEN p.problems IS NULL THEN j.detail_stage END AS detail_stage,
           CASE WHEN p.problems IS NULL THEN j.network_direction END AS network_direction,
           CASE WHEN p.problems IS NULL THEN j.cause ELSE 'no verdict: the input cannot support one' END AS cause,
           CASE WHEN p.problems IS NULL THEN j.evidence ELSE p.problems END AS evidence)
FROM (SELECT string_agg(run || ' ' || problem, '; ' ORDER BY run) AS problems FROM cmp_input_problems) p,
(WITH e AS (
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
), q AS (
    SELECT group_key,
           max(other_cpu_cmds_mean) FILTER (WHERE run = 'run') - coalesce(max(other_cpu_cmds_mean) FILTER (WHERE run = 'base'), 0) AS other_cpu_growth,
           max(other_stream_bytes_mean) FILTER (WHERE run = 'run') - coalesce(max(other_stream_bytes_mean) FILTER (WHERE run = 'base'), 0) AS other_bytes_growth,
           max(device_other_bytes_mean) FILTER (WHERE run = 'run') - coalesce(max(device_other_bytes_mean) FILTER (WHERE run = 'base'), 0) AS device_bytes_growth,
           max(ahead_cmds_mean) FILTER (WHERE run = 'run') AS run_ahead, max(ahead_cmds_mean) FILTER (WHERE run = 'base') AS base_ahead,
           max(queues) FILTER (WHERE run = 'run') AS run_queues, max(queues) FILTER (WHERE run = 'base') AS base_queues,
           max(cpus) FILTER (WHERE run = 'run') AS run_cpus
    FROM cmp_queue_evidence GROUP BY group_key
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
), clk AS (
    SELECT bool_and(clock_synced) AS synced, max(offset_uncertainty_ns) AS unc_ns FROM cmp_run_info
), dir AS (
    -- one-way split of a network change, only meaningful on a synchronized clock
    SELECT s.group_key,
           max(s.change_ns) FILTER (WHERE s.direction = 'S') AS sub_ns,
           max(s.change_ns) FILTER (WHERE s.direction = 'C') AS comp_ns
    FROM cmp_stage_share s JOIN top t ON s.group_key = t.group_key AND s.parent = t.stage GROUP BY s.group_key
), v AS (
    SELECT e.group_key, e.stage_set,
           CASE WHEN NOT e.significant THEN 'no significant change'
                WHEN e.change_ns > 0 THEN 'slower' ELSE 'faster' END AS verdict,
           e.base_ns AS e2e_base_ns, e.run_ns AS e2e_run_ns, e.lad AS e2e_lad, e.lad_lo AS e2e_lad_lo,
           e.lad_hi AS e2e_lad_hi, e.change_ns AS e2e_change_ns, e.change_lo_ns AS e2e_change_lo_ns,
           e.change_hi_ns AS e2e_change_hi_ns,
           t.stage AS top_stage, c.stage AS child_stage, t.change_ns, t.change_lo_ns, t.change_hi_ns,
           t.lad, t.lad_lo, t.lad_hi, t.share, q.*, clk.synced, clk.unc_ns, dir.sub_ns, dir.comp_ns,
           amp.amplified_stage, amp.amplified_lad, amp.amplified_lad_lo, amp.amplified_lad_hi, amp.amplified_change_ns
    FROM e LEFT JOIN top t USING (group_key) LEFT JOIN child c USING (group_key) LEFT JOIN amp USING (group_key)
    LEFT JOIN q USING (group_key) LEFT JOIN dir USING (group_key), clk
), k AS (
    SELECT *,
           -- transport queue crowding: a command from another CPU, or >= 4 KiB of another
           -- stream, ahead of the average I/O on its queue, that the base did not have
           coalesce(other_cpu_growth >= 0.5, false) AS queue_shared_by_cpus,
           coalesce(other_bytes_growth >= 4096, false) AS queue_shared_by_streams,
           coalesce(device_bytes_growth >= 4096, false) AS device_shared_by_streams,
           -- the initiator transport queue's own stages, or the connection behind it: with one
           -- queue for several CPUs, completions are also handled on the queue's CPU and bounce back
           -- the stage the cause is read from: the bottleneck, or without an end-to-end
           -- change the amplified stage
           CASE WHEN verdict = 'no significant change' THEN amplified_stage ELSE top_stage END AS cstage,
           coalesce(CASE WHEN verdict = 'no significant change' THEN amplified_stage ELSE top_stage END
                    IN ('fabric_total', 'network_transmission', 'S3-S5(S+C)', 'nvme_tcp_submission', 'S2(S)',
                        'nvme_tcp_completion', 'S2(C)'), false)
           OR amplified_stage IN ('nvme_tcp_submission', 'S2(S)') AS transport_or_network
    FROM v
)
SELECT group_key, stage_set, verdict, e2e_base_ns, e2e_run_ns, e2e_lad, e2e_lad_lo, e2e_lad_hi,
       e2e_change_ns, e2e_change_lo_ns, e2e_change_hi_ns,
       CASE WHEN verdict <> 'no significant change' THEN top_stage END AS bottleneck_stage,
       CASE WHEN verdict <> 'no significant change' THEN child_stage END AS detail_stage,
       change_ns AS stage_change_ns, change_lo_ns AS stage_change_lo_ns, change_hi_ns AS stage_change_hi_ns,
       lad AS stage_lad, lad_lo AS stage_lad_lo, lad_hi AS stage_lad_hi, share,
       amplified_stage, amplified_lad, amplified_lad_lo, amplified_lad_hi,
       CASE WHEN verdict = 'no significant change' OR top_stage NOT IN ('fabric_total', 'network_transmission', 'S3-S5(S+C)') THEN NULL
            WHEN NOT synced THEN 'unknown'
            WHEN coalesce(sub_ns, 0) >= 0.7 * change_ns THEN 'submission'
            WHEN coalesce(comp_ns, 0) >= 0.7 * change_ns THEN 'completion'
            ELSE 'both' END AS network_direction,
       CASE
         WHEN cstage IS NULL THEN 'no significant change'
         WHEN transport_or_network AND queue_shared_by_cpus THEN
              'too few transport queues: commands from several CPUs share one nvme-tcp queue (one TCP connection) and wait behind each other'
              || CASE WHEN queue_shared_by_streams THEN ' (other streams'' commands ahead of them: a shared transport queue)' ELSE '' END
         WHEN transport_or_network AND queue_shared_by_streams THEN
              'shared transport queue: other streams'' commands (bytes) are ahead of this one on its nvme-tcp queue'
         WHEN transport_or_network AND device_shared_by_streams THEN
              'interference from other streams on the same device but other queues: they share the network path and the target''s CPUs and device, not the transport queue'
         WHEN cstage IN ('fabric_total', 'network_transmission', 'S3-S5(S+C)') THEN
              'network path (TCP stacks and the wire between the hosts), direction ' ||
              CASE WHEN synced THEN coalesce(CASE WHEN coalesce(sub_ns, 0) >= 0.7 * change_ns THEN 'initiator->target'
                                                   WHEN coalesce(comp_ns, 0) >= 0.7 * change_ns THEN 'target->initiator' END, 'both ways')
                   ELSE 'unknown (hosts traced with their own clocks)' END
              || CASE WHEN cstage = 'fabric_total' THEN '; on stock kernels this stage also holds both nvme-tcp transports and the target''s nvmet-tcp CPU work' ELSE '' END
         WHEN cstage IN ('nvme_tcp_submission', 'S2(S)') THEN 'initiator nvme-tcp send path (CPU) or transport queue'
         WHEN cstage = 'target_device' OR (cstage = 'target_exec' AND child_stage = 'target_device') THEN 'target device (the backing SSD / block device is slower or busier)'
         WHEN cstage IN ('target_to_device', 'target_from_device') OR (cstage = 'target_exec' AND child_stage IN ('target_to_device', 'target_from_device')) THEN 'target CPU (nvmet command handling around the device)'
         WHEN cstage = 'target_exec' THEN 'target (device and nvmet processing together)'
         WHEN cstage IN ('target_subsystem', 'S7-S9(S+C)') THEN 'target device (nvmet core, block layer and SSD on the target)'
         WHEN cstage = 'nvmet_tcp_r2t_wait' OR (cstage = 'nvmet_tcp_submission' AND child_stage = 'nvmet_tcp_r2t_wait') THEN
              'network path for write data: the R2T round trip (R2T to the initiator, H2CData back) grew, not the target''s CPU; direction unknown from this stage'
         WHEN cstage IN ('nvmet_tcp_submission', 'nvmet_tcp_completion', 'nvmet_tcp_cmd_recv', 'S6(S)', 'S6(C)') THEN 'target CPU (nvmet-tcp transport on the target)'
         WHEN cstage IN ('host_queue', 'blk_submission', 'S1(S)') THEN 'initiator block layer (blk-mq queueing, tag wait)'
         WHEN cstage IN ('host_completion', 'blk_completion', 'nvme_tcp_completion', 'S1(C)', 'S2(C)') THEN 'initiator completion path (CPU, block layer)'
         ELSE 'stage ' || cstage END AS cause,
       CASE WHEN verdict = 'no significant change' THEN
              printf('end_to_end mean %.0f us -> %.0f us (LAD %.2f, 95%% CI %.2f-%.2f): within noise',
                     e2e_base_ns / 1e3, e2e_run_ns / 1e3, e2e_lad, e2e_lad_lo, e2e_lad_hi)
              || CASE WHEN amplified_stage IS NOT NULL THEN
                      printf('; but %s mean %+.0f us, LAD %.2f [%.2f-%.2f]: other stages absorbed it',
                             amplified_stage, amplified_change_ns / 1e3, amplified_lad, amplified_lad_lo, amplified_lad_hi)
                      || CASE WHEN transport_or_network THEN printf('; commands ahead on the same queue %.1f -> %.1f (from other CPUs %+.1f), queues used %d -> %d',
                             coalesce(base_ahead, 0), coalesce(run_ahead, 0), coalesce(other_cpu_growth, 0), coalesce(base_queues, 0), coalesce(run_queues, 0)) ELSE '' END
                 ELSE '' END
            ELSE printf('%s%s mean %+.0f us (95%% CI %+.0f..%+.0f us, LAD %.2f [%.2f-%.2f]) of end_to_end %+.0f us (LAD %.2f [%.2f-%.2f]): %.0f%% of the change',
                     top_stage, CASE WHEN child_stage IS NOT NULL THEN ' (mostly ' || child_stage || ')' ELSE '' END,
                     change_ns / 1e3, change_lo_ns / 1e3, change_hi_ns / 1e3, coalesce(lad, 'NaN'::DOUBLE), coalesce(lad_lo, 'NaN'::DOUBLE), coalesce(lad_hi, 'NaN'::DOUBLE),
                     e2e_change_ns / 1e3, e2e_lad, e2e_lad_lo, e2e_lad_hi, 100 * share)
              || CASE WHEN amplified_stage IS NOT NULL AND amplified_stage <> top_stage
                      THEN printf('; most amplified: %s LAD %.2f [%.2f-%.2f]', amplified_stage, amplified_lad, amplified_lad_lo, amplified_lad_hi)
                      ELSE '' END
              || CASE WHEN transport_or_network THEN printf('; commands ahead on the same queue %.1f -> %.1f, other streams'' KiB ahead on the same device %+.0f, queues used %d -> %d',
                     coalesce(base_ahead, 0), coalesce(run_ahead, 0), coalesce(device_bytes_growth, 0) / 1024, coalesce(base_queues, 0), coalesce(run_queues, 0)) ELSE '' END
       END AS evidence
FROM k) j;
