SELECT * FROM host_event_counts ORDER BY host, system, event
