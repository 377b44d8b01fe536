SELECT * FROM io_export ORDER BY io_id
