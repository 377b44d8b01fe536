# Kernel stacks: 4 KiB random reads recorded with the kernel stack after every event (capture key
# stacks=1, trace-cmd -T) on both hosts. The stacks' depths differ by where an event fires (a
# block event in a system call holds more than eight frames, a softirq's completion fewer), so
# the converter must keep each record's frames as written, neither padded nor cut to the eight
# the format declares: the differential test compares them with trace-cmd, frame by frame.
: "${qd:=4}"
: "${runtime:=1}"
initiator_capture="stacks=1"
target_capture="stacks=1"
workload() { run_fio randread --rw=randread --bs=4k --iodepth="$qd"; }
truth() {
	cat <<JSON
{"scenario": "kernel-stacks", "family": "capture", "cause": "none",
 "injected": null, "expected_bottleneck": null,
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "every event followed by its ftrace:kernel_stack record, of fewer and of more than 8 frames; the I/O as without stacks"}
JSON
}
