-- every I/O's ACK, its response and the wire ahead of it, or why it is not split
SELECT i.io_id, i.queue_key, a.sock, a.sent_ts, a.ack_ts, a.response_start_ts, a.response_first_ts, a.response_ts,
       a.wire_wait_ns, a.round_trip_ns, a.srtt_us, a.not_split
FROM io i LEFT JOIN io_nvme_acks a USING (io_n) ORDER BY i.io_id;
