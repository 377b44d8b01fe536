# Link flap: the initiator's only path drops every packet it sends for loss_s seconds (tc netem
# loss 100% on its egress), loss_at seconds into 4 KiB random reads at iodepth qd. With a
# io_timeout-second I/O timeout (nvme_core.io_timeout, set before connecting) the stalled
# commands time out, the controller is reset (error recovery: queues torn down, commands
# requeued) and reconnects every second (--reconnect-delay=1) until the link is back; fio sees
# every I/O complete. The link's down and up instants are written to trace_marker
# ("ntscope-lab: link down" / "link up"): the trace holds the injected outage. loss_s=0: the base.
: "${loss_s:=8}"
: "${loss_at:=3}"
: "${io_timeout:=5}"
: "${qd:=4}"
: "${runtime:=$((loss_at + loss_s + 6))}"
connect="--reconnect-delay=1 --ctrl-loss-tmo=120"
initiator_preconnect() { echo "$io_timeout" >/sys/module/nvme_core/parameters/io_timeout; }
marker() { echo "ntscope-lab: $*" >/sys/kernel/tracing/trace_marker 2>/dev/null || echo "ntscope-lab: $*" >/sys/kernel/debug/tracing/trace_marker; }
flap() {
	ifc=$(ip -o -4 addr show | awk '$4 ~ /^169\.254\./ { print $2; exit }')
	sleep "$loss_at"
	tc qdisc add dev "$ifc" root netem loss 100% || return 1
	marker "link down $ifc"
	sleep "$loss_s"
	tc qdisc del dev "$ifc" root || return 1
	marker "link up $ifc"
}
workload() {
	[ "$loss_s" -eq 0 ] || flap &
	run_fio randread --rw=randread --bs=4k --iodepth="$qd"
	wait
}
truth() {
	cause=controller_reset
	[ "$loss_s" -gt 0 ] || cause=none
	cat <<JSON
{"scenario": "link-flap", "family": "recovery", "cause": "$cause",
 "injected": {"loss_s": $loss_s, "loss_at_s": $loss_at, "io_timeout_s": $io_timeout, "reconnect_delay_s": 1,
              "interface": "initiator egress (netem loss 100%)", "markers": "ftrace print 'ntscope-lab: link down|up'"},
 "expected_bottleneck": null,
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "the commands in flight at the loss time out after io_timeout, the controller resets and reconnects after the link is back; every fio I/O completes once"}
JSON
}
