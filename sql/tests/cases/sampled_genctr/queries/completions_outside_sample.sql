-- The initiator's completions of commands outside the sample are recorded on purpose: every
-- sampled command is paired (complete), and no completion inside the sample is left
-- unpaired (the same before and after nvme_commands drops the outside ones).
SELECT count(*) FILTER (WHERE state = 'complete') AS complete,
       count(*) FILTER (WHERE state = 'no_submission' AND NOT outside_sample(host, cid)) AS unpaired_in_sample
FROM nvme_commands WHERE role = 'initiator' AND qid > 0;
