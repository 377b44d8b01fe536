-- requires: core/hosts, core/events, core/join, core/recovery_works
-- loaded: with every run
-- input: raw_<system>  the run's event files (sql/views.py)

-- CPU wait: work NVMe/TCP needs a CPU for, and how long it waited for one. Source: the
-- capture's workqueue and irq events (capture key cpu_wait); every table is empty without.
-- - io_work: each queue's send/receive work item (nvme_tcp_io_work on an initiator,
--   nvmet_tcp_io_work on a target), queued by the socket callbacks and the submit path,
--   run by a kworker;
-- - the NET_RX softirq, where TCP receives data (and the ACKs that let it send more):
--   raised by the NIC interrupt, run at interrupt exit or, when there is too much of it,
--   by ksoftirqd (a nice 0 thread that busy threads can starve).
-- A CPU shared with busy threads runs them late, and the commands and responses of the
-- queues wait meanwhile.

-- io_work_runs: one row per run of an io_work.
--   host, role
--   work        the work item's address: one per NVMe/TCP queue
--   cpu         CPU that ran it
--   queued_ts   when it was queued (workqueue_queue_work, ns host clock); NULL when that
--               was before the trace or not recorded
--   start_ts, end_ts   workqueue_execute_start / _end (end NULL: the trace stopped first)
--   wait_ns     start - the later of queued_ts and the previous run's end: how long the
--               queued work waited for its CPU (a work queued while it runs waits for
--               its own end first, which is not waiting for the CPU)
--   run_ns      end - start
CREATE OR REPLACE TABLE io_work_runs AS
WITH wq AS (   -- the io_work's events: not the recovery works' (capture key recovery)
    SELECT * FROM raw_workqueue r
    WHERE NOT EXISTS (SELECT 1 FROM recovery_work_functions f WHERE f.host = r.host AND f.address = r.function)
), q AS (
    SELECT host, work, ts FROM wq WHERE event = 'workqueue_queue_work'
), e AS (
    SELECT host, work, ts FROM wq WHERE event = 'workqueue_execute_end'
), s AS (
    SELECT host, work, cpu, ts,
           lag(ts) OVER (PARTITION BY host, work ORDER BY ts) AS prev_start
    FROM wq WHERE event = 'workqueue_execute_start'
), runs AS (
    SELECT s.host, s.work, s.cpu, s.ts AS start_ts, s.prev_start,
           CASE WHEN s.prev_start IS NULL OR q.ts > s.prev_start THEN q.ts END AS queued_ts, e.ts AS end_ts
    FROM s
    ASOF LEFT JOIN q ON q.host = s.host AND q.work = s.work AND q.ts <= s.ts
    ASOF LEFT JOIN e ON e.host = s.host AND e.work = s.work AND e.ts >= s.ts
), with_prev AS (
    SELECT *, lag(end_ts) OVER (PARTITION BY host, work ORDER BY start_ts) AS prev_end FROM runs
)
SELECT r.host, h.role, r.work, r.cpu, r.queued_ts, r.start_ts, r.end_ts,
       r.start_ts - greatest(r.queued_ts, r.prev_end) AS wait_ns,
       r.end_ts - r.start_ts AS run_ns
FROM with_prev r JOIN hosts h USING (host);

-- io_work_queue_map: one row per io_work: the NVMe queue it serves, from the NVMe and
-- NVMe/TCP events that fired inside its runs (on the CPU running it): the receive path runs
-- there on both sides (nvme_complete_rq, nvmet_req_init, the patched events). The queue seen
-- most often wins; share says how clear that was.
--   host, work
--   ctrl_id     initiator: controller instance (nvmeN); target: cntlid
--   qid         NVMe queue id
--   events      events inside its runs with that (ctrl_id, qid);  share  of all inside
CREATE OR REPLACE TABLE io_work_queue_map AS
WITH ev AS (
    SELECT host, cpu, ts, ctrl_id, qid FROM events
    WHERE system IN ('nvme', 'nvmet', 'nvme_tcp', 'nvmet_tcp') AND qid IS NOT NULL AND ctrl_id IS NOT NULL
      AND host IN (SELECT DISTINCT host FROM io_work_runs)
), inside AS (
    -- (host, CPU) as one packed_key: the ASOF join's equality key
    SELECT r.host, r.work, ev.ctrl_id, ev.qid
    FROM (SELECT ev.*, packed_key(n.host_n, 0, 0, ev.cpu) AS host_cpu FROM ev JOIN host_numbers n USING (host)) ev
    ASOF JOIN (SELECT r.*, packed_key(n.host_n, 0, 0, r.cpu) AS host_cpu
               FROM io_work_runs r JOIN host_numbers n USING (host)) r
      ON r.host_cpu = ev.host_cpu AND r.start_ts <= ev.ts
    WHERE ev.ts <= r.end_ts
), n AS (
    SELECT host, work, ctrl_id, qid, count(*) AS events FROM inside GROUP BY ALL
)
SELECT host, work, ctrl_id, qid, events, events / sum(events) OVER (PARTITION BY host, work) AS share
FROM n QUALIFY row_number() OVER (PARTITION BY host, work ORDER BY events DESC, ctrl_id, qid) = 1;

