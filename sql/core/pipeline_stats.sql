-- requires: core/hosts, core/sampling, core/events, core/commands, core/sample_check, core/join, core/stages
-- loaded: with every run

-- analysis_mode: one row: where the run's NVMe/TCP milestones come from (host_milestones).
--   mode   'patched' (the patched nvme_tcp / nvmet_tcp events), 'probes' (the capture's
--          probes), 'patched+probes' (hosts differ: a patched initiator, a probed target ...)
--          or 'stock' (nvme / nvmet / block events only: coarser stages)
CREATE OR REPLACE VIEW analysis_mode AS
SELECT CASE WHEN bool_or(source = 'tracepoint') AND bool_or(source = 'probe') THEN 'patched+probes'
            WHEN bool_or(source = 'tracepoint') THEN 'patched'
            WHEN bool_or(source = 'probe') THEN 'probes' ELSE 'stock' END AS mode
FROM host_milestones;

-- pipeline_input_stats: pipeline_stats' rows about what the analysis read: the mode, each
-- host's role, events, trace clock, lost events, converter losses, digests, milestone source
-- and probe misses, input errors, and the stages no host of the run can measure. One row per fact.
--   seq, name, severity, value, meaning   as in pipeline_stats
CREATE OR REPLACE VIEW pipeline_input_stats AS
SELECT 1 AS seq, 'mode' AS name, 'info' AS severity, to_json((SELECT mode FROM analysis_mode)) AS value,
       'stock: nvme/nvmet/block events only (coarser stages); patched: nvme_tcp/nvmet_tcp events present; probes: the capture''s probes give the same milestones; patched+probes: hosts differ' AS meaning
UNION ALL
SELECT 10, 'role:' || host, CASE WHEN role_source = 'inferred' THEN 'warning' ELSE 'info' END,
       to_json(role),
       CASE WHEN role_source = 'inferred'
            THEN 'role inferred from the events (no host.json: not recorded by `just capture`): nvme command events make an initiator, nvmet ones a target; act only if that is wrong (record with `just capture role=...`, which writes host.json)'
            ELSE 'role from host.json' END
FROM hosts
UNION ALL
SELECT 5, name, 'error', to_json(value), meaning FROM input_error_stats
UNION ALL
SELECT 11, 'events:' || host, 'info', to_json(events), 'events read on this host (all systems)' FROM hosts
UNION ALL
SELECT 12, 'trace_clock:' || host, CASE WHEN trace_clock = 'local' THEN 'warning' ELSE 'info' END,
       to_json(coalesce(trace_clock, 'unknown')),
       CASE WHEN trace_clock = 'local' THEN 'local clock: not comparable across CPUs; record with -C mono'
            ELSE 'trace clock of this host' END
FROM hosts
UNION ALL
SELECT 13, 'lost_events:' || host,
       CASE WHEN lost_events IS NULL THEN 'info' WHEN lost_events > 0 THEN 'warning' ELSE 'info' END,
       CASE WHEN lost_events IS NULL THEN to_json('unknown') ELSE to_json(lost_events) END,
       CASE WHEN lost_events > 0 THEN 'events the kernel dropped (buffer overrun): unmatched commands follow; record with a bigger buffer'
            WHEN lost_events IS NULL THEN 'lost-event count not recorded (no metadata.json/host.json figure)'
            ELSE 'no events lost' END
FROM hosts
UNION ALL
SELECT 15, 'data_loss:' || host || ':' || kind || CASE WHEN detail <> '' THEN ':' || detail ELSE '' END,
       CASE WHEN amount > 0 THEN 'warning' ELSE 'info' END, to_json(amount),
       CASE kind
           WHEN 'skipped_event_type' THEN 'records of ' || detail || ' not converted (' || coalesce(reason, '?')
                || '): the report lacks them; fix: check the event''s format (trace-cmd report --events) and report the kernel'
           WHEN 'unknown_event_id' THEN 'records of event id ' || detail || ' have no format in the trace and were not '
                || 'converted: the report lacks them; fix: record again (the trace''s formats are incomplete)'
           WHEN 'damaged_page' THEN 'pages skipped as damaged: their events are missing from the report; fix: copy '
                || 'the trace from the host again'
           WHEN 'missing_bytes' THEN 'bytes of event data missing (a truncated trace): their events are missing '
                || 'from the report; fix: copy the trace from the host again'
           WHEN 'short_record' THEN 'records shorter than their event format were skipped: the report lacks them; '
                || 'fix: record again, and report the kernel'
           ELSE 'instance ' || detail || ' not converted (' || coalesce(reason, '?') || ')' END
