# NIC contention (the paper's section 4.4, second case): a bulk TCP stream between the two
# VMs shares their link with NVMe/TCP, no netem. The target runs an iperf3 server, the
# initiator a client for the whole workload with -R (the target sends: the bulk data goes
# the way of the read data, target -> initiator). 4 KiB random reads at qd 4. Two pairs on
# this machine: end_to_end LAD 1.78 and 2.52, network_transmission the bottleneck in both.
# rate= caps the stream (iperf3 -b, e.g. rate=20M: a milder contention); empty: as fast as
# it goes. nic=0: the same workload without the stream, the base.
: "${nic:=1}"
: "${rate:=}"
: "${qd:=4}"
: "${runtime:=3}"
target_setup() {
	[ "$nic" != 0 ] || return 0
	iperf3 -s -D -B "$target_ip" >/dev/null 2>&1 || return 1
	log "iperf3 server on $target_ip"
}
rx_bytes() { cat /sys/class/net/*/statistics/rx_bytes 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
workload() {
	if [ "$nic" != 0 ]; then
		# a little longer than fio, so that the stream covers every I/O (iperf3 counts -t from
		# the test's start, after its control exchange)
		rx0=$(rx_bytes)
		iperf3 -c "$target_ip" -R -t $((runtime + 2)) ${rate:+-b "$rate"} >"$rundir/$host/iperf3.txt" 2>&1 &
		# fio starts once the stream flows (1 MB received): on a busy lab the control exchange
		# took 3.5 s once, and the reads ran before the stream
		i=0
		while [ $(($(rx_bytes) - rx0)) -lt 1000000 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		log "stream flowing after $((i / 10)).$((i % 10)) s"
	fi
	run_fio randread --rw=randread --bs=4k --iodepth="$qd"
	wait
}
truth() {
	cause=nic_contention bn='{"stock": "fabric_total", "ntprof": "network_transmission", "s_notation": "S3-S5(S+C)"}'
	# the stream runs target -> initiator, but its ACKs and (under TCG) the VMs' shared CPUs
	# delay both directions: on synchronized clocks one pair measured nstack_submission
	# +5.6 ms and nstack_completion +7.1 ms, so the direction to expect is both
	inj="{\"bulk_stream\": \"iperf3 -R (target -> initiator)\", \"bitrate\": \"${rate:-unlimited}\", \"stream_direction\": \"completion\", \"direction\": \"both\"}"
	[ "$nic" != 0 ] || cause=none bn=null inj=null
	cat <<JSON
{"scenario": "nic-contention", "family": "slow_network", "cause": "$cause",
 "injected": $inj,
 "expected_bottleneck": $bn,
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "a bulk TCP stream shares the link: network time grows, the verdict names the network"}
JSON
}
