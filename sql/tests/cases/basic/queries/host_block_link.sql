SELECT * FROM host_block_link ORDER BY submit_key
