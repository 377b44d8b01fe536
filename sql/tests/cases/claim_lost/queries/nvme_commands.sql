SELECT * FROM nvme_commands ORDER BY host, coalesce(submit_ts, complete_ts)
