-- requires: none

-- The stage table and the closed vocabularies it uses: the single source of what a stage
-- is, where its time goes, and which causes a verdict can name. Every other place reads
-- these tables: io_stage_durations evaluates the rows, the reports list them, the compare verdict
-- joins them (it names no stage itself), kernel-patches/EVENTS.md's stage table is
-- generated from them (tools/stage_table.py; a test keeps the two equal). Tables.

-- stage_categories: one row per place an I/O's time can go (the closed vocabulary of
-- stage_definitions.category).
--   category   id
--   meaning    what the time is spent on
CREATE OR REPLACE TABLE stage_categories AS
SELECT * FROM (VALUES
    ('total', 'the whole I/O, measured directly (end_to_end)'),
    ('host_block_layer', 'initiator block layer: blk-mq queueing, tag wait, dispatch'),
    ('transport_queue', 'initiator nvme-tcp queue and send path: waiting for the queue''s io_work and its CPU'),
    ('network', 'both TCP/IP stacks and the wire between the hosts'),
    ('fabric', 'stock kernels: both nvme-tcp transports, both TCP/IP stacks and the wire together (the patched events separate them)'),
    ('target_cpu', 'target CPU: nvmet-tcp receive and response work, nvmet core around the device'),
    ('target', 'the target as a whole: its CPU work and its device (and on stock kernels, for large writes, the R2T round trip)'),
    ('target_device', 'the target''s backing device (SSD, null_blk) and its block layer'),
    ('target_side', 'estimated from the initiator alone (the target not traced): after the target''s TCP acknowledged the command: its CPU, queues and device, the response''s way back'),
    ('host_cpu', 'initiator completion path: nvme-tcp receive processing and block completion')
) AS t(category, meaning);

-- cause_ids: one row per cause, the closed vocabulary of compare.json's verdict cause_id
-- and of the lab's truth.json cause (what a scenario injects).
--   cause_id          id
--   verdict_cause_id  the cause_id a verdict gives when this cause is injected (the
--                     traces show its effect, not always the cause itself: lost events
--                     are no cause of latency; a run recorded without the evidence a cause
--                     needs says so in its truth.json, e.g. a bulk TCP stream recorded
--                     without net_flows reads as a slow network)
--   initiator_only_cause_id  the cause_id a verdict gives when the target was not traced
--                     (stage set initiator_only): the target's own causes read as
--                     target_side, the initiator's send path as the round trip's slow_network
--   meaning           in a storage engineer's words (the verdict's cause text)
CREATE OR REPLACE TABLE cause_ids AS
SELECT * FROM (VALUES
    ('none', 'none', 'none', 'no significant change'),
    ('slow_device', 'slow_device', 'target_side', 'target device (the backing SSD / block device is slower)'),
    ('busy_device', 'busy_device', 'target_side', 'target device (the backing SSD / block device is busier: I/O of the target itself shares it)'),
    ('slow_network', 'slow_network', 'slow_network', 'network path (TCP stacks and the wire between the hosts)'),
    ('nic_contention', 'nic_contention', 'nic_contention', 'network path shared with other traffic (TCP connections that are not NVMe/TCP on the same interface)'),
    ('few_queues', 'few_queues', 'few_queues', 'too few transport queues: commands from several CPUs share one nvme-tcp queue (one TCP connection) and wait behind each other'),
    ('interference', 'interference', 'interference', 'interference: other streams'' commands are ahead of this one on its transport queue or its device'),
    ('target_cpu', 'target_cpu', 'target_side', 'target CPU (nvmet-tcp transport and nvmet command handling on the target)'),
    ('target', 'target', 'target_side', 'target (nvmet processing and the device together; for large writes on stock kernels also the R2T round trip for the data)'),
    ('target_side', 'target_side', 'target_side', 'target side (the target was not traced: its CPU, queues and device together, estimated from when its TCP acknowledged each command)'),
    ('io_cpu_contention', 'io_cpu_contention', 'io_cpu_contention', 'initiator CPU contention (the application and the queue''s io_work compete for one CPU)'),
    ('digest', 'digest', 'digest', 'header / data digests (CRC32C over every PDU on both hosts)'),
    ('controller_reset', 'controller_reset', 'controller_reset', 'a controller outage: commands timed out (or the connection broke), the controller was torn down and reconnected, and the I/O in flight waited for it'),
    ('path_degraded', 'path_degraded', 'path_degraded', 'one path degraded: with native multipath, the network or target time of the I/Os on one path (controller, target address and port) grew while the other paths'' did not'),
    ('host_block_layer', 'host_block_layer', 'host_block_layer', 'initiator block layer (blk-mq queueing, tag wait)'),
    ('host_transport', 'host_transport', 'slow_network', 'initiator nvme-tcp send path (CPU) or transport queue'),
    ('host_cpu', 'host_cpu', 'host_cpu', 'initiator completion path (CPU, block layer)'),
    ('lost_events', 'none', 'none', 'the trace lost events (ring-buffer overrun): the analysis counts them; not a cause of latency'),
    ('input_error', 'input_error', 'input_error', 'no verdict: the inputs of a run are inconsistent or a host is missing')
) AS t(cause_id, verdict_cause_id, initiator_only_cause_id, meaning);

