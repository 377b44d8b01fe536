-- the probes' hits as the patched events they stand for (a retried send counts once)
SELECT host, system, event, ts, ctrl_id, cntlid, qid, cid, evidence FROM events
WHERE system IN ('nvme_tcp', 'nvmet_tcp') ORDER BY host, ts
