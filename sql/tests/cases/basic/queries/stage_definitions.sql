SELECT stage_set, count(*) AS stages, count(*) FILTER (WHERE parent IS NULL) AS top_level FROM stage_definitions GROUP BY ALL ORDER BY 1
