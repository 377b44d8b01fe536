# Interference c0: stream A alone: the reference latency of A
# Stream A is a 4 KiB qd1 random reader pinned to CPU 0.
: "${runtime:=3}"

workload() {
	run_fio a_4k --rw=randread --bs=4k --iodepth=1 --cpus_allowed=0
}
truth() {
	cat <<JSON
{"scenario": "interference-c0", "family": "interference", "cause": "none",
 "injected": null,
 "expected_bottleneck": null,
 "workload": [{"job": "a_4k", "rw": "randread", "bs_bytes": 4096, "iodepth": 1, "cpu": 0, "runtime_s": $runtime}],
 "expect": "stream A alone: the reference latency of A"}
JSON
}
