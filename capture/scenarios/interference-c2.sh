# Interference c2: B on the same CPU and so the same queue as A: A waits behind B's 128 KiB transfers in the queue, large slowdown
# A's commands and responses queue behind B's 128 KiB read data (C2HData) on the shared
# connection: the paper (Fig. 8) and this lab both see it in S3-S5 (network_transmission).
# Stream A is a 4 KiB qd1 random reader pinned to CPU 0.
# Stream B is a 128 KiB random reader at iodepth b_qd (default 4) pinned to CPU 0.
: "${b_qd:=4}"
: "${runtime:=3}"

workload() {
	run_fio a_4k --rw=randread --bs=4k --iodepth=1 --cpus_allowed=0 \
		--name=b_128k --rw=randread --bs=128k --iodepth="$b_qd" --cpus_allowed=0
}
truth() {
	cat <<JSON
{"scenario": "interference-c2", "family": "interference", "cause": "interference",
 "injected": {"stream_b": {"rw": "randread", "bs_bytes": 131072, "iodepth": $b_qd, "cpu": 0}, "nvme_connect_nr_io_queues": null, "shares_cpu_with_a": true, "shares_queue_with_a": true},
 "expected_bottleneck": {"stock": "fabric_total", "ntprof": "network_transmission", "s_notation": "S3-S5(S+C)"},
 "workload": [{"job": "a_4k", "rw": "randread", "bs_bytes": 4096, "iodepth": 1, "cpu": 0, "runtime_s": $runtime},
              {"job": "b_128k", "rw": "randread", "bs_bytes": 131072, "iodepth": $b_qd, "cpu": 0, "runtime_s": $runtime}],
 "expect": "B on the same CPU and so the same queue as A: A waits behind B's 128 KiB transfers in the queue, large slowdown"}
JSON
}
