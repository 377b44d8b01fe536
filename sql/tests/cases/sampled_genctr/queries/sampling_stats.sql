SELECT * FROM sampling_stats ORDER BY seq, name;
