-- the read submitted before tracing is a completion without a submit: kind 'unknown', and the
-- row says so (not "admin/fabrics")
SELECT seq, name, severity, value, meaning FROM pipeline_stats WHERE name LIKE 'non_io_commands%' ORDER BY name;
