-- requires: none
-- input: cmp_io, cmp_run_info  each side's rows (compare/input.sql documents them; sql/compare_sides.py makes them)

-- Whose traffic grew (capture key tenants=): each side's I/O per tenant, and the tenant whose
-- bytes grew most from the base to the run. A verdict whose cause is traffic sharing the path
-- (cmp_verdict: interference, few_queues, busy_device, target_side, target_cpu, nic_contention)
-- names it: the offending tenant and its class.

-- cmp_tenant_traffic: one row per (side, tenant) with I/O: bytes and I/Os per run of the side
-- (repeats averaged).
--   run ('base' / 'run'), tenant, class, ios, bytes
CREATE OR REPLACE VIEW cmp_tenant_traffic AS
SELECT i.run, i.tenant, any_value(i.class) AS class,
       count(*) / any_value(r.reps) AS ios, sum(i.size_bytes) / any_value(r.reps) AS bytes
FROM cmp_io i JOIN (SELECT run, count(*) AS reps FROM cmp_run_info GROUP BY run) r USING (run)
WHERE i.tenant IS NOT NULL
GROUP BY i.run, i.tenant;

-- cmp_tenant_growth: at most one row: the tenant whose bytes grew most from the base to the
-- run (none when no tenant's did, or neither side recorded tenants).
--   tenant, class, base_bytes, run_bytes (per run of each side), growth_bytes
CREATE OR REPLACE VIEW cmp_tenant_growth AS
SELECT coalesce(r.tenant, b.tenant) AS tenant, coalesce(r.class, b.class) AS class,
       coalesce(b.bytes, 0) AS base_bytes, coalesce(r.bytes, 0) AS run_bytes,
       coalesce(r.bytes, 0) - coalesce(b.bytes, 0) AS growth_bytes
FROM (SELECT * FROM cmp_tenant_traffic WHERE run = 'run') r
FULL JOIN (SELECT * FROM cmp_tenant_traffic WHERE run = 'base') b USING (tenant)
WHERE coalesce(r.bytes, 0) > coalesce(b.bytes, 0)
ORDER BY growth_bytes DESC, tenant LIMIT 1;
