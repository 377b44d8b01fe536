# Two paths to one namespace (native multipath, paths=2), the first path used alone
# (iopolicy numa, one NUMA node: the first optimized path). ana_at seconds into the workload
# the target sets path A's ANA group (nvmet port 1, group 1) inaccessible: the host is told
# (an asynchronous event on that controller), reads the ANA log and sends the I/O on path B;
# commands that reach port 1 meanwhile fail with an ANA status and are sent again on path B.
# The target writes the instant to trace_marker ("ntscope-lab: ana port 1 inaccessible").
# ana_at=0: the base (no change).
paths=2
: "${ana_at:=3}"
: "${qd:=4}"
: "${ana_runtime:=6}" # the workload's seconds (the lab's runtime=3 default is too short)
target_busy() {
	[ "$ana_at" -gt 0 ] || return 0
	sleep "$ana_at"
	echo inaccessible >/sys/kernel/config/nvmet/ports/1/ana_groups/1/ana_state || return 1
	echo "ntscope-lab: ana port 1 inaccessible" >/sys/kernel/tracing/trace_marker
	log "ANA: port 1 group 1 inaccessible"
}
workload() { runtime=$ana_runtime run_fio randread --rw=randread --bs=4k --iodepth="$qd"; }
truth() {
	cat <<JSON
{"scenario": "multipath-ana", "family": "multipath", "cause": "none",
 "injected": {"ana_at_s": $ana_at, "path": 0, "port": 1, "ana_group": 1, "ana_state": "inaccessible",
              "markers": "target ftrace print 'ntscope-lab: ana port 1 inaccessible'"},
 "expected_bottleneck": null,
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $ana_runtime,
               "iopolicy": "numa"}],
 "expect": "I/Os on path A until the ANA change, on path B after it; every fio I/O counted once"}
JSON
}
