-- requires: core/hosts, core/join, core/evidence, core/cpu_wait, core/net_flows, core/nvme_acks, recovery/outages

-- A compare side's facts, on the run's own connection (sql/compare_sides.py writes its row
-- beside the side's rows; the comparison reads it as cmp_run_info, sql/compare/input.sql).

-- cmp_side_info: one row: what the verdict needs to know of the run besides its stages.
--   offset_uncertainty_ns   the largest uncertainty of a host pair's clock offset (ns)
--   trace_clocks            the hosts' trace clocks, comma-separated ('?' unknown)
--   clock_synced            every host pair's clocks are synced (bool)
--   input_errors            the input_error pipeline stats, comma-separated (NULL: none)
--   roles                   the hosts' roles, comma-separated
--   target_local_io_per_s   the target's own I/O on its device that no NVMe command made (/s)
--   digest                  the initiators' workload digests, comma-separated
--   initiator_io_work_wait_ns, target_io_work_wait_ns   mean wait of an io_work run for a CPU (ns)
--   initiator_net_rx_wait_ns, target_net_rx_wait_ns     mean wait of a NET_RX softirq run (ns)
--   target_cpu_wait_per_io_ns, initiator_cpu_wait_per_io_ns   mean CPU wait per io (ns)
--   other_traffic_bytes_per_s, other_traffic_path, other_traffic_top_flow, nvme_data_bytes_per_s
--                           as in run_other_traffic
--   nvme_srtt_us            the median of the kernel's smoothed round trip (srtt, us) over the
--                           segments the initiators received on NVMe/TCP connections (capture
--                           key nvme_acks; NULL without)
--   outages                 the controllers' outages (controller_outages)
--   outage_max_ns           the longest of them without an answer (ns; NULL: none)
--   outage_ios_held         the I/Os they held, summed
CREATE OR REPLACE VIEW cmp_side_info AS
SELECT (SELECT max(uncertainty_ns) FROM clock_offset) AS offset_uncertainty_ns,
       string_agg(DISTINCT coalesce(trace_clock, '?'), ',') AS trace_clocks,
       (SELECT bool_and(synced) FROM clock_offset) AS clock_synced,
       (SELECT string_agg(name, ', ' ORDER BY name) FROM input_error_stats) AS input_errors,
       string_agg(DISTINCT role, ',' ORDER BY role) AS roles,
       (SELECT sum(local_per_s) FROM target_local_io) AS target_local_io_per_s,
       string_agg(DISTINCT digest, ',' ORDER BY digest) FILTER (WHERE role = 'initiator') AS digest,
       (SELECT avg(wait_ns) FROM io_work_runs WHERE role = 'initiator') AS initiator_io_work_wait_ns,
       (SELECT avg(wait_ns) FROM io_work_runs WHERE role = 'target') AS target_io_work_wait_ns,
       (SELECT avg(wait_ns) FROM net_rx_runs WHERE role = 'initiator') AS initiator_net_rx_wait_ns,
       (SELECT avg(wait_ns) FROM net_rx_runs WHERE role = 'target') AS target_net_rx_wait_ns,
       (SELECT avg(target_wait_ns) FROM io_cpu_wait) AS target_cpu_wait_per_io_ns,
       (SELECT avg(initiator_wait_ns) FROM io_cpu_wait) AS initiator_cpu_wait_per_io_ns,
       (SELECT other_bytes_per_s FROM run_other_traffic) AS other_traffic_bytes_per_s,
       (SELECT path FROM run_other_traffic) AS other_traffic_path,
       (SELECT top_flow FROM run_other_traffic) AS other_traffic_top_flow,
       (SELECT nvme_data_bytes_per_s FROM run_other_traffic) AS nvme_data_bytes_per_s,
       (SELECT median(srtt_us) FROM nvme_ack_segments) AS nvme_srtt_us,
       (SELECT count(*) FROM controller_outages) AS outages,
       (SELECT max(outage_ns) FROM controller_outages) AS outage_max_ns,
       (SELECT coalesce(sum(ios_held), 0) FROM controller_outages)::BIGINT AS outage_ios_held
FROM hosts;