FROM converter_losses
UNION ALL
SELECT 14, 'digest:' || host, 'info', to_json(digest),
       'NVMe/TCP header / data digests of this host''s connections (host.json, capture key digest=): CRC32C over every PDU header / data on both hosts'
FROM hosts WHERE digest IS NOT NULL
UNION ALL
-- where each host's NVMe/TCP milestones come from (host_milestones); a stock run (no host has
-- any) says so in its mode row alone
SELECT 15, 'milestones:' || host, 'info', to_json(source),
       CASE source WHEN 'tracepoint' THEN 'NVMe/TCP milestones from the patched events'
                   WHEN 'probe' THEN 'NVMe/TCP milestones from the capture''s probes (host.json probes)'
                   ELSE 'no NVMe/TCP milestones: stock events only' END
       || CASE WHEN tracepoints AND probes THEN ' (both recorded; --milestones ' || asked || ')' ELSE '' END
FROM host_milestones WHERE EXISTS (SELECT 1 FROM host_milestones WHERE source <> 'none')
UNION ALL
SELECT 16, 'probe_misses:' || host, CASE WHEN probe_misses > 0 THEN 'warning' ELSE 'info' END,
       to_json(probe_misses),
       CASE WHEN probe_misses > 0
            THEN 'probe hits the kernel did not record (kprobe_profile: fired while another probe ran on that CPU); counted in lost_events: the commands they belong to miss a milestone'
            ELSE 'no probe hit lost' END
FROM hosts WHERE probe_misses IS NOT NULL
UNION ALL
SELECT 17, 'stage_not_measurable:' || stage_set || ':' || stage,
       CASE WHEN reason LIKE 'the run has no % trace' THEN 'info' ELSE 'warning' END, to_json(missing),
       'no host of the run gives this milestone: ' || reason || '; the stage is left out (never measured between other points)'
FROM stage_coverage WHERE NOT measurable;

-- pipeline_command_stats: pipeline_stats' rows about the NVMe commands: I/O commands per side,
-- matched and why not, commands not analyzed (admin, fabrics, incomplete), NVMe errors and
-- completions paired through the block request. One row per fact.
--   seq, name, severity, value, meaning   as in pipeline_stats
CREATE OR REPLACE VIEW pipeline_command_stats AS
WITH ic AS (SELECT * FROM nvme_commands WHERE role = 'initiator' AND kind = 'io'),
tc AS (SELECT * FROM nvme_commands WHERE role = 'target' AND kind = 'io'),
counts AS (
    SELECT (SELECT count(*) FROM ic) AS initiator_commands,
           (SELECT count(*) FROM tc) AS target_commands,
           (SELECT count(*) FROM io WHERE match_state = 'matched') AS matched_commands
)
SELECT 20 AS seq, 'initiator_commands' AS name, 'info' AS severity, to_json(initiator_commands) AS value,
       'I/O commands (qid > 0) seen on the initiator (nvme_setup_cmd or nvme_complete_rq)' AS meaning FROM counts
UNION ALL
SELECT 21, 'target_commands', 'info', to_json(target_commands),
       'I/O commands (qid > 0) seen on the target (nvmet_req_init or nvmet_req_complete)' FROM counts
UNION ALL
SELECT 22, 'matched_commands', 'info', to_json(matched_commands),
       'initiator I/O commands joined to their target command' FROM counts
UNION ALL
SELECT 23, 'matched_pct',
       -- a run without a target folder matches nothing by design (only the initiator traced)
       CASE WHEN initiator_commands > 0 AND matched_commands * 100.0 / initiator_commands < 99
                 AND EXISTS (SELECT 1 FROM hosts WHERE role = 'target') THEN 'warning' ELSE 'info' END,
       to_json(round(CASE WHEN initiator_commands > 0 THEN matched_commands * 100.0 / initiator_commands END, 2)),
       'matched_commands / initiator_commands in percent (below 99: see the unmatched rows)' FROM counts
