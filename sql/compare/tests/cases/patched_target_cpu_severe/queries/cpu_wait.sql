-- each side's mean wait for the CPU (us): the evidence of the target_cpu rule
SELECT run, round(target_io_work_wait_ns / 1e3) AS target_io_work_us, round(target_net_rx_wait_ns / 1e3) AS target_net_rx_us,
       round(initiator_io_work_wait_ns / 1e3) AS initiator_io_work_us, round(initiator_net_rx_wait_ns / 1e3) AS initiator_net_rx_us
FROM cmp_run_info ORDER BY run;
