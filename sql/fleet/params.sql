-- requires: none
-- input: fleet_params  what `ntscope fleet report`'s flags give (reports/fleet/command.py)

-- fleet_params: one row: what the fleet report groups by and over which time.
--   subject        'target' (target_host), 'initiator' (initiator_host), 'tenant' or 'class'
--   period         'hour' or 'day': the report's rows per subject and stage
--   since_utc, until_utc   the window reported (TIMESTAMP, UTC; NULL: open)
--   baseline_since_utc, baseline_until_utc   the window it is compared with (NULL: no regressions)
--   min_rel_change, min_abs_change_ns   a percentile changed when it moved by at least both
--                  (compare's defaults: 10% and 20 us, sql/compare/params.sql)
--   worst_runs     how many runs the report names per subject
CREATE OR REPLACE TABLE fleet_params AS
SELECT 'target' AS subject, 'hour' AS period, NULL::TIMESTAMP AS since_utc, NULL::TIMESTAMP AS until_utc,
       NULL::TIMESTAMP AS baseline_since_utc, NULL::TIMESTAMP AS baseline_until_utc,
       0.10::DOUBLE AS min_rel_change, 20000::BIGINT AS min_abs_change_ns, 3 AS worst_runs;
