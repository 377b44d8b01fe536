# Slow network, one direction: tc netem delay on the target's egress only
# (target_to_initiator). 4 KiB random reads.
: "${netem:=delay 2ms}"
: "${qd:=1}"
: "${runtime:=3}"
target_netem=$netem
workload() { run_fio randread --rw=randread --bs=4k --iodepth="$qd"; }
truth() {
	cat <<JSON
{"scenario": "slow-net-delay-target", "family": "slow_network", "cause": "slow_network",
 "injected": {"netem": "$netem", "interface": "target eth0 egress", "direction": "target_to_initiator"},
 "expected_bottleneck": {"stock": "fabric_total", "ntprof": "network_transmission", "paper": "S3-S5 network substrate", "direction": "target_to_initiator"},
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "the clock-free network time grows by the netem delay; target and host stages do not; one-way attribution only within the offset uncertainty"}
JSON
}
