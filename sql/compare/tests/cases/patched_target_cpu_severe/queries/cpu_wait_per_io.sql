-- per I/O, how long the queue's NVMe/TCP work waited for each host's CPU (us): the target_cpu rule's evidence
SELECT group_key, round(target_cpu_wait_base_ns / 1e3) AS target_base_us, round(target_cpu_wait_run_ns / 1e3) AS target_run_us,
       round(initiator_cpu_wait_base_ns / 1e3) AS initiator_base_us, round(initiator_cpu_wait_run_ns / 1e3) AS initiator_run_us,
       round((target_cpu_wait_run_ns - target_cpu_wait_base_ns) / stage_change_ns, 2) AS target_share_of_stage_change
FROM cmp_verdict ORDER BY group_key;
