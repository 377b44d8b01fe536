SELECT * FROM lba_shift ORDER BY host
