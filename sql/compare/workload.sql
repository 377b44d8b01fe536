-- requires: none
-- input: cmp_io  each side's I/Os (compare/input.sql documents it; sql/compare_sides.py makes it)

-- Compare layer: did both sides run the same workload? A verdict compares the time I/Os of the
-- same kind took; when the I/O mix itself changed (randread against a read/write mix, 4 KiB
-- against 128 KiB) the change may be the workload's, not the system's. Compared here: the
-- mix of I/O types and of sizes over each side's I/Os (every repeat of a side together). Not
-- compared: queue depth and jobs (commands ahead on a queue and other streams are causes the
-- verdict reads: few queues, interference), nor hosts.

-- cmp_workload_mix: one row per (aspect, value) present on either side: its share of each
-- side's I/Os.
--   aspect       'io types' or 'io sizes'
--   value        the type (read, write, ...) or the size in bytes, as text
--   base_share, run_share   share of the side's I/Os (0..1; 0 when absent)
CREATE OR REPLACE VIEW cmp_workload_mix AS
WITH per AS (
    SELECT run, 'io types' AS aspect, io_type AS value, count(*) AS n FROM cmp_io GROUP BY ALL
    UNION ALL
    SELECT run, 'io sizes', CAST(size_bytes AS VARCHAR), count(*) FROM cmp_io GROUP BY ALL
), tot AS (SELECT run, count(*) AS n FROM cmp_io GROUP BY run)
SELECT aspect, value,
       coalesce(sum(p.n) FILTER (WHERE p.run = 'base') / any_value(tb.n), 0) AS base_share,
       coalesce(sum(p.n) FILTER (WHERE p.run = 'run') / any_value(tr.n), 0) AS run_share
FROM per p, (SELECT n FROM tot WHERE run = 'base') tb, (SELECT n FROM tot WHERE run = 'run') tr
GROUP BY aspect, value;

-- cmp_workload_differences: one row per aspect whose mix moved by more than a fifth of the
-- I/Os (sum of the share moves / 2, the total variation distance, > 0.2): the two sides ran
-- different workloads there. No row: the same workload as far as these aspects tell.
--   aspect       'io types' or 'io sizes'
--   moved        the share of I/Os that would have to change kind to turn one mix into the other (0..1)
--   base, run    each side's mix in words, its four largest shares first, then how many more
--                values ('read 100%', 'write 51%, read 49%', '4096 8%, 8192 7%, ..., and 28 more')
CREATE OR REPLACE VIEW cmp_workload_differences AS
WITH ranked AS (
    SELECT *, row_number() OVER (PARTITION BY aspect ORDER BY base_share DESC, value) AS base_rank,
              row_number() OVER (PARTITION BY aspect ORDER BY run_share DESC, value) AS run_rank
    FROM cmp_workload_mix
)
SELECT aspect, sum(abs(run_share - base_share)) / 2 AS moved,
       -- the four largest shares of each side, then how many more values it has
       string_agg(printf('%s %.0f%%', value, 100 * base_share), ', ' ORDER BY base_rank)
           FILTER (WHERE base_share >= 0.005 AND base_rank <= 4)
           || coalesce(', and ' || nullif(count(*) FILTER (WHERE base_share > 0 AND base_rank > 4), 0) || ' more', '') AS base,
       string_agg(printf('%s %.0f%%', value, 100 * run_share), ', ' ORDER BY run_rank)
           FILTER (WHERE run_share >= 0.005 AND run_rank <= 4)
           || coalesce(', and ' || nullif(count(*) FILTER (WHERE run_share > 0 AND run_rank > 4), 0) || ' more', '') AS run
FROM ranked
GROUP BY aspect
HAVING sum(abs(run_share - base_share)) / 2 > 0.2;