-- io_work_names: one row per io_work: the queue it serves, as a name.
--   host, work
--   queue_key   initiator: io.queue_key ('<host>/c<ctrl>/q<qid>'); target:
--               '<host>/cntlid<cntlid>/q<qid>'; '<host>/work<address>' when no NVMe event
--               fell inside its runs
CREATE OR REPLACE VIEW io_work_names AS
SELECT r.host, r.work,
       coalesce(r.host || CASE WHEN any_value(r.role) = 'initiator' THEN '/c' ELSE '/cntlid' END || m.ctrl_id || '/q' || m.qid,
                r.host || '/work' || printf('%x', r.work)) AS queue_key
FROM io_work_runs r LEFT JOIN io_work_queue_map m USING (host, work)
GROUP BY r.host, r.work, m.ctrl_id, m.qid;

-- io_work_queues: one row per (io_work, CPU that ran it): how late and how long it ran.
--   host, role
--   queue_key   io_work_names.queue_key
--   cpu         the CPU;  cpu_share  of this io_work's runs on that CPU
--   runs        runs on that CPU;  waited_runs  runs with a known wait
--   wait_mean_ns, wait_p50_ns, wait_p99_ns, wait_max_ns   wait_ns of io_work_runs
--   run_mean_ns, busy_ns   mean and total run time
CREATE OR REPLACE VIEW io_work_queues AS
SELECT r.host, r.role, n.queue_key, r.cpu, count(*) / sum(count(*)) OVER (PARTITION BY r.host, r.work) AS cpu_share,
       count(*) AS runs, count(r.wait_ns) AS waited_runs,
       avg(r.wait_ns) AS wait_mean_ns, quantile_disc(r.wait_ns, 0.5) AS wait_p50_ns,
       quantile_disc(r.wait_ns, 0.99) AS wait_p99_ns, max(r.wait_ns) AS wait_max_ns,
       avg(r.run_ns) AS run_mean_ns, sum(r.run_ns) AS busy_ns
FROM io_work_runs r JOIN io_work_names n USING (host, work)
GROUP BY r.host, r.role, r.work, n.queue_key, r.cpu;

-- net_rx_runs: one row per run of the NET_RX softirq (irq:softirq_entry, vec 3).
--   host, role, cpu
--   raised_ts   the first softirq_raise on that CPU since its previous run (ns, host clock):
--               a raise while it runs is served by the next run; NULL when none was traced
--   start_ts, end_ts   softirq_entry / _exit
--   wait_ns     start - raised: how long the received packets waited for the CPU
--   run_ns      end - start
CREATE OR REPLACE TABLE net_rx_runs AS
WITH r AS (
    SELECT host, cpu, ts FROM raw_irq WHERE event = 'softirq_raise' AND vec = 3
), s AS (
    SELECT host, cpu, ts FROM raw_irq WHERE event = 'softirq_entry' AND vec = 3
), x AS (
    SELECT host, cpu, ts FROM raw_irq WHERE event = 'softirq_exit' AND vec = 3
), raised AS (
    -- each raise is served by the next run on its CPU
    SELECT s.host, s.cpu, s.ts AS start_ts, min(r.ts) AS raised_ts
    FROM r ASOF JOIN s ON s.host = r.host AND s.cpu = r.cpu AND s.ts >= r.ts
    GROUP BY ALL
)
SELECT s.host, h.role, s.cpu, a.raised_ts, s.ts AS start_ts, x.ts AS end_ts,
       s.ts - a.raised_ts AS wait_ns, x.ts - s.ts AS run_ns
FROM s
LEFT JOIN raised a ON a.host = s.host AND a.cpu = s.cpu AND a.start_ts = s.ts
ASOF LEFT JOIN x ON x.host = s.host AND x.cpu = s.cpu AND x.ts >= s.ts
JOIN hosts h ON h.host = s.host;

