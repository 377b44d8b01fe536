-- the NVMe/TCP connections are not other traffic
SELECT host, sock_cookie, local_port, remote_port, segments, bytes_received FROM tcp_flows ORDER BY sock_cookie;
