-- requires: core/stage_definitions, compare/params, compare/input
-- each: SELECT DISTINCT batch FROM cmp_bootstrap_batches ORDER BY batch
-- run each: INSERT INTO cmp_bootstrap FROM cmp_bootstrap_batch(?)

-- cmp_def_cuts: one row per (run, stage set, stage) a side defines: the definition whose
-- samples serve it. Two definitions with the same milestones (from_milestone, to_milestone, minus_from_milestone,
-- minus_to_milestone: a cut, as io_stage_cuts in sql/core/stages.sql) give every io the same
-- duration: each s_notation stage is an ntprof cut, and stock's end_to_end and host_completion
-- are ntprof's (23 cuts for 34 definitions on a patched run). They share one population, so
-- the samples, rank points and bootstrap resamples are taken once per cut and given to each
-- definition of it: the intervals of one cut are then the same under each of its names, and
-- a patched comparison resamples a third less. Definitions are the same cut only when they
-- have the same milestones in every repeat of the side and are absent from the same repeats.
--   run, stage_set, stage, seq, parent, direction   (as in cmp_io_stage)
--   cut_set, cut_stage   the cut's first definition (by stage_set, stage): whose rows are
--                        sampled; the definition itself when no other has its cut
CREATE OR REPLACE TABLE cmp_def_cuts AS
WITH defs AS (
    SELECT run, stage_set, stage, any_value(seq) AS seq, any_value(parent) AS parent,
           any_value(direction) AS direction
    FROM cmp_side_defs GROUP BY run, stage_set, stage
), cuts AS (
    SELECT d.*,
           string_agg(CASE WHEN s.stage IS NULL THEN '-'
                           ELSE concat_ws('|', coalesce(s.from_milestone, '?'), coalesce(s.to_milestone, '?'),
                                          coalesce(s.minus_from_milestone, '?'), coalesce(s.minus_to_milestone, '?')) END,
                      ';' ORDER BY r.rep) AS cut
    FROM defs d JOIN cmp_run_info r USING (run)   -- every repeat of the side
    LEFT JOIN cmp_side_defs s ON s.run = r.run AND s.rep = r.rep AND s.stage_set = d.stage_set AND s.stage = d.stage
    GROUP BY ALL
)
SELECT run, stage_set, stage, seq, parent, direction,
       first_value(stage_set) OVER w AS cut_set, first_value(stage) OVER w AS cut_stage
FROM cuts
WINDOW w AS (PARTITION BY run, cut ORDER BY stage_set, stage);

-- cmp_sample_parts: one row per (run, group, stage set, stage) with known durations: the
-- populations the bootstrap draws from.
--   part_id     1..P, in (run, group_key, stage_set, stage) order
--   run, group_key, stage_set, stage, seq, parent, direction
--   n           samples (io with a known duration)
--   positive, zero   of those, durations > 0 and = 0 (cmp_plot_presence: read here, not by
--               another scan of every stage row)
--   cut_part_id the part_id of the cut's part in the same run and group (cmp_def_cuts): the
--               key of its samples in cmp_sample_vals; part_id itself for a cut's first
--               definition
-- Counted over the rows of each cut's first definition only, and given to every definition of
-- the cut (the same io, the same durations).
CREATE OR REPLACE TABLE cmp_sample_parts AS
WITH cut_parts AS (
    SELECT s.run, s.group_key, s.stage_set, s.stage, count(*) AS n,
           count(*) FILTER (WHERE s.dur > 0) AS positive, count(*) FILTER (WHERE s.dur = 0) AS zero
    FROM cmp_io_stage s
    SEMI JOIN (SELECT * FROM cmp_def_cuts WHERE stage_set = cut_set AND stage = cut_stage) c
      ON c.run = s.run AND c.stage_set = s.stage_set AND c.stage = s.stage
    GROUP BY s.run, s.group_key, s.stage_set, s.stage
), parts AS (
    SELECT row_number() OVER (ORDER BY p.run, p.group_key, c.stage_set, c.stage) AS part_id,
           p.run, p.group_key, c.stage_set, c.stage, c.seq, c.parent, c.direction, p.n, p.positive, p.zero,
           c.cut_set, c.cut_stage
    FROM cut_parts p
    JOIN cmp_def_cuts c ON c.run = p.run AND c.cut_set = p.stage_set AND c.cut_stage = p.stage
)
-- the cut's first definition comes first in (stage_set, stage) order, as part_id counts
SELECT part_id, run, group_key, stage_set, stage, seq, parent, direction, n, positive, zero,
       min(part_id) OVER (PARTITION BY run, group_key, cut_set, cut_stage) AS cut_part_id
FROM parts;

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
-- io_rank, the same order as integers), on one integer key. The parts of a cut's first
-- definition only (cmp_sample_parts.cut_part_id): the others have the same samples.
--   sample_key  part_id * 2^32 + k, k = 1..n in (rep, io_id) order within the part
--   dur         ns
CREATE OR REPLACE TABLE cmp_sample_vals AS
SELECT (p.part_id << 32) + row_number() OVER (PARTITION BY p.part_id ORDER BY s.rep, s.io_rank) AS sample_key, s.dur
FROM cmp_io_stage s
JOIN (SELECT * FROM cmp_sample_parts WHERE part_id = cut_part_id) p USING (run, group_key, stage_set, stage);

-- cmp_samples: one row per (run, group, stage set, stage, sample): the durations the
-- bootstrap draws from, numbered 1..n in (rep, io_id) order (deterministic).
--   run, group_key, stage_set, stage, seq, parent, direction
--   k      sample number 1..n;  n  samples of this (run, group, stage)
--   dur    ns
CREATE OR REPLACE VIEW cmp_samples AS
SELECT p.run, p.group_key, p.stage_set, p.stage, p.seq, p.parent, p.direction, v.dur,
       v.sample_key - (p.cut_part_id << 32) AS k, p.n
