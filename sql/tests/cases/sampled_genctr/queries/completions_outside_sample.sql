-- The initiator's lifetimes by state: the ten sampled reads complete, the read submitted
-- before tracing a no_submission lifetime (its block request was not issued in the trace);
-- the unsampled R2T write's completion (cid 3) and the two outside the rule are not lifetimes.
SELECT state, count(*) AS lifetimes, count(*) FILTER (WHERE cid = 3) AS with_cid_3
FROM nvme_commands WHERE role = 'initiator' AND qid > 0 GROUP BY state ORDER BY state;
