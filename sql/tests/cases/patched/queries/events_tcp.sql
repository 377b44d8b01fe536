SELECT host, event, ts, ctrl_id, cntlid, qid, cid, opcode, data_len, queue_len, send_list_len, queue_idx FROM events WHERE system IN ('nvme_tcp', 'nvmet_tcp') ORDER BY host, ts
