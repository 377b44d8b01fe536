-- requires: none
-- input: slo_objectives  the rows --slo gives (reports/slo/objectives.py)

-- slo_objectives: one row per objective (an input of the loader: the rows --slo gives;
-- by default none).
--   slo_id      1, 2, ... in the order given
--   text        the objective as the user wrote it
--   io_type     I/O type it applies to (NULL: any)
--   size_lo, size_hi   I/O size range in bytes it applies to (NULL: any)
--   comm        process (bio owner) it applies to (NULL: any)
--   stage_set, stage   the stage judged (default end_to_end of the primary set)
--   statistic   'mean', 'max' or 'pNN' (nearest-rank percentile)
--   quantile    0..1 for percentiles, NULL for mean and max
--   limit_ns    the statistic must be <= this (ns)
CREATE OR REPLACE TABLE slo_objectives (
    slo_id INTEGER, text VARCHAR, io_type VARCHAR, size_lo BIGINT, size_hi BIGINT, comm VARCHAR,
    stage_set VARCHAR, stage VARCHAR, statistic VARCHAR, quantile DOUBLE, limit_ns BIGINT);
