-- a traced run keeps its detailed sets and the initiator-only one beside them; ntprof is primary
SELECT DISTINCT stage_set, (SELECT stage_set FROM primary_stage_set) AS primary_set FROM io_stage_definitions ORDER BY stage_set;
