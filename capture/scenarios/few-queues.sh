# Few queues: `nvme connect -i $queues` with two fio jobs on different CPUs. With one
# I/O queue both CPUs share one nvme-tcp queue (one socket): the initiator transport
# queue grows. queues=0 connects with the default (one queue per CPU): the baseline.
: "${queues:=1}"
: "${qd:=8}"
: "${runtime:=3}"
if [ "$queues" -gt 0 ]; then connect="-i $queues"; fi
workload() {
	run_fio cpu0 --rw=randread --bs=4k --iodepth="$qd" --cpus_allowed=0 \
		--name=cpu1 --rw=randread --bs=4k --iodepth="$qd" --cpus_allowed=1
}
truth() {
	if [ "$queues" -gt 0 ]; then cause=few_queues; inj="{\"nvme_connect_nr_io_queues\": $queues}"
		bn='{"stock": "fabric_total", "ntprof": "nvme_tcp_submission", "paper": "S2 initiator transport queue"}'
	else cause=none; inj=null; bn=null; fi
	cat <<JSON
{"scenario": "few-queues", "family": "few_queues", "cause": "$cause",
 "injected": $inj, "expected_bottleneck": $bn,
 "workload": [{"job": "cpu0", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": 0, "runtime_s": $runtime},
              {"job": "cpu1", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": 1, "runtime_s": $runtime}],
 "expect": "with queues=$queues both jobs' commands share the I/O queue(s): time waiting in the initiator's transport queue grows vs queues=0"}
JSON
}
