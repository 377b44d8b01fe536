# Capture options as a user sets them: the initiator records only queue 1 of nvme0n1
# with the tai clock, the target only queue 1; fio runs on both CPUs (two queues).
: "${runtime:=2}"
initiator_capture="qid=1 dev=nvme0n1 clock=tai buffer_kb=1024"
target_capture="qid=1"
workload() {
	run_fio cpu0 --rw=randread --bs=4k --iodepth=2 --cpus_allowed=0 \
		--name=cpu1 --rw=randread --bs=4k --iodepth=2 --cpus_allowed=1
}
truth() {
	cat <<JSON
{"scenario": "capture-filters", "family": "capture_test", "cause": "none",
 "injected": null, "expected_bottleneck": null,
 "capture": {"initiator": {"qid": 1, "dev": "nvme0n1", "clock": "tai", "buffer_kb": 1024}, "target": {"qid": 1}},
 "workload": [{"job": "cpu0", "rw": "randread", "bs_bytes": 4096, "iodepth": 2, "cpu": 0, "runtime_s": $runtime},
              {"job": "cpu1", "rw": "randread", "bs_bytes": 4096, "iodepth": 2, "cpu": 1, "runtime_s": $runtime}],
 "expect": "only qid 1 in the nvme/nvmet events of both traces; initiator clock tai; fio I/Os exceed the traced ones (queue 2 filtered out)"}
JSON
}
