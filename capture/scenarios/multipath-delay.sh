# Two paths to one namespace (native multipath, paths=2: two links, two nvmet ports, two
# controllers nvme0 and nvme1 under /dev/nvme0n1) used in turn (iopolicy round-robin); path B
# (the second link) gets delay_ms of extra one-way delay on the initiator's egress (tc netem on
# that link's interface only). 4 KiB random reads at iodepth qd. delay_ms=0: the base.
paths=2
: "${delay_ms:=5}"
: "${qd:=4}"
: "${runtime:=3}"
initiator_setup() {
	for p in /sys/class/nvme-subsystem/*/iopolicy; do echo round-robin >"$p" || return 1; done
	[ "$delay_ms" -gt 0 ] || return 0
	ifc=$(ifname_of "$(topo_mac 1 1)") || return 1
	tc qdisc add dev "$ifc" root netem delay "${delay_ms}ms" || return 1
	log "path B ($ifc, $(topo_addr 1 1)): netem delay ${delay_ms}ms on its egress"
}
workload() { run_fio randread --rw=randread --bs=4k --iodepth="$qd"; }
truth() {
	cause=path_degraded
	[ "$delay_ms" -gt 0 ] || cause=none
	cat <<JSON
{"scenario": "multipath-delay", "family": "multipath", "cause": "$cause",
 "injected": {"path": 1, "delay_ms": $delay_ms,
              "interface": "initiator egress of path B (tc netem delay)"},
 "expected_bottleneck": null,
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime,
               "iopolicy": "round-robin"}],
 "expect": "half the I/Os on each path; path B's network stage exceeds path A's by delay_ms"}
JSON
}
