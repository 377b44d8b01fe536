# Sampled capture: both hosts record 1 in `sample` commands (same rule: the command id's
# generation counter, cid & 0x7000 == 0 for N = 8). 4K random reads (qd 8) and 128K writes
# (R2T, qd 2) at once. Checked: the same commands on both hosts, every kept cid follows the
# rule, ~1/N of fio's I/Os on tags of every kind, all block events and initiator completions
# kept, host.json io_counters = fio's I/Os (the scale's denominator).
: "${runtime:=3}"
: "${qd:=8}"
: "${sample:=8}"
initiator_capture="sample=$sample"
target_capture="sample=$sample"
workload() {
	run_fio mixed --name=randread --rw=randread --bs=4k --iodepth="$qd" \
		--name=write128k --rw=write --bs=128k --iodepth=2 --offset=128M
}
truth() {
	cat <<JSON
{"scenario": "capture-sampled", "family": "capture_test", "cause": "none",
 "injected": null, "expected_bottleneck": null,
 "capture": {"initiator": {"sample": $sample}, "target": {"sample": $sample}},
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime},
              {"job": "write128k", "rw": "write", "bs_bytes": 131072, "iodepth": 2, "cpu": null, "runtime_s": $runtime}],
 "expect": "1 in $sample commands traced on both hosts, the same ones; counts scale by io_counters / traced commands"}
JSON
}
