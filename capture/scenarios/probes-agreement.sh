# Probes beside the patched events: on a patched kernel both hosts record with probes=on, so
# every I/O is measured twice, its NVMe/TCP milestones from the patched tracepoints and from the
# capture's probes (capture/lab/check_probes.py agreement compares them per I/O and stage).
# 4K random reads (qd 4) and 128K writes (R2T, qd 1) at once: every milestone, the R2T too.
# cpu_wait=0: fewer events between a tracepoint and its probe.
: "${runtime:=3}"
: "${qd:=4}"
: "${cpu_wait:=0}"
initiator_capture="probes=on cpu_wait=$cpu_wait"
target_capture="probes=on cpu_wait=$cpu_wait"
# Before the recording (initiator): a capture stopped with SIGTERM removes its probes; one
# killed with SIGKILL (with its trace-cmd) leaves them, and the next capture removes them when
# it starts (the preflight's check=1 here: it says so). Results in initiator/probe-cleanup.txt.
probe_lines() { grep -c ':ntscope_' /sys/kernel/tracing/kprobe_events 2>/dev/null; }
wait_probes() { # wait_probes: until this host's probes are placed (60 s at most)
	i=0
	while [ "$(probe_lines)" = 0 ] && [ $i -lt 300 ]; do sleep 0.2; i=$((i + 1)); done
	[ "$(probe_lines)" != 0 ]
}
wait_recording() { # wait_recording LOG: until the capture logging to LOG records (60 s at most)
	i=0
	while ! grep -q "recording to" "$1" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.2; i=$((i + 1)); done
	sleep 1
	grep -q "recording to" "$1"
}
descendants() { # descendants PID: every process below PID (/proc/*/stat: field 4 is the parent)
	todo=$1 all=""
	while [ -n "$todo" ]; do
		next=""
		for s in /proc/[0-9]*/stat; do
			set -- $(cat "$s" 2>/dev/null)
			case " $todo " in *" ${4:-x} "*) next="$next $1" ;; esac
		done
		all="$all$next" todo=${next# }
	done
	echo $all
}
initiator_setup() {
	mkdir -p "$rundir/$host"
	out=$rundir/$host/probe-cleanup.txt
	: >"$out"
	capture role=initiator host="$host" run=kill-term runs=/tmp/kill probes=on iops=100 duration=60 >"$rundir/$host/kill-term.log" 2>&1 &
	job=$!
	if wait_probes && wait_recording "$rundir/$host/kill-term.log"; then
		# the capture itself (the pid it wrote), not the just recipe around it
		kill -TERM "$(cat /tmp/ntscope-capture.ntscope_nvme_tcp.pid)"
		wait $job
		n=$(probe_lines)
		[ "$n" = 0 ] && echo "ok SIGTERM while recording: the capture removed its probes" >>"$out" ||
			echo "FAIL SIGTERM: $n probe lines left in kprobe_events" >>"$out"
		[ -s /tmp/kill/kill-term/initiator/trace.dat ] && [ -s /tmp/kill/kill-term/initiator/host.json ] &&
			echo "ok SIGTERM while recording: trace.dat and host.json written (a stop, not a loss)" >>"$out" ||
			echo "FAIL SIGTERM while recording: no trace.dat / host.json" >>"$out"
	else
		echo "FAIL SIGTERM: the probes were never placed (see initiator/kill-term.log)" >>"$out"
		kill $job
	fi
	capture role=initiator host="$host" run=kill-kill runs=/tmp/kill probes=on iops=100 duration=60 >"$rundir/$host/kill-kill.log" 2>&1 &
	job=$!
	if wait_probes; then
		# the capture, its trace-cmd and that one's recorders: SIGKILL, nothing can clean up
		pid=$(cat /tmp/ntscope-capture.ntscope_nvme_tcp.pid)
		kill -KILL $pid $(descendants $pid) 2>/dev/null
		wait $job
		sleep 1
		n=$(probe_lines)
		[ "$n" != 0 ] && echo "ok SIGKILL: $n probe lines left behind, for the next capture to remove" >>"$out" ||
			echo "FAIL SIGKILL: nothing left behind (the test did not kill the capture)" >>"$out"
	else
		echo "FAIL SIGKILL: the probes were never placed (see initiator/kill-kill.log)" >>"$out"
		kill $job
	fi
}
initiator_main() {
	# shellcheck disable=SC2086
	capture role=initiator host="$host" run="$run" runs=$share $initiator_capture -- sh $self workload "$run" 2>"$rundir/$host/capture.err"
	rc=$?
	cat "$rundir/$host/capture.err" >&2
	# (the preflight, check=1, is the first to start after the killed one)
	cat "$rundir/$host/preflight.txt" "$rundir/$host/capture.err" |
		grep -q "removed the probes an earlier capture (pid [0-9]*) left behind" &&
		echo "ok the next capture removed the probes the killed one left behind" >>"$rundir/$host/probe-cleanup.txt" ||
		echo "FAIL the next capture did not say it removed the killed capture's probes" >>"$rundir/$host/probe-cleanup.txt"
	return $rc
}
workload() {
	run_fio mixed --name=randread --rw=randread --bs=4k --iodepth="$qd" \
		--name=write128k --rw=write --bs=128k --iodepth=1 --offset=128M
}
truth() {
	cat <<JSON
{"scenario": "probes-agreement", "family": "capture_test", "cause": "none",
 "injected": null, "expected_bottleneck": null,
 "capture": {"initiator": {"probes": "on", "cpu_wait": $cpu_wait}, "target": {"probes": "on", "cpu_wait": $cpu_wait}},
 "workload": [{"job": "randread", "rw": "randread", "bs_bytes": 4096, "iodepth": $qd, "cpu": null, "runtime_s": $runtime},
              {"job": "write128k", "rw": "write", "bs_bytes": 131072, "iodepth": 1, "cpu": null, "runtime_s": $runtime}],
 "expect": "each I/O's stages from the probes agree with those from the patched events (the probes sit right after or before their tracepoints)"}
JSON
}
