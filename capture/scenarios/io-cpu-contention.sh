# Initiator CPU contention (the territory of upstream commit 40510a639ec0): one I/O queue
# (`nvme connect -i 1`), so one io_work, which nvme-tcp runs on CPU 0 (the queue's io_cpu).
# The application (fio, 4 KiB random reads at qd; CPU-bound under TCG) runs at nice -20, the
# priority of the io_work kworker (nvme_tcp_wq is WQ_HIGHPRI), pinned to app_cpu.
# app_cpu=0: it shares CPU 0 with the io_work, which then waits for its turn to send and
# receive; app_cpu=1: the application runs on the other CPU. See truth() for what the lab
# showed instead.
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
	# Measured (patched 6.1, TCG): the application on the io_work's CPU was faster, not slower:
	# end to end 16.8 ms (app_cpu=1) -> 12.9 ms (app_cpu=0), nvme_tcp_submission 1.7 ms ->
	# 0.02 ms: on its own io_cpu, queue_rq sends inline; from the other CPU every command
	# waits for the io_work to be woken there (the initiator's io_work wait 1.1 ms). No
	# contention cause is claimed until a setup shows one.
	cat <<JSON
{"scenario": "io-cpu-contention", "family": "io_cpu_contention", "cause": "none",
 "injected": {"nvme_connect_nr_io_queues": 1, "io_work_cpu": 0, "app_cpu": $app_cpu, "app_nice": -20},
 "expected_bottleneck": null,
 "workload": [{"job": "app", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": $app_cpu, "runtime_s": $runtime}],
 "expect": "a measurement, not an injected cause: app_cpu=1 (the application off the io_work's CPU) waits for the io_work's wakeup on every send (nvme_tcp_submission); app_cpu=0 sends inline"}
JSON
}
