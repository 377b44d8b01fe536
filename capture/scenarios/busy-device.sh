# Busy device: a fio on the target itself hammers the same null_blk device, which has
# few tags (hw_queue_depth) and a completion delay, so remote I/Os wait for the device.
# local_qd=0 runs no local fio on the same device settings: the base to compare with.
# 2 tags of 1 ms each cap the device at ~2000 IOPS, which the local fio saturates with
# little CPU: remote reads queue for a tag (~ local_qd / tags ms). With more tags and a
# shorter delay the local fio is CPU-bound under TCG and steals target CPU instead.
: "${local_qd:=16}"
: "${delay_us:=1000}"
: "${tags:=2}"
: "${runtime:=3}"
nullb="irqmode=2 completion_nsec=$((delay_us * 1000)) submit_queues=1 hw_queue_depth=$tags"
workload() { run_fio randread --rw=randread --bs=4k --iodepth=1; }
target_busy() {
	[ "$local_qd" -gt 0 ] || return 0
	runtime=$((runtime + 1)); run_fio local --rw=randread --bs=4k --iodepth="$local_qd"
}
truth() {
	local_fio="{\"rw\": \"randread\", \"bs_bytes\": 4096, \"iodepth\": $local_qd}" cause=busy_device
	bn='{"stock": "target_exec", "ntprof": "target_subsystem", "s_notation": "S7-S9(S+C)"}'
	if [ "$local_qd" -eq 0 ]; then local_fio=null cause=none bn=null; fi
	cat <<JSON
{"scenario": "busy-device", "family": "busy_device", "cause": "$cause",
 "injected": {"target_local_fio": $local_fio,
              "null_blk_hw_queue_depth": $tags, "null_blk_submit_queues": 1, "null_blk_completion_nsec": $((delay_us * 1000))},
 "expected_bottleneck": $bn,
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": 1, "cpu": null, "runtime_s": $runtime}],
 "expect": "the remote reads wait for device tags behind the local fio: target time (nvmet_req_init -> nvmet_req_complete) grows, the network does not"}
JSON
}
