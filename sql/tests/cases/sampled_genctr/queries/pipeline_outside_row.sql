-- the pipeline_stats row of the completions outside the sample: 2 by cid + 1 by block request
SELECT seq, name, severity, value, meaning FROM pipeline_stats WHERE name LIKE 'completions_outside_sample%';
