SELECT * FROM unmatched_target_commands ORDER BY t_cmd
