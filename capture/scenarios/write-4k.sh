# Writes, small: 4 KiB random writes travel in-capsule (inside the command PDU, below
# the target's inline data size of 16 KiB): no R2T.
: "${qd:=1}"
: "${runtime:=3}"
workload() { run_fio randwrite4k --rw=randwrite --bs=4k --iodepth="$qd"; }
truth() {
	cat <<JSON
{"scenario": "write-4k", "family": "writes", "cause": "none",
 "injected": null, "expected_bottleneck": null,
 "write_path": {"in_capsule": true, "r2t_per_io": 0},
 "workload": [{"job": "randwrite4k", "rw": "randwrite", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "in-capsule writes: one command PDU carries the data; the patched events show no R2T and no H2C data PDU"}
JSON
}
