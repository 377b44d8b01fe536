SELECT io_id, group_key, group_json FROM io_selected ORDER BY io_id
