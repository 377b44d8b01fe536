-- requires: core/hosts, core/join
-- loaded: with every run
-- input: run_hosts, raw_<system>  the run's host folders and event files (sql/views.py)

-- Other traffic on the NVMe/TCP path: TCP connections that are not NVMe/TCP, from the
-- capture's tcp:tcp_probe events (capture key net_flows; the kernel filter kept only
-- connections on neither of the host's NVMe/TCP ports). tcp_probe fires for each segment a
-- host receives on an established connection: a flow it receives shows as data (data_len),
-- a flow it sends as ACKs that advance snd_una. Every table is empty without the events.

-- sockaddr_text(bytes, family): the address of a tracepoint's sockaddr_in / sockaddr_in6 array
-- ('169.254.10.1'; IPv6 as eight hex groups), NULL for another family.
CREATE OR REPLACE MACRO sockaddr_text(a, family) AS
    CASE family WHEN 2 THEN printf('%d.%d.%d.%d', a[5], a[6], a[7], a[8])
                WHEN 10 THEN lower(array_to_string(
                    list_transform(range(0, 8), lambda g: printf('%x', a[9 + 2 * g] * 256 + a[10 + 2 * g])), ':')) END;

-- nvme_tcp_path_addresses: one row per (host, address) on the NVMe/TCP path's interface: the
-- addresses of each interface that holds an NVMe/TCP connection's local address (host.json:
-- an initiator controller's src_addr, a target port's traddr; interfaces from net_flows).
-- Without the interfaces, the local addresses themselves.
--   host, address, interface (NULL when host.json lists no interfaces)
CREATE OR REPLACE VIEW nvme_tcp_path_addresses AS
WITH local AS (
    SELECT host, regexp_extract(unnest(from_json(host_json->'$.nvme_controllers[*].address', '["VARCHAR"]')),
                                'src_addr=([^,]+)', 1) AS address
    FROM run_hosts WHERE host_json->>'role' = 'initiator'
    UNION
    SELECT host, unnest(from_json(host_json->'$.nvmet.ports[*].traddr', '["VARCHAR"]'))
    FROM run_hosts WHERE host_json->>'role' = 'target'
), ifaces AS (
    SELECT host, i->>'ifname' AS interface, unnest(from_json(i->'$.addr_info[*].local', '["VARCHAR"]')) AS address
    FROM (SELECT host, unnest(from_json(host_json->'$.net_flows.interfaces', '["JSON"]')) AS i FROM run_hosts)
), path_if AS (
    SELECT DISTINCT f.host, f.interface FROM ifaces f JOIN local l ON l.host = f.host AND l.address = f.address
)
SELECT f.host, f.address, f.interface FROM ifaces f JOIN path_if USING (host, interface)
UNION
SELECT host, address, NULL FROM local l
WHERE address <> '' AND NOT EXISTS (SELECT 1 FROM path_if p WHERE p.host = l.host);

-- nvme_tcp_ports: one row per (host, NVMe/TCP service port) the capture recorded tcp:tcp_probe
-- on (host.json nvme_acks.nvme_tcp_ports, capture key nvme_acks); empty for a run without.
--   host, port
CREATE OR REPLACE VIEW nvme_tcp_ports AS
SELECT host, unnest(from_json(host_json->'$.nvme_acks.nvme_tcp_ports', '["INTEGER"]')) AS port
FROM run_hosts WHERE json_type(host_json, '$.nvme_acks') = 'OBJECT';

-- nvme_io_windows: one row per host with I/O commands: from its first I/O command to its last
-- (initiator: bio queued .. request completed, its own clock; target: nvmet_req_init ..
-- nvmet_req_complete of the matched commands), the time other traffic could delay them.
--   host, from_ts, to_ts (ns, host clock)
CREATE OR REPLACE VIEW nvme_io_windows AS
SELECT i.initiator_host AS host, min(coalesce(i.i_bio_queue_ts, i.i_setup_ts)) - any_value(coalesce(c.shift_ns, 0)) AS from_ts,
       max(coalesce(i.i_rq_complete_ts, i.i_complete_rq_ts)) - any_value(coalesce(c.shift_ns, 0)) AS to_ts
FROM io i LEFT JOIN initiator_clock c ON c.host = i.initiator_host GROUP BY i.initiator_host
UNION ALL
SELECT target_host, min(t_init_ts), max(t_complete_ts) FROM io WHERE match_state = 'matched' GROUP BY target_host;

