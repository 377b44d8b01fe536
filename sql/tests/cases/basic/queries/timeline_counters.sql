SELECT * FROM timeline_counters ORDER BY uuid, ts
