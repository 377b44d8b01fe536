-- the run's own connections that are not NVMe/TCP, per host, while its I/O ran
SELECT host, local_addr, local_port, remote_addr, remote_port, segments, bytes_received, bytes_sent, on_nvme_path
FROM tcp_flows ORDER BY host, bytes DESC, local_port;