-- cpu_wait_hosts: one row per host with io_work or NET_RX runs: how long each waited for
-- its CPU, over the whole run.
--   host, role
--   io_work_runs, io_work_wait_mean_ns, io_work_wait_p99_ns, io_work_run_mean_ns
--   net_rx_runs, net_rx_wait_mean_ns, net_rx_wait_p99_ns, net_rx_wait_max_ns
CREATE OR REPLACE VIEW cpu_wait_hosts AS
WITH w AS (
    SELECT host, role, count(*) AS io_work_runs, avg(wait_ns) AS io_work_wait_mean_ns,
           quantile_disc(wait_ns, 0.99) AS io_work_wait_p99_ns, avg(run_ns) AS io_work_run_mean_ns
    FROM io_work_runs GROUP BY host, role
), n AS (
    SELECT host, role, count(*) AS net_rx_runs, avg(wait_ns) AS net_rx_wait_mean_ns,
           quantile_disc(wait_ns, 0.99) AS net_rx_wait_p99_ns, max(wait_ns) AS net_rx_wait_max_ns
    FROM net_rx_runs GROUP BY host, role
)
SELECT host, role, coalesce(w.io_work_runs, 0) AS io_work_runs, w.io_work_wait_mean_ns, w.io_work_wait_p99_ns,
       w.io_work_run_mean_ns, coalesce(n.net_rx_runs, 0) AS net_rx_runs, n.net_rx_wait_mean_ns,
       n.net_rx_wait_p99_ns, n.net_rx_wait_max_ns
FROM w FULL JOIN n USING (host, role);

