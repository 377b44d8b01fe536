# Busy device: a fio on the target itself hammers the same null_blk device, which has
# few tags (hw_queue_depth) and a completion delay, so remote I/Os wait for the device.
# 2 tags of 1 ms each cap the device at ~2000 IOPS, which the local fio saturates with
# little CPU: remote reads queue for a tag (~ local_qd / tags ms). With more tags and a
# shorter delay the local fio is CPU-bound under TCG and steals target CPU instead.
# The base (the experiment's control): control=1 runs the same local fio on a second
# null_blk device with the same settings (nullb1, not exported), so the target's CPU is as
# busy as in the run and only the exported device differs: without it the base's idle
# target answered slower than the busy one under TCG and the network time moved as much as
# the device's. local_qd=0: no local fio at all (the older base).
: "${local_qd:=16}"
: "${delay_us:=1000}"
: "${tags:=2}"
: "${control:=0}"
: "${runtime:=3}"
: "${qd:=1}"
nullb="irqmode=2 completion_nsec=$((delay_us * 1000)) submit_queues=1 hw_queue_depth=$tags"
workload() { run_fio randread --rw=randread --bs=4k --iodepth="$qd"; }
target_setup() {
	[ "$control" = 1 ] || return 0
	setup_nullb nullb1
}
target_busy() {
	[ "$local_qd" -gt 0 ] || return 0
	[ "$control" = 1 ] && dev=/dev/nullb1 # (target_busy runs in a subshell of its own)
	runtime=$((runtime + 1)); run_fio local --rw=randread --bs=4k --iodepth="$local_qd"
}
truth() {
	local_dev=nullb0 cause=busy_device
	bn='{"stock": "target_exec", "ntprof": "target_subsystem", "s_notation": "S7-S9(S+C)"}'
	[ "$control" = 1 ] && local_dev=nullb1 cause=none bn=null
	local_fio="{\"rw\": \"randread\", \"bs_bytes\": 4096, \"iodepth\": $local_qd, \"device\": \"$local_dev\"}"
	if [ "$local_qd" -eq 0 ]; then local_fio=null cause=none bn=null; fi
	cat <<JSON
{"scenario": "busy-device", "family": "busy_device", "cause": "$cause",
 "injected": {"target_local_fio": $local_fio,
              "null_blk_hw_queue_depth": $tags, "null_blk_submit_queues": 1, "null_blk_completion_nsec": $((delay_us * 1000))},
 "expected_bottleneck": $bn,
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "the remote reads wait for device tags behind the local fio: target time (nvmet_req_init -> nvmet_req_complete) grows, the network does not"}
JSON
}
