-- The initiator's completions of commands outside the sample are recorded on purpose; every
-- completion nvme_commands could not pair must be one of them (none from the sample).
SELECT outside_sample(host, cid) AS outside, state, count(*) AS commands
FROM nvme_commands WHERE role = 'initiator' AND qid > 0
GROUP BY ALL ORDER BY ALL;
