# Slow network, one direction: tc netem delay on the initiator's egress only
# (initiator_to_target). 4 KiB random reads.
: "${netem:=delay 2ms}"
: "${qd:=1}"
: "${runtime:=3}"
initiator_netem=$netem
workload() { run_fio randread --rw=randread --bs=4k --iodepth="$qd"; }
truth() {
	cat <<JSON
{"scenario": "slow-net-delay-initiator", "family": "slow_network", "cause": "slow_network",
 "injected": {"netem": "$netem", "interface": "initiator eth0 egress", "direction": "initiator_to_target"},
 "expected_bottleneck": {"stock": "fabric_total", "ntprof": "network_transmission", "paper": "S3-S5 network substrate", "direction": "initiator_to_target"},
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "the clock-free network time grows by the netem delay; target and host stages do not; one-way attribution only within the offset uncertainty"}
JSON
}
