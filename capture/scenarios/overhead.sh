# Tracing overhead: the same fio job without tracing, under a full capture and under sampled
# captures, interleaved, `reps` times; both VMs' CPU time measured over each fio run
# (run for each kernel flavor by capture/lab/overhead.sh, which writes the table).
: "${reps:=3}"
: "${runtime:=8}"
: "${qd:=8}"
: "${sample:=8}"
: "${modes:=off full sampled sampled-noblock}"
: "${calib_mb:=32}"
: "${micro_reps:=5}"    # the target's block-only microbenchmark (see micro())
: "${micro_runtime:=2}"
main_trace=0 # one host folder per measurement: initiator-<tag>/, target-<tag>/ (tag r<rep>-<mode>)

ovh=/share/.sync/ovh
mode_keys() { # capture keys of a mode (the stock modes without probes: probes=auto would add them)
	case "$1" in
	full) echo "probes=off" ;;
	full-noacks) echo "probes=off nvme_acks=0" ;; # full before nvme_acks was a default
	full-notenants) echo "probes=off tenants=0" ;; # full before tenants was a default
	sampled) echo "sample=$sample probes=off" ;;
	sampled-noblock) echo "sample=$sample block=none probes=off" ;;
	probes) echo "probes=on" ;;
	probes-sampled) echo "sample=$sample probes=on" ;;
	probes-sampled-noblock) echo "sample=$sample block=none probes=on" ;;
	*) echo "bad mode $1" >&2; return 1 ;;
	esac
}
cpu_now() { # busy and total jiffies (USER_HZ) of all CPUs, and uptime in seconds
	printf '%s %s\n' "$(awk '$1 == "cpu" {b = $2 + $3 + $4 + $7 + $8 + $9; print b, b + $5 + $6}' /proc/stat)" "$(cut -d' ' -f1 /proc/uptime)"
}
wait_fast() { # wait_fast FILE SECONDS: poll every 20 ms
	i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ $i -le $(($2 * 50)) ] || return 1
		usleep 20000
	done
}
# Record with the traces on the VM's tmpfs (a local disk's page cache, not the 9p share),
# then move them to the share outside the measured window.
record() { # record ROLE TAG MODE FUNCTION
	mkdir -p /tmp/ovh-runs
	keys=$(mode_keys "$3") || fail "unknown overhead mode '$3'"
	# shellcheck disable=SC2086
	capture role="$1" run="$run" runs=/tmp/ovh-runs host="$1-$2" $keys \
		-- sh "$self" "call-$1" "$run" "$4" "$2" 2>"$rundir/$1/capture-$2.log"
	rc=$?
	[ $rc -le 1 ] || fail "capture ($1, $2) exited with $rc: $(tail -n 3 "$rundir/$1/capture-$2.log" | tr '\n' ' ')"
	mv "/tmp/ovh-runs/$run/$1-$2" "$rundir/$1-$2" || fail "cannot move the $1-$2 trace to the share"
}

ovh_fio() { # ovh_fio TAG (initiator): the measured fio run
	a=$(cpu_now)
	touch "$ovh/$1.fio_start"
	run_fio "$1" --rw=randread --bs=4k --iodepth="$qd"
	touch "$ovh/$1.fio_end"
	echo "$1 $a $(cpu_now)" >>"$rundir/initiator/overhead-cpu.txt"
}
ovh_target() { # ovh_target TAG (target): CPU over the initiator's fio run
	touch "$ovh/$1.ready"
	wait_fast "$ovh/$1.fio_start" 600 || fail "no fio start for $1"
	a=$(cpu_now)
	wait_fast "$ovh/$1.fio_end" 600 || fail "no fio end for $1"
	echo "$1 $a $(cpu_now)" >>"$rundir/target/overhead-cpu.txt"
}

