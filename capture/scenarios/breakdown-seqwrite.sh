# Breakdown vs load: 128 KiB sequential writes at one iodepth (run it for qd=1,4,16,32).
# No injected cause. 128 KiB writes are above the in-capsule size: R2T + H2C data.
: "${qd:=1}"
: "${runtime:=3}"
workload() { run_fio seqwrite --rw=write --bs=128k --iodepth="$qd"; }
truth() {
	cat <<JSON
{"scenario": "breakdown-seqwrite", "family": "breakdown_vs_load", "cause": "none",
 "injected": null, "expected_bottleneck": null,
 "workload": [{"job": "seqwrite", "rw": "write", "bs_bytes": 131072, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "baseline write breakdown (R2T round trip visible); queueing stages grow with qd"}
JSON
}
