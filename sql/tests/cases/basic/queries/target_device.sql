SELECT * FROM target_device ORDER BY cmd_key