# Cost per event without the network: on the target, a CPU-bound loop of synchronous 4 KiB
# reads of null_blk on CPU 0 (fio psync, qd 1) with block events off; enabled with no reader
# (inline: the ring buffer overwrites itself, the cost in the I/O path alone); recorded by
# trace-cmd (+ its reader processes, which may share CPU 0); or enabled but all filtered out
# ('dev == 1' matches no device). The time per read grows by the events' cost. With probe events
# (probe_micro=1): a probe on blk_mq_start_request (once per read) reading what the capture's
# queue_rq probe reads (the command id through the request's nvme_request, tag, hardware queue,
# queuedata: 5 dereferences, offsets from this kernel's BTF), recorded by trace-cmd
# (probe-recorded) or all filtered out (probe-filtered: the probe still fires and fetches).
# Interleaved micro_reps times. Lines of target/micro.txt: rep mode ios seconds events filter_seen
micro_probe_def() { # the probe of the probe modes, offsets from this kernel's BTF
	q=/tmp/micro.q
	printf 'size request\nmember request tag\nmember request q\nmember request mq_hctx\nmember request_queue queuedata\nmember blk_mq_hw_ctx queue_num\nmember nvme_request cmd\nmember nvme_common_command command_id\n' >$q
	/opt/ntscope/capture/ntscope-capture __btf_query $q /sys/kernel/btf/vmlinux | awk -F' = ' '
		{ v[$1] = $2 }
		END { printf "p:ntscope_micro/probe blk_mq_start_request caller=$stack0:x64 cid=+%d(+%d($arg1)):u16 tag=+%d($arg1):s32 hctx_queue_num=+%d(+%d($arg1)):u32 queuedata=+%d(+%d($arg1)):x64\n",
			v["member nvme_common_command command_id"], v["size request"] + v["member nvme_request cmd"], v["member request tag"],
			v["member blk_mq_hw_ctx queue_num"], v["member request mq_hctx"], v["member request_queue queuedata"], v["member request q"] }'
}
micro() {
	out=$rundir/target/micro.txt
	t=/sys/kernel/tracing
	micro_modes="off inline recorded filtered"
	if [ "${probe_micro:-0}" = 1 ] && [ -w $t/kprobe_events ]; then
		micro_probe_def >/tmp/micro.probe
		echo "micro probe: $(cat /tmp/micro.probe)" >>"$rundir/target/micro-probe.txt"
		micro_modes="$micro_modes probe-recorded probe-filtered"
	fi
	for rep in $(seq 1 "$micro_reps"); do
		for mode in $micro_modes; do
			job="--name=micro --filename=/dev/nullb0 --direct=1 --ioengine=psync --rw=randread --bs=4k --size=256M
				--time_based --runtime=$micro_runtime --cpus_allowed=0 --output-format=json --output=/tmp/micro.json"
			rm -f /tmp/micro.dat /tmp/micro.filter
			# shellcheck disable=SC2086
			case "$mode" in
			off) LD_PRELOAD=$shim fio $job >/dev/null ;;
			inline)
				echo 0 >$t/tracing_on; echo >$t/trace; echo 1 >$t/events/block/enable; echo 1 >$t/tracing_on
				cat $t/events/block/block_rq_issue/filter >/tmp/micro.filter
				LD_PRELOAD=$shim fio $job >/dev/null
				echo 0 >$t/tracing_on; echo 0 >$t/events/block/enable
				# events written = entries + overrun of every CPU's ring buffer
				inline_ev=$(cat $t/per_cpu/cpu*/stats | awk '$1 == "entries:" || $1 == "overrun:" {s += $2} END {print s + 0}')
				echo >$t/trace ;;
			recorded) trace-cmd record -q -e block -o /tmp/micro.dat \
				sh -c 'cat /sys/kernel/tracing/events/block/block_rq_issue/filter >/tmp/micro.filter; LD_PRELOAD=$0 fio "$@"' "$shim" $job >/dev/null 2>&1 ;;
			filtered) trace-cmd record -q -e block -f 'dev == 1' -o /tmp/micro.dat \
				sh -c 'cat /sys/kernel/tracing/events/block/block_rq_issue/filter >/tmp/micro.filter; LD_PRELOAD=$0 fio "$@"' "$shim" $job >/dev/null 2>&1 ;;
			probe-recorded | probe-filtered)
				cat /tmp/micro.probe >>$t/kprobe_events
				pf=""
				[ "$mode" = probe-filtered ] && pf="tag < -2"
				trace-cmd record -q -e ntscope_micro/probe ${pf:+-f "$pf"} -o /tmp/micro.dat \
					sh -c 'cat /sys/kernel/tracing/events/ntscope_micro/probe/filter >/tmp/micro.filter; LD_PRELOAD=$0 fio "$@"' "$shim" $job >/dev/null 2>&1
				echo "-:ntscope_micro/probe" >>$t/kprobe_events ;;
			esac
			ios=$(awk -F'"total_ios" : ' 'NF > 1 {split($2, a, ","); s += a[1]} END {print s + 0}' /tmp/micro.json)
			secs=$(awk -F'"job_runtime" : ' 'NF > 1 {split($2, a, ","); print a[1] / 1000; exit}' /tmp/micro.json)
			ev=0
			[ -s /tmp/micro.dat ] && ev=$(trace-cmd report -i /tmp/micro.dat 2>/dev/null | grep -c ' block_\| probe:')
			[ "$mode" = inline ] && ev=$inline_ev
			echo "$rep $mode $ios $secs $ev $(tr '\n ' '|_' </tmp/micro.filter 2>/dev/null)" >>"$out"
		done
		calibrate >>"$rundir/target/calibration.txt"
	done
}
# TCG calibration: a CPU-bound busybox md5sum of calib_mb MiB (the host runs the same); the
# fastest of several runs is the least disturbed by the host's other load
calibrate() {
	a=$(cut -d' ' -f1 /proc/uptime)
	dd if=/dev/zero bs=1M count="$calib_mb" 2>/dev/null | md5sum >/dev/null
	echo "md5sum_mib=$calib_mb seconds=$(awk -v a="$a" '{printf "%.2f", $1 - a}' /proc/uptime)"
}

