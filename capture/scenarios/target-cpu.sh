# Target CPU (the paper's §4.3, first case: one target core per drive whatever the load):
# the target VM has one CPU (target_smp=1), so nvmet-tcp's io_work of every queue runs on
# it, and `hog` busy loops take their share of that CPU while 4 KiB random reads run at
# iodepth qd. The loops run at nice -20, the priority of the io_work kworkers (nvmet_tcp_wq
# is WQ_HIGHPRI): at nice 0 the scheduler would give them almost nothing. Measured (capture
# key cpu_wait): io_work itself is barely delayed; the NET_RX softirq is, 30-44x (ksoftirqd
# runs at nice 0 behind the loops), and the time shows as network (S3-S5).
# hog=0: the same one-CPU target without the loops, the base.
: "${hog:=1}"
: "${qd:=16}"
: "${runtime:=3}"
target_smp=1
workload() { run_fio randread --rw=randread --bs=4k --iodepth="$qd"; }
target_busy() {
	[ "$hog" -gt 0 ] || return 0
	h=0
	while [ "$h" -lt "$hog" ]; do
		timeout $((runtime + 1)) sh -c 'while :; do :; done' &
		renice -n -20 -p $! >/dev/null || log "renice of the busy loop $! failed"
		h=$((h + 1))
	done
	wait
	return 0
}
truth() {
	cause=target_cpu bn='{"stock": "fabric_total", "ntprof": "network_transmission", "s_notation": "S3-S5(S+C)"}'
	inj="{\"target_cpus\": 1, \"busy_loops\": $hog, \"busy_loop_nice\": -20}"
	[ "$hog" -gt 0 ] || cause=none bn=null
	cat <<JSON
{"scenario": "target-cpu", "family": "target_cpu", "cause": "$cause",
 "injected": $inj,
 "expected_bottleneck": $bn,
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "the target's only CPU is shared with $hog busy loop(s): its network receive softirq (deferred to ksoftirqd at nice 0) runs late, so commands wait in the target's socket and its sends wait for ACKs (network time, S3-S5); the target's CPU wait (cpu_wait) grows and the verdict names the target CPU"}
JSON
}
