# Few queues (the paper's TCP-connection bottleneck, §4.3): `nvme connect -i $queues`
# and $jobs fio jobs pinned to CPUs 0..jobs-1. With one I/O queue every job's commands
# share one nvme-tcp queue (one socket, one io_work): they wait behind each other in
# the initiator's transport queue. Compare with jobs=1 (one stream on the queue) as the
# base, as the paper does (LAD of S1/S2 as streams are consolidated on the queue).
# queues=0 connects with the default (one queue per CPU).
: "${queues:=1}"
: "${jobs:=2}"
: "${qd:=16}"
: "${runtime:=3}"
if [ "$queues" -gt 0 ]; then connect="-i $queues"; fi
workload() {
	# job i pinned to CPU i; the first job's options come before the others' --name
	set -- --rw=randread --bs=4k --iodepth="$qd" --cpus_allowed=0
	i=1
	while [ "$i" -lt "$jobs" ]; do
		set -- "$@" --name="cpu$i" --rw=randread --bs=4k --iodepth="$qd" --cpus_allowed="$i"
		i=$((i + 1))
	done
	run_fio cpu0 "$@"
}
truth() {
	nq=null
	[ "$queues" -gt 0 ] && nq=$queues
	inj="{\"nvme_connect_nr_io_queues\": $nq, \"jobs\": $jobs}"
	if [ "$queues" -gt 0 ] && [ "$jobs" -gt "$queues" ]; then cause=few_queues
		bn='{"stock": "fabric_total", "ntprof": "nvme_tcp_submission", "s_notation": "S2(S)"}'
	else cause=none; bn=null; fi
	wl=""
	i=0
	while [ "$i" -lt "$jobs" ]; do
		[ -n "$wl" ] && wl="$wl, "
		wl="$wl{\"job\": \"cpu$i\", \"rw\": \"randread\", \"bs_bytes\": 4096, \"iodepth\": $qd, \"cpu\": $i, \"runtime_s\": $runtime}"
		i=$((i + 1))
	done
	cat <<JSON
{"scenario": "few-queues", "family": "few_queues", "cause": "$cause",
 "injected": $inj, "expected_bottleneck": $bn,
 "workload": [$wl],
 "expect": "with more jobs than queues the jobs' commands share the I/O queue(s): time waiting in the initiator's transport queue grows vs jobs=1"}
JSON
}
