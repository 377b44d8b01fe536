-- requires: core/commands
-- loaded: with every run

-- Evidence the compare verdict weighs besides the stages (read per run into cmp_run_info).

-- target_local_io: one row per target backing device that served NVMe commands: how much
-- other I/O it served in the same time (a fio or a database on the target itself). A slow
-- device and a busy device look alike in the stages; this tells them apart.
--   host, dev          target host and backing device (dev_t)
--   requests           completed block requests on the device
--   nvme_requests      of those, linked to an NVMe command (target_device_link)
--   local_requests     the others: I/O the target issued itself
--   window_ns          first issue to last completion on the device (ns, target clock)
--   local_per_s        local_requests per second of that window
--   local_share        local_requests / requests
CREATE OR REPLACE VIEW target_local_io AS
WITH linked AS (SELECT DISTINCT req_n FROM target_device_link_rows),
per_dev AS (
    SELECT b.host, b.dev, count(*) AS requests, count(l.req_n) AS nvme_requests,
           greatest(max(b.complete_ts) - min(b.issue_ts), 1) AS window_ns
    FROM block_request_rows b LEFT JOIN linked l ON l.req_n = b.rowid
    WHERE b.role = 'target' AND b.state = 'complete'
    GROUP BY b.host, b.dev
)
SELECT host, dev, requests, nvme_requests, requests - nvme_requests AS local_requests, window_ns,
       (requests - nvme_requests) * 1e9 / window_ns AS local_per_s,
       (requests - nvme_requests) / requests AS local_share
FROM per_dev WHERE nvme_requests > 0;
