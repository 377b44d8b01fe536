SELECT * FROM timeline_tracks ORDER BY uuid
