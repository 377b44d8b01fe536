-- cmp_sample_parts: one row per (run, group, stage set, stage) with known durations: the
-- populations the bootstrap draws from.
--   part_id     1..P, the key of cmp_sample_vals
--   run, group_key, stage_set, stage, seq, parent, direction
--   n           samples (io with a known duration)
--   positive, zero   of those, durations > 0 and = 0 (cmp_plot_presence: read here, not by
--               another scan of every stage row)
CREATE OR REPLACE TABLE cmp_sample_parts AS
SELECT row_number() OVER (ORDER BY run, group_key, stage_set, stage) AS part_id,
       run, group_key, stage_set, stage, any_value(seq) AS seq, any_value(parent) AS parent,
       any_value(direction) AS direction, count(*) AS n,
       count(*) FILTER (WHERE dur > 0) AS positive, count(*) FILTER (WHERE dur = 0) AS zero
FROM cmp_io_stage GROUP BY run, group_key, stage_set, stage;

-- cmp_stage_set: one row: the stage set the verdict uses: the most preferred set
-- (stage_sets.preference, the same rule as primary_stage_set) both runs have. Read from the
-- parts (a few dozen rows), which have every (run, stage set) of cmp_io_stage: over
-- cmp_io_stage itself each use scanned all the stage rows (1.5 s at 2 x 1 M I/Os).
--   stage_set
CREATE OR REPLACE VIEW cmp_stage_set AS
SELECT stage_set FROM cmp_sample_parts JOIN stage_sets USING (stage_set)
GROUP BY stage_set HAVING count(DISTINCT run) = 2
ORDER BY min(preference)
LIMIT 1;

-- cmp_sample_vals: one row per sample the bootstrap draws from, numbered in (rep, io_id)
-- order within its part (deterministic; io_id is unique within a run of a side; sorted by
-- io_rank, the same order as integers), on one integer key.
--   sample_key  part_id * 2^32 + k, k = 1..n in (rep, io_id) order within the part
--   dur         ns
CREATE OR REPLACE TABLE cmp_sample_vals AS
SELECT (p.part_id << 32) + row_number() OVER (PARTITION BY p.part_id ORDER BY s.rep, s.io_rank) AS sample_key, s.dur
FROM cmp_io_stage s
JOIN cmp_sample_parts p USING (run, group_key, stage_set, stage);

-- cmp_samples: one row per (run, group, stage set, stage, sample): the durations the
-- bootstrap draws from, numbered 1..n in (rep, io_id) order (deterministic).
--   run, group_key, stage_set, stage, seq, parent, direction
--   k      sample number 1..n;  n  samples of this (run, group, stage)
--   dur    ns
CREATE OR REPLACE VIEW cmp_samples AS
SELECT p.run, p.group_key, p.stage_set, p.stage, p.seq, p.parent, p.direction, v.dur,
       v.sample_key - (p.part_id << 32) AS k, p.n
FROM cmp_sample_vals v JOIN cmp_sample_parts p ON p.part_id = v.sample_key >> 32;

-- cmp_value_counts: one row per (part, distinct duration): each part's durations as value
-- counts, what the point statistics (cmp_stage_stats) and the CDF plot (cmp_plot_cdf) rank.
-- Grouped on the integer part_id of cmp_sample_vals: on a real run nearly every duration is
-- distinct, and grouping cmp_io_stage's rows on their run, group, set and stage strings, once
-- for each of the two, took 7.5 + 7.6 s for 2 x 1 M I/Os against 2.1 s for this table and
-- 0.3 s for both readers (sql/bench/README.md, session 34).
--   part_id   cmp_sample_parts.part_id
--   dur       ns
--   c         samples of the part with this duration
--   upto      samples of the part with a duration <= dur (the rank of the last of the c)
CREATE OR REPLACE TABLE cmp_value_counts AS
SELECT part_id, dur, c,
       sum(c) OVER (PARTITION BY part_id ORDER BY dur ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)::BIGINT AS upto
FROM (SELECT sample_key >> 32 AS part_id, dur, count(*) AS c FROM cmp_sample_vals GROUP BY ALL);