UNION ALL
SELECT 30, 'unmatched_initiator:' || match_state,
       CASE WHEN match_state = 'outside_target_trace' THEN 'info'
            WHEN match_state = 'no_target_controller' AND NOT EXISTS (SELECT 1 FROM hosts WHERE role = 'target') THEN 'info'
            ELSE 'warning' END, to_json(count(*)),
       CASE match_state
           WHEN 'initiator_incomplete' THEN 'initiator commands missing their submit or completion event (trace edges or lost events)'
           WHEN 'no_target_controller' THEN CASE WHEN EXISTS (SELECT 1 FROM hosts WHERE role = 'target')
               THEN 'initiator controller not mapped to a target cntlid (target not traced?)'
               ELSE 'the run has no target trace: the initiator_only stages split command and completion at the target''s TCP ACK where the initiator recorded it (capture key nvme_acks)' END
           WHEN 'outside_target_trace' THEN 'initiator commands issued while the target was not tracing'
           ELSE 'no target command with this (cntlid, qid, cid) inside the lifetime (lost target events?)' END
FROM io WHERE match_state <> 'matched' GROUP BY match_state
UNION ALL
SELECT 31, 'unmatched_target:' || reason,
       CASE WHEN reason = 'outside_initiator_trace' THEN 'info' ELSE 'warning' END, to_json(count(*)),
       CASE reason
           WHEN 'target_incomplete' THEN 'target commands missing their init or completion event'
           WHEN 'no_initiator_controller' THEN 'target controllers no traced initiator controller maps to'
           WHEN 'outside_initiator_trace' THEN 'target commands outside the initiator trace window (e.g. partition scan at connect)'
           ELSE 'target commands no initiator command matched (lost initiator events?)' END
FROM unmatched_target_commands GROUP BY reason
UNION ALL
SELECT 32, 'non_io_commands:' || role || ':' || kind, 'info', to_json(count(*)),
       CASE kind WHEN 'admin' THEN 'admin commands (queue 0, not I/O): counted, not analyzed'
                 WHEN 'fabrics' THEN 'fabrics commands (connect, property get/set; not I/O): counted, not analyzed'
                 ELSE 'completions on an I/O queue whose submit is not in the trace (submitted before '
                      || 'tracing began, or lost), so their opcode is unknown: counted, not analyzed' END
FROM nvme_commands WHERE kind <> 'io' GROUP BY role, kind
UNION ALL
SELECT 33, 'incomplete_commands:' || role || ':' || state, 'info', to_json(count(*)),
       'I/O commands with only one end in the trace (started before or ended after tracing)'
FROM nvme_commands WHERE kind = 'io' AND state <> 'complete' GROUP BY role, state
UNION ALL
SELECT 34, 'nvme_errors', 'warning', to_json(count(*)), 'initiator I/O commands completed with a non-zero NVMe status'
FROM ic WHERE status <> 0 HAVING count(*) > 0
UNION ALL
SELECT 35, 'completion_cid_differs', 'info', to_json(count(*)),
       'initiator completions reporting another cid (6.1: R2T writes report the transfer tag); paired through the block request'
FROM ic WHERE complete_cid <> cid HAVING count(*) > 0;

-- pipeline_join_stats: pipeline_stats' rows about how the hosts were joined: each initiator
-- controller's target cntlid, the clock offset of each host pair (ns), its uncertainty, drift
-- and agreeing pairs, a rejected clock-sync claim, and each initiator's shift onto the
-- reference initiator's clock. One row per fact.
--   seq, name, severity, value, meaning   as in pipeline_stats
CREATE OR REPLACE VIEW pipeline_join_stats AS
WITH co AS (
    -- the clock rows name their host pair when the run has several
    SELECT *, CASE WHEN count(*) OVER () > 1 THEN ':' || initiator_host || '->' || target_host ELSE '' END AS sfx
    FROM clock_offset
)
SELECT 40 AS seq, 'ctrl_map:' || initiator_host || '/nvme' || ctrl_id AS name,
       CASE WHEN source = 'host.json' THEN 'info' ELSE 'warning' END AS severity,
       to_json(target_host || ' cntlid ' || cntlid) AS value,
       CASE WHEN source = 'host.json' THEN 'initiator controller -> target cntlid, from host.json'
            WHEN source = 'single controller' THEN 'initiator controller -> target cntlid, inferred (no host.json names it): each side has one I/O controller, so they are paired; right unless the target also served an initiator that was not traced: no action when matched_pct is near 100'
            ELSE 'initiator controller -> target cntlid, inferred (no host.json names it): the target controller sharing the most command fingerprints (' || coalesce(CAST(score AS VARCHAR), 'none scored') || '); no action when matched_pct is near 100, else record with `just capture` (host.json names the controller)' END AS meaning
