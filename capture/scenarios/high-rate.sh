# Benchmark input: the highest event rate the lab reaches (the converter's real-capture bench).
# $jobs fio jobs (one per vCPU) of 4 KiB random reads at iodepth $qd for $seconds s (the
# lab's runtime= stays 3 s for the other scenarios); the per-CPU buffers are sized for it
# so nothing is lost. No injected cause.
: "${jobs:=2}"
: "${qd:=32}"
: "${seconds:=60}"
runtime=$seconds
initiator_capture="iops=40000"
target_capture="iops=40000"
workload() {
	set -- --rw=randread --bs=4k --iodepth="$qd" --cpus_allowed=0
	i=1
	while [ "$i" -lt "$jobs" ]; do
		set -- "$@" --name="cpu$i" --rw=randread --bs=4k --iodepth="$qd" --cpus_allowed="$i"
		i=$((i + 1))
	done
	run_fio cpu0 "$@"
}
truth() {
	cat <<JSON
{"scenario": "high-rate", "family": "benchmark", "cause": "none",
 "injected": null, "expected_bottleneck": null,
 "workload": [{"job": "cpu0..cpu$((jobs - 1))", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "a long, busy capture for the converter benchmark (just bench-convert)"}
JSON
}
