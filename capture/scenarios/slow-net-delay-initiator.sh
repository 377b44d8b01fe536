# Slow network, one direction: tc netem delay on the initiator's egress only
# (submission: initiator -> target). 4 KiB random reads.
# 10 ms: under TCG the base run's own network time varies by a few ms, 2 ms drowns in it.
# clock_sync=chrony syncs the VMs' clocks (trace clock tai): the direction is then known.
: "${delay_ms:=10}"
: "${netem=delay ${delay_ms}ms}"  # netem= (empty): no netem, the base
: "${qd:=1}"
: "${runtime:=3}"
initiator_netem=$netem
workload() { run_fio randread --rw=randread --bs=4k --iodepth="$qd"; }
truth() {
	cause=slow_network bn='{"stock": "fabric_total", "ntprof": "network_transmission", "s_notation": "S3-S5(S+C)", "direction": "submission"}'
	[ -n "$netem" ] || cause=none bn=null
	cat <<JSON
{"scenario": "slow-net-delay-initiator", "family": "slow_network", "cause": "$cause",
 "injected": {"netem": "$netem", "clock_sync": "${clock_sync:-none}", "interface": "initiator eth0 egress", "direction": "submission"},
 "expected_bottleneck": $bn,
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "the clock-free network time grows by the netem delay; target and host stages do not; one-way attribution only within the offset uncertainty"}
JSON
}