FROM ctrl_map
UNION ALL
SELECT 50, 'clock_offset_ns' || sfx, 'info', to_json(offset_ns),
       'target clock minus initiator clock (' || method || ')' FROM co
UNION ALL
SELECT 51, 'clock_uncertainty_ns' || sfx, 'info', to_json(uncertainty_ns),
       CASE WHEN synced THEN 'the synchronized clocks'' claimed error; one-way network times carry this error'
            ELSE 'half-width of the offset interval all agreeing commands allow; one-way network times carry this error' END
FROM co
UNION ALL
SELECT 54, 'clock_sync_claim_rejected' || o.sfx, 'error',
       to_json('commands allow offset ' || o.agreed_lo_ns || '..' || o.agreed_hi_ns || ' ns'),
       'both hosts traced on tai but their clocks disagree by more than the claimed ' || c.max_error_ns
       || ' ns; the estimated offset is used and one-way network times are split evenly (fix: check PTP/NTP on both hosts, or set clock_error_us)'
FROM co o JOIN clock_sync_claim c USING (initiator_host, target_host) WHERE c.claimed AND NOT o.synced
UNION ALL
SELECT 52, 'clock_drift_ppm' || sfx, CASE WHEN abs(drift_ppm) > 100 THEN 'warning' ELSE 'info' END, to_json(round(drift_ppm, 3)),
       'change of the offset over the run (ns per ms), fit over ten time slices' FROM co
UNION ALL
SELECT 53, 'clock_pairs_agreeing' || sfx,
       CASE WHEN pairs_agreeing < 0.9 * pairs THEN 'warning' ELSE 'info' END,
       to_json(pairs_agreeing::BIGINT || ' of ' || pairs),
       'candidate command pairs consistent with the offset (few: ambiguous join, check ctrl_map)' FROM co
UNION ALL
-- several initiators: each one's clock is placed on the reference initiator's
SELECT 55, 'clock_shift_ns:' || host, CASE WHEN shift_ns IS NULL THEN 'warning' ELSE 'info' END,
       coalesce(to_json(shift_ns), to_json('not placed')),
       CASE WHEN shift_ns IS NULL
            THEN 'clock_unplaced: no target links ' || host || ' to the reference initiator ' || reference_host
                 || '; its times stay on its own clock, so report times (window, series, timeline) mix clocks; '
                 || 'fix: analyze its pairs as their own run'
            ELSE 'added to ' || host || '''s times to put them on ' || reference_host || '''s clock, the report''s reference '
                 || '(through target ' || via_target || ', uncertainty ' || uncertainty_ns || ' ns)' END
FROM initiator_clock WHERE host <> reference_host;

-- pipeline_stage_stats: pipeline_stats' rows about the stages: I/Os whose stages do not sum to
-- end_to_end, I/Os left out of some stages, negative durations, commands without their block
-- request or backing-device request. One row per fact.
--   seq, name, severity, value, meaning   as in pipeline_stats
CREATE OR REPLACE VIEW pipeline_stage_stats AS
WITH stage_checks AS MATERIALIZED (
    -- io_stage_check (a view) computed once for the two rows that count its failures
    SELECT stage_set, reason, count(*) AS n FROM io_stage_check WHERE reason IS NOT NULL GROUP BY ALL
)
SELECT 60 AS seq, 'stage_sum_mismatch:' || stage_set AS name, 'error' AS severity, to_json(sum(n)::BIGINT) AS value,
       'io whose top-level stages do not sum to end_to_end (a bug: report it)' AS meaning
