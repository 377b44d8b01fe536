-- each I/O's ACK search starts at its own controller's send: A's at 1300000, not at B's 1100000
SELECT i.io_id, i.queue_key, a.sock, a.sent_ts, a.ack_ts, a.response_start_ts, a.response_first_ts, a.response_ts,
       a.wire_wait_ns, a.round_trip_ns, a.srtt_us, a.not_split
FROM io i LEFT JOIN io_nvme_acks a USING (io_n) ORDER BY i.io_id;
