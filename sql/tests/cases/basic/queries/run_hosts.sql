SELECT host, metadata_json->>'trace_clock' AS clock, host_json IS NULL AS no_host_json FROM run_hosts ORDER BY host
