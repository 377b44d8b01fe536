-- requires: core/stage_definitions, compare/params
-- input: cmp_source, cmp_io  each side's rows (compare/input.sql documents them; sql/compare_sides.py makes them)

-- Which path degraded (native multipath): each side's I/O per path (cmp_io.path, io.path:
-- '<host>/nvme<N>@<traddr>:<trsvcid>'), the time each I/O spent in the network and on the
-- target, and the one path whose time there grew while the others' did not. A verdict whose
-- bottleneck is the network or the target names it (cmp_verdict: path_degraded).

-- cmp_path_stage: one row per (side, stage set, path): the mean per I/O of its network and
-- target time: the sum of its top-level stages whose category (stage_definitions) is network,
-- fabric, target_cpu, target, target_device or target_side (repeats pooled).
--   run ('base' / 'run'), stage_set, path, ios, mean_ns
CREATE OR REPLACE VIEW cmp_path_stage AS
WITH cat AS (
    SELECT stage_set, stage FROM stage_definitions
    WHERE category IN ('network', 'fabric', 'target_cpu', 'target', 'target_device', 'target_side')
), per_io AS (
    SELECT s.run, s.rep, s.io_rank, s.stage_set, sum(s.dur) AS ns
    FROM cmp_source s JOIN cat USING (stage_set, stage)
    WHERE s.parent IS NULL AND s.dur IS NOT NULL
    GROUP BY ALL
)
SELECT p.run, p.stage_set, i.path, count(*) AS ios, avg(p.ns) AS mean_ns
FROM per_io p JOIN cmp_io i USING (run, rep, io_rank)
WHERE i.path IS NOT NULL
GROUP BY ALL;

-- cmp_degraded_path: at most one row per stage set: the path whose network and target time grew
-- most from the base to the run, when the run spread its I/O over two paths or more that the
-- base also used, that growth is at least cmp_params' minimums (min_abs_change_ns, and
-- min_rel_change of its base), and no other path grew by more than a quarter of it (a path that
-- degrades alone: the others ran as before; all of them slower is the network's or the
-- target's, not a path's).
--   stage_set, path, base_ns, run_ns (mean per I/O), change_ns
--   others_change_ns   the largest growth of another path (ns; may be negative)
--   paths              the paths both sides used
CREATE OR REPLACE VIEW cmp_degraded_path AS
WITH both_sides AS (
    SELECT r.stage_set, r.path, b.mean_ns AS base_ns, r.mean_ns AS run_ns, r.mean_ns - b.mean_ns AS change_ns
    FROM (SELECT * FROM cmp_path_stage WHERE run = 'run') r
    JOIN (SELECT * FROM cmp_path_stage WHERE run = 'base') b USING (stage_set, path)
), ranked AS (
    SELECT *, row_number() OVER (PARTITION BY stage_set ORDER BY change_ns DESC, path) AS n,
           count(*) OVER (PARTITION BY stage_set) AS paths
    FROM both_sides
), others AS (
    SELECT stage_set, max(change_ns) AS others_change_ns FROM ranked WHERE n > 1 GROUP BY stage_set
)
SELECT r.stage_set, r.path, r.base_ns, r.run_ns, r.change_ns, o.others_change_ns, r.paths
FROM ranked r JOIN others o USING (stage_set) CROSS JOIN cmp_params p
WHERE r.n = 1 AND r.paths >= 2
  AND r.change_ns >= greatest(p.min_abs_change_ns, p.min_rel_change * r.base_ns)
  AND o.others_change_ns <= 0.25 * r.change_ns;
