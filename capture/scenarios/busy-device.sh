# Busy device: a fio on the target itself hammers the same null_blk device, which has
# few tags (hw_queue_depth) and a completion delay, so remote I/Os wait for the device.
: "${local_qd:=16}"
: "${delay_us:=200}"
: "${tags:=4}"
: "${runtime:=3}"
nullb="irqmode=2 completion_nsec=$((delay_us * 1000)) submit_queues=1 hw_queue_depth=$tags"
workload() { run_fio randread --rw=randread --bs=4k --iodepth=1; }
target_busy() { runtime=$((runtime + 1)); run_fio local --rw=randread --bs=4k --iodepth="$local_qd"; }
truth() {
	cat <<JSON
{"scenario": "busy-device", "family": "busy_device", "cause": "busy_device",
 "injected": {"target_local_fio": {"rw": "randread", "bs_bytes": 4096, "iodepth": $local_qd},
              "null_blk_hw_queue_depth": $tags, "null_blk_submit_queues": 1, "null_blk_completion_nsec": $((delay_us * 1000))},
 "expected_bottleneck": {"stock": "target_exec", "ntprof": "target_subsystem", "paper": "S7-S9 target block layer / SSD"},
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": 1, "cpu": null, "runtime_s": $runtime}],
 "expect": "the remote reads wait for device tags behind the local fio: target time (nvmet_req_init -> nvmet_req_complete) grows, the network does not"}
JSON
}
