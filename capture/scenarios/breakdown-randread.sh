# Breakdown vs load: 4 KiB random reads at one iodepth (run it for qd=1,4,16,32).
# No injected cause: the stages' share of the latency changes with the load.
: "${qd:=1}"
: "${runtime:=3}"
workload() { run_fio randread --rw=randread --bs=4k --iodepth="$qd"; }
truth() {
	cat <<JSON
{"scenario": "breakdown-randread", "family": "breakdown_vs_load", "cause": "none",
 "injected": null, "expected_bottleneck": null,
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "baseline breakdown; with higher qd the queueing stages (host queue, transport queues) grow"}
JSON
}
