# Two initiators, one target (three VMs): each initiator connects to the target's one
# subsystem (its own controller, its own TCP connections) and runs 4 KiB random reads.
# No injected cause: the analysis must keep the two initiators' commands apart (a stream
# on one initiator is not one on the other) and estimate each pair's clock offset.
hosts="target:target initiator:initiator initiator2:initiator"
: "${qd:=4}"
: "${runtime:=3}"
workload() { run_fio randread --rw=randread --bs=4k --iodepth="$qd"; }
truth() {
	cat <<JSON
{"scenario": "two-initiators", "family": "multi_host", "cause": "none",
 "injected": null, "expected_bottleneck": null,
 "workload": [{"job": "randread", "host": "initiator", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime},
              {"job": "randread", "host": "initiator2", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "two initiators' commands on one target, told apart by controller (cntlid) and host"}
JSON
}