-- cmp_stage_stats: one row per (run, group, stage set, stage): the point statistics.
--   run, group_key, stage_set, stage, seq, parent, direction
--   n                       io with a known duration
--   mean_ns, p50_ns, p99_ns (nearest-rank percentiles, ns)
-- Percentiles by rank over the distinct durations (cmp_value_counts, as sql/60_reports.sql
-- report_stage_values): a quantile aggregate holds every duration of a part in memory and
-- cannot spill.
CREATE OR REPLACE TABLE cmp_stage_stats AS
SELECT p.run, p.group_key, p.stage_set, p.stage, p.seq, p.parent, p.direction, p.n,
       sum(v.dur::HUGEINT * v.c) / p.n AS mean_ns,
       min(v.dur) FILTER (WHERE v.upto * 2 >= p.n) AS p50_ns,
       min(v.dur) FILTER (WHERE v.upto * 100 >= 99 * p.n) AS p99_ns
FROM cmp_value_counts v JOIN cmp_sample_parts p USING (part_id)
GROUP BY p.part_id, p.run, p.group_key, p.stage_set, p.stage, p.seq, p.parent, p.direction, p.n;

-- cmp_bootstrap (cmp_bootstrap_batch(b): the rows of one batch): one row per (run, group,
-- stage set, stage, resample): the statistics of
-- one bootstrap resample. Resample r draws m = min(n, max_draws) samples with replacement;
-- draw j takes sample 1 + hash(seed, run, group, stage, r, j) mod n (io_id order,
-- cmp_sample_vals), so the same seed gives the same resamples on every machine running
-- this DuckDB. Cost: resamples x m per (run, group, stage), whatever n: linear in the I/Os
-- up to max_draws, constant above.
--   run, group_key, stage_set, stage, r (1..resamples)
--   mean_ns, p50_ns, p99_ns   of the resample (ns)
--   m, n       draws and samples: when m < n (an m-out-of-n bootstrap) the spread of these
--              around the full-sample statistic is about sqrt(n / m) too wide; cmp_lad
--              scales it back
-- cmp_bootstrap_batches: one row per part: the batch that resamples it. A batch holds at most
-- cmp_params.bootstrap_batch_draws draws (a larger part is a batch of its own): the quantiles
-- of a batch's resamples keep all its draws in memory at once, so batches keep a
-- comparison of many groups and stages within the memory limit.
--   part_id, batch
CREATE OR REPLACE TABLE cmp_bootstrap_batches AS
SELECT p.part_id,
       (sum(c.resamples * least(p.n, c.max_draws)) OVER (ORDER BY p.part_id)
        - c.resamples * least(p.n, c.max_draws)) // c.bootstrap_batch_draws AS batch
FROM cmp_sample_parts p, cmp_params c;

CREATE OR REPLACE MACRO cmp_bootstrap_batch(b) AS TABLE
WITH parts AS (
    SELECT p.* FROM cmp_sample_parts p JOIN cmp_bootstrap_batches USING (part_id) WHERE batch = b
), draws AS (
    SELECT p.part_id, r.r,
           (p.part_id << 32) + 1 + (hash(c.seed, p.run, p.group_key, p.stage_set, p.stage, r.r, j.j) % p.n::UBIGINT)::BIGINT AS sample_key
    FROM parts p, cmp_params c,
         range(1, c.resamples + 1) r(r),
         range(1, least(p.n, c.max_draws) + 1) j(j)
), stats AS (
    SELECT d.part_id, d.r, avg(v.dur) AS mean_ns, quantile_disc(v.dur, [0.5, 0.99]) AS q
    FROM draws d JOIN cmp_sample_vals v USING (sample_key)
    GROUP BY d.part_id, d.r
)
SELECT p.run, p.group_key, p.stage_set, p.stage, s.r, s.mean_ns, s.q[1] AS p50_ns, s.q[2] AS p99_ns,
       least(p.n, c.max_draws) AS m, p.n
FROM stats s JOIN parts p USING (part_id), cmp_params c;

-- filled batch by batch by the loader (reports/compare/load.py): INSERT INTO cmp_bootstrap
-- FROM cmp_bootstrap_batch(b) for each batch of cmp_bootstrap_batches
CREATE OR REPLACE TABLE cmp_bootstrap AS FROM cmp_bootstrap_batch(-1);
