-- each run's TCP traffic that is not NVMe/TCP on the NVMe/TCP path (kB/s), beside NVMe/TCP's data: the nic_contention evidence
SELECT run, round(other_traffic_bytes_per_s / 1e3) AS other_kb_per_s, other_traffic_path, other_traffic_top_flow,
       round(nvme_data_bytes_per_s / 1e3) AS nvme_kb_per_s
FROM cmp_run_info ORDER BY run;
