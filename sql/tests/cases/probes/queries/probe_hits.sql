-- each probe hit, the command it belongs to and the patched event it stands for
SELECT host, system, event, ts, ctrl_id, cntlid, qid, cid, opcode, stands_for FROM probe_hits ORDER BY host, ts
