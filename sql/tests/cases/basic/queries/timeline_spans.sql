SELECT s.start_ts, s.n, s.slot, l.part, l.stage, s.s, s.e, s.dur
FROM timeline_spans s JOIN timeline_slots l USING (slot) ORDER BY s.start_ts, s.n, s.slot
