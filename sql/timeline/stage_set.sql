-- requires: core/stages
-- input: timeline_stage_set  the report's primary stage set (reports/timeline/perfetto_trace.py)

-- timeline_stage_set: one row: the stage set the timeline draws, by default
-- primary_stage_set (the report passes its own, an input of the loader, when its --stage-set
-- leaves the primary set out).
--   stage_set
CREATE OR REPLACE VIEW timeline_stage_set AS
SELECT stage_set FROM primary_stage_set;
