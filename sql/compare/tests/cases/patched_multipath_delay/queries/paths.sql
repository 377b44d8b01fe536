-- each path's network and target time per side: only path B (169.254.11.2) grew
SELECT run, stage_set, path, ios, round(mean_ns / 1e3) AS mean_us
FROM cmp_path_stage WHERE stage_set = 'ntprof' ORDER BY run, path;
