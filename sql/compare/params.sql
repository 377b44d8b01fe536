-- requires: none
-- input: cmp_params  the values compare's flags give (reports/compare/params.py)

-- cmp_params: one row: the knobs of the comparison (an input of the loader: `ntscope compare`
-- passes the values its flags give, the other columns keep these defaults).
--   resamples       bootstrap resamples per (run, group, stage)
--   seed            hash seed: same seed, same intervals
--   max_draws       m: a (run, group, stage) with more samples n than this is resampled
--                   m out of n, its deviations from the full-sample statistic scaled by
--                   sqrt(m / n) (see cmp_bootstrap, cmp_lad); up to it every resample draws n
--   min_rel_change  |LAD - 1| below this is "no significant change" even when the CI
--                   excludes 1 (two runs of the same workload in the lab differ by up to
--                   this much, see reports/compare/README.md)
--   min_abs_change_ns  the same for the absolute change of the mean (ns)
--   bootstrap_batch_draws  draws resampled at once (cmp_bootstrap_batches): bounds the
--                   bootstrap's memory (~40 bytes a draw), not its result
--   cpu_wait_min_share  a side's CPU is named as the cause when the time its NVMe/TCP work
--                   waited for that CPU per I/O (io_cpu_wait, the group's mean) grew by at
--                   least this share of the bottleneck stage's change (and by min_abs_change_ns):
--                   the CPU explains at least half of what the stage added. Lab
--                   (reports/compare/README.md): a busy target CPU 100% of the change (one
--                   loop, qd 16); a bulk TCP stream on the link 27% (target) and 39% (initiator)
--   cpu_wait_min_ratio  NULL: no longer used (the rule before the per-I/O wait asked the mean
--                   wait of one softirq run to grow this many times; kept for compare.json)
--   nic_other_min_share  the network is named as shared with other traffic (nic_contention)
--                   when the TCP traffic that is not NVMe/TCP on the NVMe/TCP path's interface
--                   (run_other_traffic) grew by at least this share of all the path carried in
--                   the run (that traffic + NVMe/TCP's data), both runs having recorded it
--   confidence      the confidence level of every interval (the bootstrap's percentile
--                   intervals, the run-to-run t interval of repeats): 0.95 is a 95% interval
--   group_by        the fields the I/Os are grouped by (io_group_key; compare --group-by):
--                   type and size, as analyze's default
-- Fractions are DOUBLE (a literal 0.10 is a DECIMAL, which a JSON document would carry as text).
-- The flags: --resamples, --seed, --confidence, --min-rel-change, --min-abs-change, --group-by.
CREATE OR REPLACE TABLE cmp_params AS
SELECT 200 AS resamples, 42 AS seed, 4000 AS max_draws, 4000000 AS bootstrap_batch_draws,
       0.10::DOUBLE AS min_rel_change, 20000::BIGINT AS min_abs_change_ns, NULL::DOUBLE AS cpu_wait_min_ratio,
       0.5::DOUBLE AS cpu_wait_min_share, 0.1::DOUBLE AS nic_other_min_share, 0.95::DOUBLE AS confidence,
       ['type', 'size']::VARCHAR[] AS group_by;
