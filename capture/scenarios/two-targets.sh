# One initiator, two targets (three VMs): the initiator connects to both (nvme0 -> target,
# nvme1 -> target2) and reads from both at once, one fio job per namespace.
# No injected cause: the analysis must join each controller's commands to its own target
# and estimate each pair's clock offset.
hosts="target:target target2:target initiator:initiator"
: "${qd:=4}"
: "${runtime:=3}"
workload() {
	# two fio processes: a job's --filename adds to run_fio's global one instead of
	# replacing it (fixture lab-6.1-patched-two-targets: to_target2 read from both disks)
	run_fio to_target --rw=randread --bs=4k --iodepth="$qd" &
	dev=/dev/nvme1n1 run_fio to_target2 --rw=randread --bs=4k --iodepth="$qd"
	wait
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