-- tcp_flows: one row per (host, TCP connection that is not NVMe/TCP) seen while the host's
-- I/O ran (nvme_io_windows).
--   host, role
--   sock_cookie        the kernel's socket cookie (one per connection and host)
--   local_addr, local_port, remote_addr, remote_port
--   segments           tcp_probe events (segments this host received on it)
--   bytes_received     payload bytes received (sum of data_len)
--   bytes_sent         bytes this host sent and had acknowledged (snd_una's advance between
--                      its events, modulo 2^32)
--   bytes              bytes_received + bytes_sent
--   first_ts, last_ts  its first and last event (ns, host clock)
--   on_nvme_path       its local address is on the NVMe/TCP path's interface
--                      (nvme_tcp_path_addresses); true for every flow when the host's path
--                      is unknown (a wildcard or unrecorded local address)
CREATE OR REPLACE VIEW tcp_flows AS
WITH ev AS (
    SELECT p.host, p.ts, p.sock_cookie, p.family, p.saddr, p.daddr, p.sport, p.dport, p.data_len, p.snd_una,
           p.snd_una - lag(p.snd_una) OVER (PARTITION BY p.host, p.sock_cookie ORDER BY p.ts) AS una_step
    FROM raw_tcp p JOIN nvme_io_windows h ON h.host = p.host AND p.ts BETWEEN h.from_ts AND h.to_ts
    WHERE p.event = 'tcp_probe'
      -- a host that also recorded its NVMe/TCP connections (capture key nvme_acks): not other traffic
      AND NOT EXISTS (SELECT 1 FROM nvme_tcp_ports n WHERE n.host = p.host AND n.port IN (p.sport, p.dport))
), f AS (
    SELECT host, sock_cookie, any_value(family) AS family, any_value(saddr) AS saddr, any_value(daddr) AS daddr,
           any_value(sport) AS sport, any_value(dport) AS dport, count(*) AS segments,
           coalesce(sum(data_len), 0) AS bytes_received,
           -- a step back (reordered ACK state) or a wrap of the 32-bit sequence: its modulus
           coalesce(sum(CASE WHEN una_step >= 0 THEN una_step WHEN una_step < -2147483648 THEN una_step + 4294967296 ELSE 0 END), 0) AS bytes_sent,
           min(ts) AS first_ts, max(ts) AS last_ts
    FROM ev GROUP BY host, sock_cookie
), known AS (SELECT DISTINCT host FROM nvme_tcp_path_addresses WHERE address NOT IN ('0.0.0.0', '::'))
SELECT f.host, h.role, f.sock_cookie, sockaddr_text(f.saddr, f.family) AS local_addr, f.sport AS local_port,
       sockaddr_text(f.daddr, f.family) AS remote_addr, f.dport AS remote_port, f.segments,
       f.bytes_received::BIGINT AS bytes_received, f.bytes_sent::BIGINT AS bytes_sent,
       (f.bytes_received + f.bytes_sent)::BIGINT AS bytes, f.first_ts, f.last_ts,
       f.host NOT IN (SELECT host FROM known)
         OR sockaddr_text(f.saddr, f.family) IN (SELECT address FROM nvme_tcp_path_addresses a WHERE a.host = f.host)
         AS on_nvme_path
FROM f JOIN hosts h USING (host);

-- path_other_traffic: one row per host that recorded net_flows (host.json net_flows): the TCP
-- traffic that is not NVMe/TCP on its NVMe/TCP path's interface while its I/O ran.
--   host, role
--   path             the path's interface(s) and addresses as text ('eth0 169.254.10.1'), or
--                    'any interface' when the NVMe/TCP local address is not known
--   window_ns        the host's I/O window (nvme_io_windows, ns)
--   flows            connections on the path;  other_bytes  their bytes (tcp_flows.bytes)
--   other_bytes_per_s  other_bytes per second of the window
--   top_flow         the connection with the most bytes ('local:port <-> remote:port');
--                    top_flow_bytes  its bytes
CREATE OR REPLACE VIEW path_other_traffic AS
WITH rec AS (
    SELECT r.host, h.role, greatest(w.to_ts - w.from_ts, 1) AS window_ns
    FROM run_hosts r JOIN hosts h USING (host) JOIN nvme_io_windows w USING (host)
    WHERE json_type(r.host_json, '$.net_flows') = 'OBJECT'
), p AS (
    SELECT host, string_agg(DISTINCT coalesce(interface || ' ', '') || address, ', ' ORDER BY coalesce(interface || ' ', '') || address) AS path
    FROM nvme_tcp_path_addresses WHERE address NOT IN ('0.0.0.0', '::') GROUP BY host
), f AS (
    SELECT host, count(*) AS flows, sum(bytes) AS other_bytes,
           arg_max(local_addr || ':' || local_port || ' <-> ' || remote_addr || ':' || remote_port, bytes) AS top_flow,
           max(bytes) AS top_flow_bytes
    FROM tcp_flows WHERE on_nvme_path GROUP BY host
)
SELECT rec.host, rec.role, coalesce(p.path, 'any interface') AS path, rec.window_ns,
       coalesce(f.flows, 0) AS flows, coalesce(f.other_bytes, 0)::BIGINT AS other_bytes,
       coalesce(f.other_bytes, 0) * 1e9 / rec.window_ns AS other_bytes_per_s, f.top_flow, f.top_flow_bytes::BIGINT AS top_flow_bytes
FROM rec LEFT JOIN p USING (host) LEFT JOIN f USING (host);

-- run_other_traffic: one row when a host recorded net_flows: the run's other traffic on the
-- NVMe/TCP path (the host that saw the most: a flow between two traced hosts shows on both)
-- beside NVMe/TCP's own data rate.
--   host, path, top_flow, top_flow_bytes   of that host (path_other_traffic)
--   other_bytes_per_s       its path_other_traffic.other_bytes_per_s (bytes/s)
--   nvme_data_bytes_per_s   the I/Os' data bytes per second of the initiators' I/O windows
--                           (sum of io.size_bytes; PDU and TCP headers not counted)
CREATE OR REPLACE VIEW run_other_traffic AS
WITH top AS (
    SELECT * FROM path_other_traffic ORDER BY other_bytes_per_s DESC, host LIMIT 1
), nvme AS (
    SELECT sum(i.size_bytes) * 1e9 / greatest(max(w.to_ts) - min(w.from_ts), 1) AS nvme_data_bytes_per_s
    FROM io i JOIN nvme_io_windows w ON w.host = i.initiator_host
)
SELECT top.host, top.path, top.top_flow, top.top_flow_bytes, top.other_bytes_per_s, nvme.nvme_data_bytes_per_s
FROM top, nvme;
