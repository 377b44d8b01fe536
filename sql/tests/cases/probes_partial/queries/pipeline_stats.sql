SELECT seq, name, severity, value FROM pipeline_stats ORDER BY seq, name
