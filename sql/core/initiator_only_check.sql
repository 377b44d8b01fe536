-- requires: core/stage_definitions, core/stages, core/nvme_acks
-- loaded: with every run

-- How far the initiator-only estimates (stage set initiator_only: the time between command
-- and completion split at the target's TCP ACK, sql/core/nvme_acks.sql) are from what the
-- traced target measured, on a run that has both: the check that says how much an
-- initiator-only diagnosis can be trusted. Empty without a traced target or without the ACKs.

-- initiator_only_check: one row per estimated stage, over the matched I/Os the estimate split
-- and whose target stages the primary stage set measured.
--   stage                est_target_side or est_round_trip (stage_definitions, initiator_only)
--   stage_set            the measured side's set (primary_stage_set)
--   measured_as          what it is held to: the sum of the set's top-level target stages
--                        ('nvmet_tcp_submission + target_subsystem + nvmet_tcp_completion'); for
--                        the round trip, command built until its response left the target
--                        (i:nvme_setup_cmd -> i:tcp_response_start) minus that sum
--   ios                  I/Os with both;  ios_total  I/Os of the run
--   within_share         share of them whose estimate is within max(10%, 50 us) of the measured
--   median_abs_diff_ns, p90_abs_diff_ns   |estimate - measured| (ns)
--   est_mean_ns, measured_mean_ns, mean_diff_ns   means (ns) and estimate - measured
CREATE OR REPLACE VIEW initiator_only_check AS
WITH est AS (
    SELECT s.io_n, d.stage, s.dur
    FROM io_stage_durations s JOIN io_stage_definitions d USING (def_no)
    WHERE d.stage_set = 'initiator_only' AND d.stage IN ('est_round_trip', 'est_target_side') AND s.dur IS NOT NULL
), tdefs AS (
    SELECT def_no, stage, seq FROM io_stage_definitions
    WHERE stage_set = (SELECT stage_set FROM primary_stage_set) AND stage_set <> 'initiator_only'
      AND side = 'target' AND parent IS NULL
), meas AS (
    -- an I/O's target time: every top-level target stage of the set measured
    SELECT s.io_n, sum(s.dur) AS target_ns
    FROM io_stage_durations s JOIN tdefs USING (def_no)
    GROUP BY s.io_n HAVING count(s.dur) = (SELECT count(*) FROM tdefs)
), pairs AS (
    SELECT e.stage, e.dur AS est_ns,
           CASE WHEN d.category = 'target_side' THEN m.target_ns
                ELSE a.response_start_ts - (a.ack_ts - a.round_trip_ns) - m.target_ns END AS measured_ns
    FROM est e JOIN meas m USING (io_n) JOIN io i USING (io_n) JOIN io_nvme_acks a USING (io_n)
    JOIN stage_definitions d ON d.stage_set = 'initiator_only' AND d.stage = e.stage
    WHERE i.match_state = 'matched'
)
SELECT p.stage, (SELECT stage_set FROM primary_stage_set) AS stage_set,
       CASE WHEN any_value(d.category) = 'target_side' THEN t.names
            ELSE 'i:nvme_setup_cmd -> i:tcp_response_start - (' || t.names || ')' END AS measured_as,
       count(*) AS ios, (SELECT count(*) FROM io) AS ios_total,
       avg((abs(est_ns - measured_ns) <= greatest(0.1 * abs(measured_ns), 50000))::INTEGER) AS within_share,
       median(abs(est_ns - measured_ns)) AS median_abs_diff_ns,
       quantile_cont(abs(est_ns - measured_ns), 0.9) AS p90_abs_diff_ns,
       avg(est_ns) AS est_mean_ns, avg(measured_ns) AS measured_mean_ns, avg(est_ns - measured_ns) AS mean_diff_ns
FROM pairs p JOIN stage_definitions d ON d.stage_set = 'initiator_only' AND d.stage = p.stage,
     (SELECT string_agg(stage, ' + ' ORDER BY seq) AS names FROM tdefs) t
GROUP BY p.stage, t.names
ORDER BY any_value(d.seq);
