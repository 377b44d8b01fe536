-- requires: none

-- The fleet's latency histograms: log-bucketed, mergeable by adding counts (a bucket's number
-- means the same range in every run), with a relative error of at most 1% on any percentile
-- read back from them (the DDSketch rule: bucket i holds the durations in (gamma^(i-1),
-- gamma^i] with gamma = (1 + a) / (1 - a), a = 0.01, and reads back as 2 gamma^i / (gamma + 1),
-- within a of every duration in the bucket). 1 ns .. 100 s takes 1,266 buckets.

-- fleet_hist_alpha(): the stated relative error (0.01)
CREATE OR REPLACE MACRO fleet_hist_alpha() AS 0.01::DOUBLE;

-- fleet_hist_gamma(): the buckets' ratio, (1 + a) / (1 - a)
CREATE OR REPLACE MACRO fleet_hist_gamma() AS (1 + fleet_hist_alpha()) / (1 - fleet_hist_alpha());

-- fleet_bucket(ns): the bucket of a duration (ns): ceil(ln(ns) / ln(gamma)); -1 for 0 or less
-- (a stage that took no time, or a negative one from clock noise), NULL for NULL
CREATE OR REPLACE MACRO fleet_bucket(ns) AS
    CASE WHEN ns IS NULL THEN NULL WHEN ns <= 0 THEN -1
         ELSE ceil(ln(ns::DOUBLE) / ln(fleet_hist_gamma()))::INTEGER END;

-- fleet_bucket_ns(bucket): the duration a bucket reads back as (ns): 2 gamma^i / (gamma + 1);
-- 0 for bucket -1
CREATE OR REPLACE MACRO fleet_bucket_ns(bucket) AS
    CASE WHEN bucket < 0 THEN 0::DOUBLE
         ELSE 2 * pow(fleet_hist_gamma(), bucket) / (fleet_hist_gamma() + 1) END;
