SELECT host, queue_key, sock, votes, round(share, 3) AS share FROM nvme_ack_queue_sockets ORDER BY queue_key;
