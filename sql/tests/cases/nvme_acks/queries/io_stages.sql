-- the initiator_only set is the only one (no target host), and primary
SELECT io_id, stage_set, stage, dur, missing, (SELECT stage_set FROM primary_stage_set) AS primary_set
FROM io_stages ORDER BY io_id, stage_set, seq;
