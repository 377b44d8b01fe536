# Slow device: the target's null_blk completes every request after delay_us (timer mode).
: "${delay_us:=2000}"
: "${qd:=1}"
: "${runtime:=3}"
nullb="irqmode=2 completion_nsec=$((delay_us * 1000))"
workload() { run_fio randread --rw=randread --bs=4k --iodepth="$qd"; }
truth() {
	cat <<JSON
{"scenario": "slow-device", "family": "slow_device", "cause": "slow_device",
 "injected": {"null_blk_irqmode": 2, "null_blk_completion_nsec": $((delay_us * 1000))},
 "expected_bottleneck": {"stock": "target_device", "ntprof": "target_subsystem", "s_notation": "S7-S9(S+C)"},
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "target_device (backing block_rq_issue -> block_rq_complete) is about $delay_us us per I/O and dominates"}
JSON
}
