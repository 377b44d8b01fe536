# One initiator, two targets (three VMs): the initiator connects to both (nvme0 -> target,
# nvme1 -> target2) and reads from both at once, one fio job per namespace.
# No injected cause: the analysis must join each controller's commands to its own target
# and estimate each pair's clock offset.
hosts="target:target target2:target initiator:initiator"
: "${qd:=4}"
: "${runtime:=3}"
workload() {
	run_fio to_target --rw=randread --bs=4k --iodepth="$qd" \
		--name=to_target2 --filename=/dev/nvme1n1 --rw=randread --bs=4k --iodepth="$qd"
}
truth() {
	cat <<JSON
{"scenario": "two-targets", "family": "multi_host", "cause": "none",
 "injected": null, "expected_bottleneck": null,
 "workload": [{"job": "to_target", "device": "/dev/nvme0n1", "target": "target", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime},
              {"job": "to_target2", "device": "/dev/nvme1n1", "target": "target2", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "one initiator's two controllers, each joined to its own target"}
JSON
}
