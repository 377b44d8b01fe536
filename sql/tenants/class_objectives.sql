-- requires: none
-- input: class_objectives  a tenants file's [[class]] objectives (reports/tenants/tenants_file.py)

-- class_objectives: one row per objective of a tenants file's classes (an input of the loader;
-- by default none). Each is judged per second on the class's I/Os (sql/tenants/seconds.sql).
--   class          the class's name
--   objective_n    1.. in the class's order
--   text           the objective as written, e.g. 'p99 <= 2ms', 'target_device p90 < 500us',
--                  'iops >= 200', 'mb_s >= 50'
--   metric         'latency' (a statistic of a stage), 'iops' or 'mb_s'
--   stage_set, stage   the stage of a latency objective (default end_to_end of the primary set)
--   statistic      'mean', 'max' or 'pNN';  quantile  0..1 for percentiles, else NULL
--   limit_ns       latency: the statistic must be <= this (ns)
--   min_rate       iops / mb_s: the second's rate must be >= this (I/Os or 10^6 bytes per second)
CREATE OR REPLACE TABLE class_objectives (
    class VARCHAR, objective_n INTEGER, text VARCHAR, metric VARCHAR, stage_set VARCHAR, stage VARCHAR,
    statistic VARCHAR, quantile DOUBLE, limit_ns BIGINT, min_rate DOUBLE);
