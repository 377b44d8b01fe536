SELECT host, tracepoints, probes, source, asked FROM host_milestones ORDER BY host
