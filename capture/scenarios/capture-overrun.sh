# Capture test: a per-CPU buffer far too small for the event rate (buffer_kb=4),
# so the kernel ring buffer overruns; ntscope-capture must count the lost events
# in host.json and warn (exit 1). Patched kernels make ~15 events per I/O.
: "${runtime:=3}"
: "${qd:=16}"
initiator_capture="buffer_kb=4"
workload() { run_fio randread --rw=randread --bs=4k --iodepth="$qd"; }
truth() {
	cat <<JSON
{"scenario": "capture-overrun", "family": "capture_test", "cause": "lost_events",
 "injected": {"initiator_buffer_kb": 4}, "expected_bottleneck": null,
 "capture": {"initiator": {"buffer_kb": 4, "expect_lost_events": true}},
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "the initiator's host.json reports overruns and its capture warned; event counts do not balance"}
JSON
}
