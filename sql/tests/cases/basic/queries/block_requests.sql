SELECT * EXCLUDE (req_key) FROM block_requests ORDER BY host, issue_ts
