# Interference c1: B on another CPU and another queue (default one queue per CPU):
# A shares only the link and the device (under TCG the emulated link dominates).
# Stream A is a 4 KiB qd1 random reader pinned to CPU 0.
# Stream B is a 128 KiB random reader at iodepth b_qd (default 4) pinned to CPU 1.
: "${b_qd:=4}"
: "${runtime:=3}"

workload() {
	run_fio a_4k --rw=randread --bs=4k --iodepth=1 --cpus_allowed=0 \
		--name=b_128k --rw=randread --bs=128k --iodepth="$b_qd" --cpus_allowed=1
}
truth() {
	cat <<JSON
{"scenario": "interference-c1", "family": "interference", "cause": "interference",
 "injected": {"stream_b": {"rw": "randread", "bs_bytes": 131072, "iodepth": $b_qd, "cpu": 1}, "nvme_connect_nr_io_queues": null, "shares_cpu_with_a": false, "shares_queue_with_a": false},
 "expected_bottleneck": {"stock": "fabric_total", "ntprof": "network_transmission", "s_notation": "S3-S5(S+C)"},
 "workload": [{"job": "a_4k", "rw": "randread", "bs_bytes": 4096, "iodepth": 1, "cpu": 0, "runtime_s": $runtime},
              {"job": "b_128k", "rw": "randread", "bs_bytes": 131072, "iodepth": $b_qd, "cpu": 1, "runtime_s": $runtime}],
 "expect": "B on another CPU and another queue (default one queue per CPU): A shares only the link and the device; on real hardware a small slowdown, under QEMU TCG the emulated link is the bottleneck and A slows down about as much as in c2/c3 (measured on stock 6.1: A 3.6 ms alone, 27 ms with B)"}
JSON
}