FROM cmp_sample_vals v JOIN cmp_sample_parts p ON p.cut_part_id = v.sample_key >> 32;

-- cmp_rank_points: one row per (part, percent 1..100): the part's duration at nearest rank
-- ceil(pct * n / 100), what the point statistics (cmp_stage_stats: p50, p99) and the CDF plot
-- (cmp_plot_cdf) read; the parts of cmp_sample_vals (each cut's first definition; the others
-- read them through cut_part_id). The samples ranked by one sort on integers (a window, which
-- spills), then the hundred wanted ranks kept: on a real run nearly every duration is
-- distinct, and counting equal values first (a GROUP BY of nearly every row, then a window
-- over its groups) took 11.6 s against 3.5 s for 26 M samples; a quantile aggregate holds every duration of a part in memory and cannot spill.
--   part_id   cmp_sample_parts.part_id (a cut_part_id)
--   pct       1..100
--   dur       ns
CREATE OR REPLACE TABLE cmp_rank_points AS
WITH wanted AS (
    SELECT part_id, pct, (pct * n + 99) // 100 AS k   -- ceil(pct * n / 100), 1..n
    FROM cmp_sample_parts, range(1, 101) r(pct)
    WHERE part_id = cut_part_id
), ranked AS (
    SELECT sample_key >> 32 AS part_id, dur,
           row_number() OVER (PARTITION BY sample_key >> 32 ORDER BY dur) AS k
    FROM cmp_sample_vals
)
SELECT w.part_id, w.pct, r.dur
FROM ranked r JOIN wanted w USING (part_id, k);

-- cmp_stage_stats: one row per (run, group, stage set, stage): the point statistics.
--   run, group_key, stage_set, stage, seq, parent, direction
--   n                       io with a known duration
--   mean_ns, p50_ns, p99_ns (nearest-rank percentiles, ns: cmp_rank_points at 50 and 99)
CREATE OR REPLACE TABLE cmp_stage_stats AS
WITH sums AS (
    SELECT sample_key >> 32 AS part_id, sum(dur::HUGEINT) AS total FROM cmp_sample_vals GROUP BY ALL
), points AS (
    SELECT part_id, any_value(dur) FILTER (WHERE pct = 50) AS p50_ns, any_value(dur) FILTER (WHERE pct = 99) AS p99_ns
    FROM cmp_rank_points WHERE pct IN (50, 99) GROUP BY part_id
)
SELECT p.run, p.group_key, p.stage_set, p.stage, p.seq, p.parent, p.direction, p.n,
       s.total / p.n AS mean_ns, r.p50_ns, r.p99_ns
FROM cmp_sample_parts p
JOIN sums s ON s.part_id = p.cut_part_id
JOIN points r ON r.part_id = p.cut_part_id;

-- cmp_bootstrap (cmp_bootstrap_batch(b): the rows of one batch): one row per (run, group,
-- stage set, stage, resample): the statistics of
-- one bootstrap resample. Resample r draws m = min(n, max_draws) samples with replacement;
-- draw j takes sample 1 + hash(seed, run, group, stage, r, j) mod n (io_id order,
-- cmp_sample_vals), so the same seed gives the same resamples on every machine running
-- this DuckDB. Each cut is resampled once, under its first definition's names, and every
-- definition of it gets those resamples (cmp_def_cuts). Cost: resamples x m per (run,
-- group, cut), whatever n: linear in the I/Os up to max_draws, constant above.
--   run, group_key, stage_set, stage, r (1..resamples)
--   mean_ns, p50_ns, p99_ns   of the resample (ns)
--   m, n       draws and samples: when m < n (an m-out-of-n bootstrap) the spread of these
--              around the full-sample statistic is about sqrt(n / m) too wide; cmp_lad
--              scales it back
-- cmp_bootstrap_batches: one row per part of a cut's first definition: the batch that
-- resamples it. A batch holds at most
-- cmp_params.bootstrap_batch_draws draws (a larger part is a batch of its own): the quantiles
-- of a batch's resamples keep all its draws in memory at once, so batches keep a
-- comparison of many groups and stages within the memory limit.
--   part_id, batch
CREATE OR REPLACE TABLE cmp_bootstrap_batches AS
SELECT p.part_id,
       (sum(c.resamples * least(p.n, c.max_draws)) OVER (ORDER BY p.part_id)
        - c.resamples * least(p.n, c.max_draws)) // c.bootstrap_batch_draws AS batch
FROM cmp_sample_parts p, cmp_params c
WHERE p.part_id = p.cut_part_id;

-- cmp_bootstrap_batch(b): the bootstrap draws of batch b (cmp_sample_parts cut into
-- batches of bootstrap_batch_draws draws so one batch fits in memory).
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
-- every definition of the cut
SELECT p.run, p.group_key, p.stage_set, p.stage, s.r, s.mean_ns, s.q[1] AS p50_ns, s.q[2] AS p99_ns,
       least(p.n, c.max_draws) AS m, p.n
FROM stats s JOIN cmp_sample_parts p ON p.cut_part_id = s.part_id, cmp_params c;

-- filled batch by batch by the loader (sql/compare_sides.py): INSERT INTO cmp_bootstrap
-- FROM cmp_bootstrap_batch(b) for each batch of cmp_bootstrap_batches
CREATE OR REPLACE TABLE cmp_bootstrap AS FROM cmp_bootstrap_batch(-1);
