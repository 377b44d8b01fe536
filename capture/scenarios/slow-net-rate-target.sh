# Slow network, rate limit on the target's egress (read data, C2H): 128 KiB reads.
: "${rate_mbit:=20}"
: "${netem=rate ${rate_mbit}mbit}"  # netem= (empty): no netem, the base
: "${qd:=4}"
: "${runtime:=3}"
target_netem=$netem
workload() { run_fio randread128k --rw=randread --bs=128k --iodepth="$qd"; }
truth() {
	cause=slow_network bn='{"stock": "fabric_total", "ntprof": "network_transmission", "s_notation": "S3-S5(S+C)", "direction": "completion"}'
	[ -n "$netem" ] || cause=none bn=null
	cat <<JSON
{"scenario": "slow-net-rate-target", "family": "slow_network", "cause": "$cause",
 "injected": {"netem": "$netem", "interface": "target eth0 egress", "direction": "completion"},
 "expected_bottleneck": $bn,
 "workload": [{"job": "randread128k", "rw": "randread", "bs_bytes": 131072, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "read data (C2H) is throttled: network time dominates and throughput is capped near the rate"}
JSON
}