target_main() {
	mkdir -p "$ovh" "$rundir/target"
	touch "$sync_dir/target.recording" # the initiator connects now
	for rep in $(seq 1 "$reps"); do
		for mode in $modes; do
			tag=r$rep-$mode
			wait_for "$ovh/$tag.go" 900 || fail "the initiator did not start $tag"
			if [ "$mode" = off ]; then ovh_target "$tag"; else record target "$tag" "$mode" ovh_target; fi
			touch "$ovh/$tag.target_done"
		done
	done
	shim=""
	[ -d /proc/sysvipc ] || shim=/usr/lib/ntscope/shm_shim.so
	wait_for "$sync_dir/initiator.done" 300 || fail "the initiator did not finish"
	micro
	return 0
}
initiator_main() {
	mkdir -p "$ovh" "$rundir/initiator"
	calibrate >"$rundir/initiator/calibration.txt"
	for rep in $(seq 1 "$reps"); do
		for mode in $modes; do
			tag=r$rep-$mode
			touch "$ovh/$tag.go"
			wait_for "$ovh/$tag.ready" 120 || fail "the target did not get ready for $tag"
			if [ "$mode" = off ]; then ovh_fio "$tag"; else record initiator "$tag" "$mode" ovh_fio; fi
			wait_for "$ovh/$tag.target_done" 120 || fail "the target did not finish $tag"
		done
	done
	return 0
}
workload() { :; }
truth() {
	cat <<JSON
{"scenario": "overhead", "family": "measurement", "cause": "none",
 "injected": null, "expected_bottleneck": null,
 "overhead": {"reps": $reps, "modes": "$modes", "sample": $sample},
 "workload": [{"job": "r<rep>-<mode>", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime}],
 "expect": "fio IOPS, latency and both VMs' CPU per I/O for each capture mode; traces in <role>-r<rep>-<mode>/"}
JSON
}
