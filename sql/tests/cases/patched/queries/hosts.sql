SELECT * FROM hosts ORDER BY host
