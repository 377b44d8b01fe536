# Initiator CPU contention (the territory of upstream commit 40510a639ec0): one I/O queue
# (`nvme connect -i 1`), so one io_work, which nvme-tcp runs on CPU 0 (the queue's io_cpu).
# The application (fio, 4 KiB random reads at qd; CPU-bound under TCG) runs at nice -20, the
# priority of the io_work kworker (nvme_tcp_wq is WQ_HIGHPRI), pinned to app_cpu.
# app_cpu=0: it shares CPU 0 with the io_work, which then waits for its turn to send and
# receive; app_cpu=1: the application runs on the other CPU (the base).
: "${app_cpu:=0}"
: "${qd:=32}"
: "${runtime:=3}"
connect="-i 1"
workload() {
	# fio's own --nice rejects -20 (3.33): renice its processes once they run
	( sleep 0.5; renice -n -20 -p $(pidof fio) >/dev/null 2>&1 || log "renice of fio failed" ) &
	run_fio app --rw=randread --bs=4k --iodepth="$qd" --cpus_allowed="$app_cpu"
	rc=$?
	wait
	return $rc
}
truth() {
	cause=none bn=null
	if [ "$app_cpu" = 0 ]; then cause=io_cpu_contention
		bn='{"stock": "fabric_total", "ntprof": "network_transmission", "s_notation": "S3-S5(S+C)"}'
	fi
	cat <<JSON
{"scenario": "io-cpu-contention", "family": "io_cpu_contention", "cause": "$cause",
 "injected": {"nvme_connect_nr_io_queues": 1, "io_work_cpu": 0, "app_cpu": $app_cpu, "app_nice": -20},
 "expected_bottleneck": $bn,
 "workload": [{"job": "app", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": $app_cpu, "runtime_s": $runtime}],
 "expect": "with the application on the io_work's CPU the queue's io_work waits for that CPU (the initiator's CPU wait grows) and the commands' send and receive wait with it"}
JSON
}
