SELECT * FROM command_match ORDER BY i_cmd
