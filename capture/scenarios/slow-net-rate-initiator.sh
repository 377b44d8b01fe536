# Slow network, rate limit on the initiator's egress (write data, H2C): 128 KiB writes.
: "${rate_mbit:=20}"
: "${netem=rate ${rate_mbit}mbit}"  # netem= (empty): no netem, the base
: "${qd:=4}"
: "${runtime:=3}"
initiator_netem=$netem
workload() { run_fio write128k --rw=write --bs=128k --iodepth="$qd"; }
truth() {
	cause=slow_network bn='{"stock": "target_to_device", "ntprof": "nvmet_tcp_r2t_wait", "s_notation": "S6(S)", "direction": "submission"}'
	[ -n "$netem" ] || cause=none bn=null
	cat <<JSON
{"scenario": "slow-net-rate-initiator", "family": "slow_network", "cause": "$cause",
 "injected": {"netem": "$netem", "interface": "initiator eth0 egress", "direction": "submission"},
 "expected_bottleneck": $bn,
 "workload": [{"job": "write128k", "rw": "write", "bs_bytes": 131072, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "write data (H2C) is throttled: network time dominates and throughput is capped near the rate"}
JSON
}