-- stage_sets: one row per stage set; preference orders them for the one rule that picks
-- the primary set (views primary_stage_set and cmp_stage_set: the most detailed set the
-- I/Os have).
--   stage_set, preference (1 = first choice), meaning
CREATE OR REPLACE TABLE stage_sets AS
SELECT * FROM (VALUES
    ('ntprof', 1, 'ntprof''s stage names; patched kernels (nvme_tcp / nvmet_tcp events)'),
    ('stock', 2, 'stock kernels: nvme / nvmet / block events, coarser stages'),
    ('s_notation', 3, 'the paper''s S1..S9 notation, the same cuts as ntprof'),
    ('initiator_only', 4, 'a run without a traced target: the initiator''s stages, and the time between command and completion split at the target''s TCP ACK (estimated; capture key nvme_acks)')
) AS t(stage_set, preference, meaning);

-- stage_definitions: one row per stage of one stage set. Users add their own rows
-- (INSERT INTO stage_definitions ...), then re-run core/stages.sql (its io_stage_definitions and
-- io_stage_durations are tables; io_stages and io_stage_check are views over them).
--   stage_set    'stock' (events of unpatched kernels), 'ntprof' (ntprof's names),
--                's_notation' (the paper's S1..S9 (S)/(C) stages); patched-kernel sets
--                use the nvme_tcp / nvmet_tcp events of kernel-patches/
--   stage        stage name; 'end_to_end' is each set's total, measured directly
--   seq          display order
--   parent       NULL: a top-level stage (top-level stages of a set sum to end_to_end);
--                else the stage this one subdivides (children sum to their parent)
--   side         'initiator', 'target' or 'both' (both: needs the clock offset unless
--                minus_* cancels it)
--   from_milestone, to_milestone        milestones (io_milestones.milestone) the stage spans
--   minus_from_milestone, minus_to_milestone   optional span subtracted (clock-free network time)
--   direction    'submission' (initiator -> target), 'completion' (target -> initiator),
--                'both'
--   category     where the time goes (stage_categories.category); the verdict's cause
--   aliases      the same cut in the other sets, as 'set:stage' (ntprof <-> s_notation)
--   meaning      what the time is spent on
CREATE OR REPLACE TABLE stage_definitions AS
SELECT * FROM (VALUES
    -- ---- stock kernels: nvme/nvmet/block events only
    ('stock', 'end_to_end', 0, NULL, 'initiator', 'i:block_bio_queue', 'i:block_rq_complete', NULL, NULL, 'both', 'total', ['ntprof:end_to_end', 's_notation:end_to_end'],
     'application bio queued to block request completed on the initiator'),
    ('stock', 'host_queue', 1, NULL, 'initiator', 'i:block_bio_queue', 'i:nvme_setup_cmd', NULL, NULL, 'submission', 'host_block_layer', []::VARCHAR[],
     'initiator block layer: bio queued until nvme-tcp builds the command (blk-mq queueing, tag wait)'),
    ('stock', 'host_getrq', 2, 'host_queue', 'initiator', 'i:block_bio_queue', 'i:block_getrq', NULL, NULL, 'submission', 'host_block_layer', []::VARCHAR[],
     'bio queued until a request and tag were allocated'),
    ('stock', 'host_dispatch', 3, 'host_queue', 'initiator', 'i:block_getrq', 'i:nvme_setup_cmd', NULL, NULL, 'submission', 'host_block_layer', []::VARCHAR[],
     'request allocated until blk-mq dispatched it to nvme-tcp'),
    ('stock', 'fabric_total', 4, NULL, 'both', 'i:nvme_setup_cmd', 'i:nvme_complete_rq', 't:nvmet_req_init', 't:nvmet_req_complete', 'both', 'fabric', []::VARCHAR[],
     'clock-free: initiator command time minus target execution: both transports, both network stacks, the wire'),
    ('stock', 'fabric_submission', 5, 'fabric_total', 'both', 'i:nvme_setup_cmd', 't:nvmet_req_init', NULL, NULL, 'submission', 'fabric', []::VARCHAR[],
     'command built on the initiator until the target parsed it (uses the clock offset: +- its uncertainty)'),
    ('stock', 'fabric_completion', 6, 'fabric_total', 'both', 't:nvmet_req_complete', 'i:nvme_complete_rq', NULL, NULL, 'completion', 'fabric', []::VARCHAR[],
     'target completed until the initiator processed the response (uses the clock offset: +- its uncertainty)'),
    ('stock', 'target_exec', 7, NULL, 'target', 't:nvmet_req_init', 't:nvmet_req_complete', NULL, NULL, 'both', 'target', []::VARCHAR[],
     'target: command parsed until its completion was queued (nvmet core + backing device)'),
    ('stock', 'target_to_device', 8, 'target_exec', 'target', 't:nvmet_req_init', 't:block_rq_issue', NULL, NULL, 'submission', 'target', []::VARCHAR[],
     'target: command parsed until the backing device request was issued: nvmet CPU work, and for writes above the in-capsule size also the R2T round trip for the data (the patched events tell them apart)'),
    ('stock', 'target_device', 9, 'target_exec', 'target', 't:block_rq_issue', 't:block_rq_complete', NULL, NULL, 'both', 'target_device', []::VARCHAR[],
     'backing device (e.g. null_blk, SSD) service time'),
    ('stock', 'target_from_device', 10, 'target_exec', 'target', 't:block_rq_complete', 't:nvmet_req_complete', NULL, NULL, 'completion', 'target_cpu', []::VARCHAR[],
     'target: device completion until nvmet completed the command'),
    ('stock', 'host_completion', 11, NULL, 'initiator', 'i:nvme_complete_rq', 'i:block_rq_complete', NULL, NULL, 'completion', 'host_cpu', []::VARCHAR[],
     'initiator: NVMe completion until the block request completed'),
    -- ---- ntprof names (patched kernels: nvme_tcp / nvmet_tcp events, kernel-patches/EVENTS.md)
    ('ntprof', 'end_to_end', 0, NULL, 'initiator', 'i:block_bio_queue', 'i:block_rq_complete', NULL, NULL, 'both', 'total', ['stock:end_to_end', 's_notation:end_to_end'],
     'application bio queued to block request completed on the initiator'),
    ('ntprof', 'blk_submission', 1, NULL, 'initiator', 'i:block_bio_queue', 'i:nvme_tcp_queue_rq', NULL, NULL, 'submission', 'host_block_layer', ['s_notation:S1(S)'],
     'block layer until nvme-tcp accepted the request (S1(S))'),
    ('ntprof', 'nvme_tcp_submission', 2, NULL, 'initiator', 'i:nvme_tcp_queue_rq', 'i:nvme_tcp_try_send', NULL, NULL, 'submission', 'transport_queue', ['s_notation:S2(S)'],
     'nvme-tcp req_list and send_list wait until the command becomes the queue''s current send (S2(S)); the cut is not done_send_req: send-side events fire after the bytes are in the socket and can be stamped after the target already received them'),
    ('ntprof', 'network_transmission', 3, NULL, 'both', 'i:nvme_tcp_try_send', 'i:nvme_tcp_process_nvme_cqe', 't:nvmet_tcp_done_recv_pdu', 't:nvmet_tcp_setup_response_pdu#last', 'both', 'network', ['s_notation:S3-S5(S+C)'],
     'clock-free: socket copies, both network stacks and the wire, submission and completion (S3-S5(S+C)); for R2T writes the R2T round trip sits in nvmet_tcp_submission'),
    ('ntprof', 'nstack_submission', 4, 'network_transmission', 'both', 'i:nvme_tcp_try_send', 't:nvmet_tcp_done_recv_pdu', NULL, NULL, 'submission', 'network', []::VARCHAR[],
     'host stack, wire, target stack on the way in (uses the clock offset: +- its uncertainty)'),
    ('ntprof', 'nstack_completion', 5, 'network_transmission', 'both', 't:nvmet_tcp_setup_response_pdu#last', 'i:nvme_tcp_process_nvme_cqe', NULL, NULL, 'completion', 'network', []::VARCHAR[],
     'target stack, wire, host stack on the way back (uses the clock offset: +- its uncertainty)'),
    ('ntprof', 'nvmet_tcp_submission', 6, NULL, 'target', 't:nvmet_tcp_done_recv_pdu', 't:nvmet_tcp_exec_req', NULL, NULL, 'submission', 'target_cpu', ['s_notation:S6(S)'],
     'target transport: command PDU read until executed (data receive, R2T round trip for large writes) (S6(S))'),
    ('ntprof', 'nvmet_tcp_cmd_recv', 7, 'nvmet_tcp_submission', 'target', 't:nvmet_tcp_done_recv_pdu', 't:nvmet_tcp_r2t_wait_start', NULL, NULL, 'submission', 'target_cpu', []::VARCHAR[],
     'target CPU: command PDU read until executed, or until its R2T was built (large writes)'),
    ('ntprof', 'nvmet_tcp_r2t_wait', 8, 'nvmet_tcp_submission', 'target', 't:nvmet_tcp_r2t_wait_start', 't:nvmet_tcp_exec_req', NULL, NULL, 'submission', 'network', []::VARCHAR[],
     'large writes: R2T built until all H2CData arrived (the R2T to the initiator and the write data back: both network stacks, the wire, the initiator''s send); 0 for other commands'),
    ('ntprof', 'target_subsystem', 9, NULL, 'target', 't:nvmet_tcp_exec_req', 't:nvmet_tcp_queue_response#last', NULL, NULL, 'both', 'target_device', ['s_notation:S7-S9(S+C)'],
     'target nvmet core, block layer, device (S7-S9)'),
    ('ntprof', 'nvmet_tcp_completion', 10, NULL, 'target', 't:nvmet_tcp_queue_response#last', 't:nvmet_tcp_setup_response_pdu#last', NULL, NULL, 'completion', 'target_cpu', ['s_notation:S6(C)'],
     'target transport: response queued until its CapsuleResp PDU is built, data PDUs included (S6(C)); the cut is not try_send_response: send-side events fire after the bytes are in the socket and can be stamped after the host already received them'),
    ('ntprof', 'nvme_tcp_completion', 11, NULL, 'initiator', 'i:nvme_tcp_process_nvme_cqe', 'i:nvme_complete_rq', NULL, NULL, 'completion', 'host_cpu', ['s_notation:S2(C)'],
     'nvme-tcp: response parsed until the NVMe completion (S2(C))'),
    ('ntprof', 'blk_completion', 12, NULL, 'initiator', 'i:nvme_complete_rq', 'i:block_rq_complete', NULL, NULL, 'completion', 'host_cpu', ['s_notation:S1(C)'],
     'block layer completion (S1(C))'),
    -- ---- the paper's S-notation (same cuts as ntprof)
    ('s_notation', 'end_to_end', 0, NULL, 'initiator', 'i:block_bio_queue', 'i:block_rq_complete', NULL, NULL, 'both', 'total', ['stock:end_to_end', 'ntprof:end_to_end'],
     'application bio queued to block request completed on the initiator'),
    ('s_notation', 'S1(S)', 1, NULL, 'initiator', 'i:block_bio_queue', 'i:nvme_tcp_queue_rq', NULL, NULL, 'submission', 'host_block_layer', ['ntprof:blk_submission'],
     'blk-mq staging queue'),
    ('s_notation', 'S2(S)', 2, NULL, 'initiator', 'i:nvme_tcp_queue_rq', 'i:nvme_tcp_try_send', NULL, NULL, 'submission', 'transport_queue', ['ntprof:nvme_tcp_submission'],
     'nvme-tcp transport queue until the command is taken off the send list'),
    ('s_notation', 'S3-S5(S+C)', 3, NULL, 'both', 'i:nvme_tcp_try_send', 'i:nvme_tcp_process_nvme_cqe', 't:nvmet_tcp_done_recv_pdu', 't:nvmet_tcp_setup_response_pdu#last', 'both', 'network', ['ntprof:network_transmission'],
     'network substrate: both TCP/IP stacks and the wire (clock-free)'),
    ('s_notation', 'S6(S)', 4, NULL, 'target', 't:nvmet_tcp_done_recv_pdu', 't:nvmet_tcp_exec_req', NULL, NULL, 'submission', 'target_cpu', ['ntprof:nvmet_tcp_submission'],
     'target transport receive'),
    ('s_notation', 'S7-S9(S+C)', 5, NULL, 'target', 't:nvmet_tcp_exec_req', 't:nvmet_tcp_queue_response#last', NULL, NULL, 'both', 'target_device', ['ntprof:target_subsystem'],
     'target block layer, NVMe, SSD'),
    ('s_notation', 'S6(C)', 6, NULL, 'target', 't:nvmet_tcp_queue_response#last', 't:nvmet_tcp_setup_response_pdu#last', NULL, NULL, 'completion', 'target_cpu', ['ntprof:nvmet_tcp_completion'],
     'target transport response queue until the response PDU is built (data PDUs included)'),
    ('s_notation', 'S2(C)', 7, NULL, 'initiator', 'i:nvme_tcp_process_nvme_cqe', 'i:nvme_complete_rq', NULL, NULL, 'completion', 'host_cpu', ['ntprof:nvme_tcp_completion'],
     'nvme-tcp completion'),
    ('s_notation', 'S1(C)', 8, NULL, 'initiator', 'i:nvme_complete_rq', 'i:block_rq_complete', NULL, NULL, 'completion', 'host_cpu', ['ntprof:blk_completion'],
     'block layer completion'),
    -- ---- a run without a traced target (sql/core/nvme_acks.sql): est_* are estimates
    ('initiator_only', 'end_to_end', 0, NULL, 'initiator', 'i:block_bio_queue', 'i:block_rq_complete', NULL, NULL, 'both', 'total', ['stock:end_to_end', 'ntprof:end_to_end', 's_notation:end_to_end'],
     'application bio queued to block request completed on the initiator'),
    ('initiator_only', 'host_queue', 1, NULL, 'initiator', 'i:block_bio_queue', 'i:nvme_setup_cmd', NULL, NULL, 'submission', 'host_block_layer', ['stock:host_queue'],
     'initiator block layer: bio queued until nvme-tcp builds the command (blk-mq queueing, tag wait)'),
    ('initiator_only', 'est_round_trip', 2, NULL, 'initiator', 'i:nvme_setup_cmd', 'i:tcp_ack', NULL, NULL, 'both', 'network', []::VARCHAR[],
     'estimated: command built until the target''s TCP acknowledged its bytes: the initiator''s send path (and its transport queue), both network stacks and the wire, both ways'),
    ('initiator_only', 'est_target_side', 3, NULL, 'initiator', 'i:tcp_ack', 'i:tcp_response_start', NULL, NULL, 'both', 'target_side', []::VARCHAR[],
     'estimated: the target''s ACK of the command until its response left the target, as far as the initiator can tell: the target''s CPU, queues and device'),
    ('initiator_only', 'est_response', 4, NULL, 'initiator', 'i:tcp_response_start', 'i:tcp_response', NULL, NULL, 'completion', 'network', []::VARCHAR[],
     'estimated: the response on its way: behind other responses'' data at the path''s rate, then its own segments until the last arrived'),
    ('initiator_only', 'host_receive', 5, NULL, 'initiator', 'i:tcp_response', 'i:nvme_complete_rq', NULL, NULL, 'completion', 'host_cpu', []::VARCHAR[],
     'initiator: the response''s last segment arrived until the NVMe completion (its TCP receive path, io_work, nvme-tcp parsing the response)'),
    ('initiator_only', 'host_completion', 6, NULL, 'initiator', 'i:nvme_complete_rq', 'i:block_rq_complete', NULL, NULL, 'completion', 'host_cpu', ['stock:host_completion', 'ntprof:blk_completion'],
     'initiator: NVMe completion until the block request completed')
) AS t(stage_set, stage, seq, parent, side, from_milestone, to_milestone, minus_from_milestone, minus_to_milestone, direction,
        category, aliases, meaning);

-- evidence_kinds: one row per kind of evidence a milestone can come from (the closed
-- vocabulary of milestone_evidence.evidence and stage_evidence.evidence).
--   evidence   id
--   meaning    which events
CREATE OR REPLACE TABLE evidence_kinds AS
SELECT * FROM (VALUES
    ('stock', 'stock events, on every kernel: nvme / nvmet / block tracepoints'),
    ('tracepoint', 'the patched nvme_tcp / nvmet_tcp tracepoints (kernel-patches/)'),
    ('probe', 'probe events the capture places on the nvme-tcp / nvmet-tcp functions around those tracepoints (capture key probes=), on a kernel without the patches'),
    ('tcp_ack', 'tcp:tcp_probe on the initiator''s NVMe/TCP connections (capture key nvme_acks): when the target''s TCP acknowledged each command, on every kernel with the tcp tracepoint')
) AS t(evidence, meaning);

-- probe_events: one row per probe event the capture places (capture/ntscope-capture,
-- probe_catalogue: the same names) and the patched tracepoint whose milestone its hits give.
-- The probes sit at the same moment as the tracepoint or next to it, on the same command.
--   system      the probe group: 'ntscope_nvme_tcp' (initiator), 'ntscope_nvmet_tcp' (target)
--   event       the probe; 'exec_%' (a LIKE pattern) is every namespace execute handler
--               probed (exec_bdev_rw, exec_file_flush ...)
--   stands_for  the patched event (kernel-patches/EVENTS.md) whose milestone it gives
--   hit_is      which of the probe's hits give it: NULL every hit; 'write' / 'read' by the
--               command's opcode (nvme_is_write: opcode bit 0); 'c2h' / 'r2t' / 'response' a
--               socket send's state (send_state equal to the state_c2h / state_r2t /
--               state_response the hit carries, from the kernel's BTF)
--   point       where the probe sits, and how that moment relates to the tracepoint's
CREATE OR REPLACE TABLE probe_events AS
SELECT * FROM (VALUES
    ('ntscope_nvme_tcp', 'queue_rq', 'nvme_tcp_queue_rq', NULL,
     'entry of blk_mq_start_request called from nvme_tcp_queue_rq (the command id is built): right after the tracepoint, before block_rq_issue'),
    ('ntscope_nvme_tcp', 'try_send', 'nvme_tcp_try_send', NULL,
     'the command PDU''s first socket send (entry of nvme_tcp_try_send_cmd_pdu, or of kernel_sendpage / sock_sendmsg called from the send path while the request is at offset 0 of its command PDU): right after the tracepoint'),
    ('ntscope_nvme_tcp', 'cqe', 'nvme_tcp_process_nvme_cqe', NULL,
     'entry of nvme_tcp_data_in_short, which nvme_tcp_process_nvme_cqe calls before completing the request: right after the tracepoint'),
    ('ntscope_nvmet_tcp', 'recv_cmd', 'nvmet_tcp_done_recv_pdu', NULL,
     'entry of nvmet_req_init (tcp transport): the command PDU was read, right after the tracepoint'),
    ('ntscope_nvmet_tcp', 'exec_%', 'nvmet_tcp_exec_write_req', 'write',
     'entry of the namespace''s execute handler (bdev or file: rw, flush, write zeroes, dsm), tcp transport: right after the tracepoint'),
    ('ntscope_nvmet_tcp', 'exec_%', 'nvmet_tcp_exec_read_req', 'read',
     'entry of the namespace''s execute handler (bdev or file: rw, flush, write zeroes, dsm), tcp transport: right after the tracepoint'),
    ('ntscope_nvmet_tcp', 'queue_response', 'nvmet_tcp_queue_response', NULL,
     'entry of nvmet_tcp_queue_response: right before the tracepoint (which a response still waiting for in-capsule data skips)'),
    ('ntscope_nvmet_tcp', 'setup_c2h', 'nvmet_tcp_setup_c2h_data_pdu', NULL,
     'entry of nvmet_setup_c2h_data_pdu (where the tracepoint sits), or of nvmet_try_send_data_pdu at offset 0 (the PDU''s first send, right after)'),
    ('ntscope_nvmet_tcp', 'setup_r2t', 'nvmet_tcp_setup_r2t_pdu', NULL,
     'entry of nvmet_setup_r2t_pdu (where the tracepoint sits), or of nvmet_try_send_r2t at offset 0 (the PDU''s first send, right after)'),
    ('ntscope_nvmet_tcp', 'setup_response', 'nvmet_tcp_setup_response_pdu', NULL,
     'entry of nvmet_setup_response_pdu (where the tracepoint sits), or of nvmet_try_send_response at offset 0 (the PDU''s first send, right after)'),
    ('ntscope_nvmet_tcp', 'send', 'nvmet_tcp_setup_c2h_data_pdu', 'c2h',
     'where the functions above are inlined: the C2HData PDU''s first socket send (kernel_sendpage / sock_sendmsg called from the send path in state DATA_PDU at offset 0): right after the PDU was built'),
    ('ntscope_nvmet_tcp', 'send', 'nvmet_tcp_setup_r2t_pdu', 'r2t',
     'the R2T PDU''s first socket send (state R2T, offset 0): right after the PDU was built'),
    ('ntscope_nvmet_tcp', 'send', 'nvmet_tcp_setup_response_pdu', 'response',
     'the CapsuleResp PDU''s first socket send (state RESPONSE, offset 0): right after the PDU was built')
) AS t(system, event, stands_for, hit_is, point);

-- milestone_evidence: one row per (milestone a stage definition uses, evidence kind that can
-- give it). A view over the stage table and probe_events.
--   milestone   as stage_definitions writes it, without '#last'
--   evidence    evidence_kinds.evidence
--   events      the events it is made of ('system:event'; the probes of probe_events)
CREATE OR REPLACE VIEW milestone_evidence AS
WITH used AS (
    SELECT DISTINCT regexp_replace(m, '#last$', '') AS milestone
    FROM (SELECT unnest([from_milestone, to_milestone, minus_from_milestone, minus_to_milestone]) AS m FROM stage_definitions)
    WHERE m IS NOT NULL
), parts AS (
    -- the patched events a milestone is made of: the two the target's events make
    -- (sql/core/stages.sql) need the events named here, every other one is its own event
    SELECT milestone, unnest(CASE milestone
        WHEN 't:nvmet_tcp_exec_req' THEN ['nvmet_tcp_exec_read_req', 'nvmet_tcp_exec_write_req']
        WHEN 't:nvmet_tcp_r2t_wait_start' THEN ['nvmet_tcp_setup_r2t_pdu', 'nvmet_tcp_exec_read_req', 'nvmet_tcp_exec_write_req']
        ELSE [substr(milestone, 3)] END) AS part
    FROM used
), kinds AS (
    SELECT p.milestone, p.part,
           CASE WHEN p.part LIKE 'nvme_tcp_%' THEN 'nvme_tcp' WHEN p.part LIKE 'nvmet_tcp_%' THEN 'nvmet_tcp'
                WHEN p.milestone IN ('i:tcp_ack', 'i:tcp_response_start', 'i:tcp_response') THEN 'tcp' END AS tcp_system
    FROM parts p
)
SELECT milestone, 'stock' AS evidence,
       list(CASE WHEN milestone LIKE 'i:block%' OR milestone LIKE 't:block%' THEN 'block' WHEN milestone LIKE 'i:%' THEN 'nvme' ELSE 'nvmet' END
            || ':' || part ORDER BY part) AS events
FROM kinds WHERE tcp_system IS NULL GROUP BY milestone
UNION ALL
SELECT milestone, 'tracepoint', list(tcp_system || ':' || part ORDER BY part)
FROM kinds WHERE tcp_system IN ('nvme_tcp', 'nvmet_tcp') GROUP BY milestone
UNION ALL
-- the target's ACK of a command (sql/core/nvme_acks.sql)
SELECT milestone, 'tcp_ack', ['tcp:tcp_probe'] FROM kinds WHERE tcp_system = 'tcp' GROUP BY milestone
UNION ALL
-- a probe gives the milestone when it gives each part; read or write is enough for execution
SELECT k.milestone, 'probe', list(DISTINCT pe.system || ':' || pe.event ORDER BY pe.system || ':' || pe.event)
FROM kinds k LEFT JOIN probe_events pe ON pe.stands_for = k.part
WHERE k.tcp_system IN ('nvme_tcp', 'nvmet_tcp')
GROUP BY k.milestone
HAVING count(*) FILTER (WHERE pe.stands_for IS NULL AND k.part NOT IN ('nvmet_tcp_exec_read_req', 'nvmet_tcp_exec_write_req')) = 0
   AND count(pe.stands_for) > 0;

-- stage_evidence: one row per stage definition: which evidence can give it. A stage cut only at
-- stock events has 'stock' (every kernel); one cut at the target's ACK of a command has
-- 'tcp_ack'; one that needs NVMe/TCP milestones has the kinds that give every one of them
-- ('tracepoint', 'probe'). A view.
--   stage_set, stage
--   evidence   list of evidence_kinds.evidence
CREATE OR REPLACE VIEW stage_evidence AS
WITH ms AS (
    SELECT d.stage_set, d.stage, regexp_replace(m, '#last$', '') AS milestone
    FROM (SELECT stage_set, stage, unnest([from_milestone, to_milestone, minus_from_milestone, minus_to_milestone]) AS m FROM stage_definitions) d
    WHERE m IS NOT NULL
), per AS (
    SELECT ms.stage_set, ms.stage, ms.milestone,
           bool_or(e.evidence = 'stock') AS stock,
           bool_or(e.evidence = 'tracepoint') AS tracepoint, bool_or(e.evidence = 'probe') AS probe,
           bool_or(e.evidence = 'tcp_ack') AS tcp_ack
    FROM ms LEFT JOIN milestone_evidence e USING (milestone)
    GROUP BY ALL
), agg AS (
    SELECT stage_set, stage, bool_and(coalesce(stock, false)) AS all_stock,
           bool_and(coalesce(stock OR tracepoint, false)) AS tracepoint,
           bool_and(coalesce(stock OR probe, false)) AS probe,
           bool_and(coalesce(stock OR tcp_ack, false)) AS tcp_ack
    FROM per GROUP BY ALL
)
SELECT stage_set, stage,
       CASE WHEN all_stock THEN ['stock'] WHEN tcp_ack THEN ['tcp_ack']
            ELSE list_filter(['tracepoint', 'probe'], lambda k: (k = 'tracepoint' AND tracepoint) OR (k = 'probe' AND probe)) END
           AS evidence
FROM agg;