-- cpu_pending: one row per stretch of time during which NVMe/TCP work of one queue was
-- waiting for its host's CPU: the queue's io_work queued and not yet running (io_work_runs:
-- start - wait .. start), or a NET_RX softirq raised and not yet running on any CPU of the
-- host (net_rx_runs: raised .. start; every connection's receive path, the ACKs of its sends
-- included). Overlapping stretches are merged, so a moment counts once per queue.
--   host, ctrl_id, qid   the queue: initiator controller instance or target cntlid, qid
--   p_from, p_to         the stretch (ns, host clock)
--   cum_before_ns        the queue's pending time before p_from (ns): the time pending
--                        between t1 and t2 is cum(t2) - cum(t1), cum(t) = cum_before_ns +
--                        min(t, p_to) - p_from of the last stretch starting at or before t
CREATE OR REPLACE VIEW cpu_pending AS
WITH queues AS (
    SELECT DISTINCT initiator_host AS host, ctrl_id, qid FROM io
    UNION SELECT DISTINCT target_host, cntlid, qid FROM io WHERE target_host IS NOT NULL
), raw AS (
    SELECT q.host, q.ctrl_id, q.qid, n.raised_ts AS p_from, n.start_ts AS p_to
    FROM net_rx_runs n JOIN queues q USING (host) WHERE n.start_ts > n.raised_ts
    UNION ALL
    SELECT w.host, m.ctrl_id, m.qid, w.start_ts - w.wait_ns, w.start_ts
    FROM io_work_runs w JOIN io_work_queue_map m USING (host, work) WHERE w.wait_ns > 0
), o AS (
    SELECT *, max(p_to) OVER (PARTITION BY host, ctrl_id, qid ORDER BY p_from, p_to
                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_to
    FROM raw
), islands AS (
    SELECT *, sum(CASE WHEN prev_to IS NULL OR p_from > prev_to THEN 1 ELSE 0 END)
                  OVER (PARTITION BY host, ctrl_id, qid ORDER BY p_from, p_to
                        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS island
    FROM o
), merged AS (
    SELECT host, ctrl_id, qid, min(p_from) AS p_from, max(p_to) AS p_to FROM islands GROUP BY host, ctrl_id, qid, island
)
SELECT host, ctrl_id, qid, p_from, p_to,
       coalesce(sum(p_to - p_from) OVER (PARTITION BY host, ctrl_id, qid ORDER BY p_from
                                         ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS cum_before_ns
FROM merged;

-- io_cpu_wait: one row per io of a run where a host recorded cpu_wait (its target and clock
-- offset known): how long its queue's NVMe/TCP work waited for each host's CPU while the io
-- was between the hosts: on its way to the target (submission: the initiator sets the command
-- up .. the target's nvmet_req_init) and back (completion: the target's nvmet_req_complete ..
-- the initiator's nvme_complete_rq); for an io whose command the target's trace lacks, its
-- whole round trip (setup .. nvme_complete_rq: the network stages count all of it), each
-- host's stretches
-- (cpu_pending) counted on its own clock (the window moved by the io's clock offset). Every
-- I/O held up by one late softirq counts that wait, so the mean over I/Os grows with the I/Os
-- a busy CPU delays (a per-run mean of the waits does not).
--   io_n
--   target_wait_ns, initiator_wait_ns   submission + completion (ns); NULL when that host
--                                       recorded neither io_work nor NET_RX runs
--   target_submission_wait_ns, target_completion_wait_ns,
--   initiator_submission_wait_ns, initiator_completion_wait_ns   the two parts (ns)
CREATE OR REPLACE VIEW io_cpu_wait AS
WITH recorded AS (
    SELECT host FROM net_rx_runs UNION SELECT host FROM io_work_runs
), sh AS (
    SELECT host, coalesce(shift_ns, 0) AS shift_ns FROM initiator_clock
), w AS (
    -- each io's two windows on the target's clock (t) and on the initiator's own clock (i); an
    -- io the target did not trace: one window, its round trip (the completion window empty)
    SELECT i.io_n, i.target_host, i.cntlid, i.initiator_host, i.ctrl_id, i.qid,
           i.i_setup_ts + i.offset_ns AS t_s0,
           CASE WHEN m THEN i.t_init_ts ELSE i.i_complete_rq_ts + i.offset_ns END AS t_s1,
           CASE WHEN m THEN i.t_complete_ts ELSE i.i_complete_rq_ts + i.offset_ns END AS t_c0,
           i.i_complete_rq_ts + i.offset_ns AS t_c1,
           i.i_setup_ts - sh.shift_ns AS i_s0,
           CASE WHEN m THEN i.t_init_ts - i.offset_ns - sh.shift_ns ELSE i.i_complete_rq_ts - sh.shift_ns END AS i_s1,
           CASE WHEN m THEN i.t_complete_ts - i.offset_ns - sh.shift_ns ELSE i.i_complete_rq_ts - sh.shift_ns END AS i_c0,
           i.i_complete_rq_ts - sh.shift_ns AS i_c1
    FROM (SELECT *, match_state = 'matched' AS m FROM io) i JOIN sh ON sh.host = i.initiator_host
    WHERE i.target_host IS NOT NULL AND i.cntlid IS NOT NULL AND i.offset_ns IS NOT NULL
      AND i.i_setup_ts IS NOT NULL AND i.i_complete_rq_ts IS NOT NULL
      -- (a run without cpu_wait costs nothing here: no io passes)
      AND (i.target_host IN (SELECT host FROM recorded) OR i.initiator_host IN (SELECT host FROM recorded))
), pts AS (
    SELECT io_n, target_host AS host, cntlid AS ctrl_id, qid, k, t
    FROM w, LATERAL (VALUES ('t_s0', t_s0), ('t_s1', t_s1), ('t_c0', t_c0), ('t_c1', t_c1)) v(k, t)
    UNION ALL
    SELECT io_n, initiator_host, ctrl_id, qid, k, t
    FROM w, LATERAL (VALUES ('i_s0', i_s0), ('i_s1', i_s1), ('i_c0', i_c0), ('i_c1', i_c1)) v(k, t)
), cum AS (
    SELECT pts.io_n, pts.k, coalesce(p.cum_before_ns + least(pts.t, p.p_to) - p.p_from, 0) AS c
    FROM pts ASOF LEFT JOIN cpu_pending p
      ON p.host = pts.host AND p.ctrl_id = pts.ctrl_id AND p.qid = pts.qid AND p.p_from <= pts.t
), per_io AS (
    SELECT io_n,
           greatest(max(c) FILTER (WHERE k = 't_s1') - max(c) FILTER (WHERE k = 't_s0'), 0) AS ts_wait,
           greatest(max(c) FILTER (WHERE k = 't_c1') - max(c) FILTER (WHERE k = 't_c0'), 0) AS tc_wait,
           greatest(max(c) FILTER (WHERE k = 'i_s1') - max(c) FILTER (WHERE k = 'i_s0'), 0) AS is_wait,
           greatest(max(c) FILTER (WHERE k = 'i_c1') - max(c) FILTER (WHERE k = 'i_c0'), 0) AS ic_wait
    FROM cum GROUP BY io_n
)
SELECT w.io_n,
       CASE WHEN w.target_host IN (SELECT host FROM recorded) THEN p.ts_wait + p.tc_wait END::BIGINT AS target_wait_ns,
       CASE WHEN w.initiator_host IN (SELECT host FROM recorded) THEN p.is_wait + p.ic_wait END::BIGINT AS initiator_wait_ns,
       CASE WHEN w.target_host IN (SELECT host FROM recorded) THEN p.ts_wait END::BIGINT AS target_submission_wait_ns,
       CASE WHEN w.target_host IN (SELECT host FROM recorded) THEN p.tc_wait END::BIGINT AS target_completion_wait_ns,
       CASE WHEN w.initiator_host IN (SELECT host FROM recorded) THEN p.is_wait END::BIGINT AS initiator_submission_wait_ns,
       CASE WHEN w.initiator_host IN (SELECT host FROM recorded) THEN p.ic_wait END::BIGINT AS initiator_completion_wait_ns
FROM w JOIN per_io p USING (io_n);
