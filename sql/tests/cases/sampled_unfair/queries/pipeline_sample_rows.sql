-- the pipeline_stats rows of the sample: the check is a warning
SELECT seq, name, severity, value, meaning FROM pipeline_stats WHERE name LIKE 'sampl%' ORDER BY seq, name;
