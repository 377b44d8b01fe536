SELECT * FROM target_device_link ORDER BY cmd_key
