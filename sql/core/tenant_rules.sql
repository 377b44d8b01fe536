-- requires: none
-- input: tenant_rules  a tenants file's [[tenant]] rules (reports/tenants/tenants_file.py)

-- tenant_rules: one row per cgroup pattern of a tenants file's [[tenant]] entries, in the
-- file's order (the first match wins; an input of the loader, by default none: every cgroup
-- is then its top-level cgroup's tenant, sql/core/tenants.sql).
--   rule_n   order in the file (1..)
--   pattern  a glob over the cgroup path ('/kubepods/*web*': * any characters, ? one, [a-z])
--   tenant   the tenant's name
--   class    the tenant's class (NULL: none)
CREATE OR REPLACE TABLE tenant_rules (rule_n INTEGER, pattern VARCHAR, tenant VARCHAR, class VARCHAR);
