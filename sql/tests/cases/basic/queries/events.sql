SELECT host, role, event, ts, cpu, ctrl_id, qid, cid, opcode, slba, nlb, dev, sector, bytes, rwbs FROM events ORDER BY host, ts, event