FROM stage_checks WHERE reason LIKE 'sum differs%' GROUP BY stage_set
UNION ALL
SELECT 61, 'stage_incomplete:' || stage_set || ':' || reason, 'info', to_json(n),
       'io left out of some stages of this set because a milestone is missing (e.g. unmatched, no block request)'
FROM stage_checks WHERE reason LIKE 'missing%'
UNION ALL
SELECT 61, 'negative_stage:' || stage_set || ':' || stage, 'warning', to_json(count(*)),
       'io with a negative duration here: a clock-offset stage beyond the uncertainty, or a send-side event stamped after the peer received the bytes'
FROM io_stage_durations s JOIN io_stage_definitions d USING (def_no) WHERE s.dur < 0 GROUP BY d.stage_set, d.stage
UNION ALL
SELECT 62, 'host_block_unlinked', 'warning', to_json(count(*)),
       'initiator I/O commands without their block request (block events not traced?)'
FROM io WHERE i_rq_issue_ts IS NULL HAVING count(*) > 0
UNION ALL
SELECT 63, 'target_device_unlinked', 'info', to_json(count(*)),
       'matched commands without a backing-device request on the target (block events not traced, or not a block backend)'
FROM io WHERE match_state = 'matched' AND t_dev_issue_ts IS NULL HAVING count(*) > 0;

-- pipeline_sample_stats: pipeline_stats' rows about a sampled capture: the sample
-- (sampling_stats), the completions of commands outside it, and whether the sampled commands'
-- block latency is that of all. One row per fact.
--   seq, name, severity, value, meaning   as in pipeline_stats
CREATE OR REPLACE VIEW pipeline_sample_stats AS
SELECT seq, name, severity, value, meaning FROM sampling_stats
UNION ALL
SELECT 4, 'completions_outside_sample:' || host, 'info', to_json(by_rule + by_block),
       'initiator nvme_complete_rq of commands outside the sample, recorded on purpose (on 6.1 an R2T write''s completion reports its transfer tag as cid, so completions are paired through the block request, not by cid): '
       || by_rule || ' by their cid, ' || by_block || ' whose cid passed the rule but whose block request was issued in the trace with no sampled submit; not commands of the run'
FROM sample_outside_completions WHERE by_rule + by_block > 0
UNION ALL
SELECT 4, 'sample_block_check:' || host, CASE WHEN fair = false THEN 'warning' ELSE 'info' END,
       to_json(round(p50_ratio, 3)),
       'block issue->complete of the sampled commands'' requests vs every request on the same devices: median '
       || round(sampled_p50_ns / 1000, 1) || ' vs ' || round(all_p50_ns / 1000, 1) || ' us, p90 '
       || round(sampled_p90_ns / 1000, 1) || ' vs ' || round(all_p90_ns / 1000, 1) || ' us ('
       || sampled_requests || ' of ' || all_requests || ' requests): '
       || CASE WHEN fair THEN 'alike, the sample is fair'
               WHEN fair = false THEN 'NOT alike: the sampled latencies are not those of all commands (the sample rule follows the load; record again with ntscope-capture sample=N, N <= 16)'
               ELSE 'too few sampled requests to judge (under 100)' END
FROM sample_block_check;

-- pipeline_stats: one row per fact about the analysis itself, printed first in every
-- report: what was read, what was lost, what was matched, what is odd. Nothing is
-- dropped silently: every command not in the stage tables is counted here by reason.
--   seq       display order
--   name      stable identifier (e.g. 'matched_commands', 'events:initiator')
--   severity  'info', 'warning' (results may be incomplete) or 'error' (results wrong)
--   value     JSON number or string
--   meaning   one sentence: what the value is and what to do about it
-- The rows of the five views above, by subject: input, commands, join, stages, sample.
CREATE OR REPLACE VIEW pipeline_stats AS
SELECT seq, name, severity, value, meaning FROM pipeline_input_stats
UNION ALL
SELECT seq, name, severity, value, meaning FROM pipeline_command_stats
UNION ALL
SELECT seq, name, severity, value, meaning FROM pipeline_join_stats
UNION ALL
SELECT seq, name, severity, value, meaning FROM pipeline_stage_stats
UNION ALL
SELECT seq, name, severity, value, meaning FROM pipeline_sample_stats;
