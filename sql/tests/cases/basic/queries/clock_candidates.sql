SELECT * FROM clock_candidates ORDER BY i_cmd, t_cmd
