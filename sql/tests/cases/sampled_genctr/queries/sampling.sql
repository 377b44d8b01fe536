SELECT * FROM sampling ORDER BY host;
