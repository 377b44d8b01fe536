#!/usr/bin/env bash
# Lab checks beyond `just lab-test`: other kernels (6.12, the stock flavours) and many runs, too
# long for CI's budget. The capture's probes (probes=) against the patched events:
#   (a) per-I/O agreement: probes-agreement on the patched 6.1 and 6.12 kernels (out of the core
#       lab-test: under TCG the target's two command-receive stages measured 94.2-99% within
#       max(5%, 30 us) from run to run, around the 95% bound)
#   (b) the same scenario on the patched kernel and on the stock kernel with probes (two runs a
#       side): for every ntprof stage both measure, the means agree within max(10%, 20 us, twice
#       the repeats' own spread) (slow device, network delay, few queues; 6.1)
#   (c) compare on probed pairs (stock 6.1 kernel, probes=on) names the cause the patched pairs
#       name: slow device, network delay, busy device, R2T writes under a rate limit, few
#       queues, interference c2 and c3 (lab-test.sh's own checks, on runs named lab-extra-probed-*)
#   (d) the stock join of R2T writes on stock 6.1 (nvme_complete_rq carries the transfer tag):
#       every 128 KiB write matched, its completion paired through the block request
#   (e) every cause the lab injects at a second intensity and queue depth (mild and severe where
#       lab-test has one), each pair against its own base (lab-test.sh with LAB_TEST_SET=extra)
# (b)'s first probed run is (c)'s when c ran in the same call (it runs first). Builds a missing kernel first (build=1: 6.12 and the stock flavours, ~15-90 min each).
#   lab-test-extra.sh [a] [b] [c] [d] [e]   (default: all)
# Env: LAB_TEST_RETRY as lab-test.sh's. Out: runs/lab-extra-*; last line "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
capture_dir=$(dirname "$here")
repo=$(dirname "$capture_dir")
runs=${NTSCOPE_RUNS:-$repo/runs}
py=${NTSCOPE_PYTHON:-python3}
parts=${*:-a b c d e}
mkdir -p "$runs"
passed=0 failed=0
result() { # result ok|FAIL WHAT
	if [ "$1" = ok ]; then passed=$((passed + 1)); echo "ok   $2"; else failed=$((failed + 1)); echo "FAIL $2"; fi
}
want() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
lab() { # lab RUN SCENARIO ARGS...: one run, checked by check_run.py
	local run=$1 t0=$(date +%s) out rc
	shift
	if ! bash "$here/lab.sh" "$run" "$@" force=1 build=1; then
		result FAIL "lab $run $* (see the error above)"
		return 1
	fi
	out=$(python3 "$here/check_run.py" "$runs/$run")
	rc=$?
	echo "$out" | sed 's/^/    /'
	if [ $rc = 0 ]; then result ok "lab $run $* ($(( $(date +%s) - t0 )) s): $(tail -n 1 <<<"$out")"
	else result FAIL "check_run $run: $(tail -n 1 <<<"$out")"; return 1; fi
}
check() { # check WHAT check_probes.py-args...: a check_probes.py line
	local what=$1 out rc
	shift
	out=$("$py" "$here/check_probes.py" "$@")
	rc=$?
	echo "$out" | sed 's/^/    /'
	if [ $rc = 0 ]; then result ok "$what: $(tail -n 1 <<<"$out")"; else result FAIL "$what: $(tail -n 1 <<<"$out")"; fi
}
t_all=$(date +%s)

if want a; then
	for k in 6.1 6.12; do
		lab "lab-extra-agreement-$k" probes-agreement kernel=$k flavor=patched timeout=600 &&
			check "(a) $k" agreement "$runs/lab-extra-agreement-$k"
	done
fi

if want c; then
	# lab-test.sh's live diagnosis on probed stock pairs (its tolerances and retries), nothing else
	LAB_TEST_PREFIX=lab-extra-probed LAB_TEST_CAPTURE_TEST=0 LAB_TEST_SCENARIOS="" LAB_TEST_MULTI_HOST="" \
	LAB_TEST_DIAGNOSIS="base@breakdown-randread slow-device:delay_us=10000 slow-net@slow-net-delay-target
		busy-base@busy-device:control=1,delay_us=20000,runtime=6 busy-device:delay_us=20000,runtime=6
		rate-ini-base@slow-net-rate-initiator:netem= rate-ini@slow-net-rate-initiator
		few-queues-base@few-queues:jobs=1 few-queues interference-c0 interference-c2 interference-c3" \
		bash "$here/lab-test.sh" kernel=6.1 flavor=stock probes=on >"$runs/lab-extra-probed.log" 2>&1
	grep -E '^(ok|FAIL|again) ' "$runs/lab-extra-probed.log" | grep -E 'diagnosis|interference|again' | sed 's/^/    /'
	fails=$(grep -cE '^FAIL (diagnosis|interference)' "$runs/lab-extra-probed.log")
	oks=$(grep -cE '^ok   (diagnosis|interference)' "$runs/lab-extra-probed.log")
	if [ "$fails" = 0 ] && [ "$oks" -ge 9 ]; then result ok "(c) probed pairs name the patched pairs' causes: $oks checks ($runs/lab-extra-probed.log)"
	else result FAIL "(c) probed pairs: $oks ok, $fails failed ($runs/lab-extra-probed.log)"; fi
	# and the probed runs gave the detailed stages (mode probes), not the stock ones only
	# (the analysis' own mode: lab-test writes compare.json there, not report.json)
	for r in "$runs"/lab-extra-probed-slow-device "$runs"/lab-extra-probed-few-queues; do
		mode=$(cd "$repo" && "$py" -m ntscope sql "$r" -c "SELECT mode FROM analysis_mode" 2>&1 | tail -n 1)
		[ "$mode" = probes ] && result ok "(c) ${r##*/}: analysis mode probes" || result FAIL "(c) ${r##*/}: analysis mode $mode (want probes)"
	done
fi

if want b; then
	# the probed runs are (c)'s when it ran (same scenarios and parameters), else recorded here
	for spec in slow-device@slow-device:delay_us=10000 slow-net@slow-net-delay-target few-queues@few-queues; do
		name=${spec%%@*} rest=${spec#*@}
		sc=${rest%%:*} params=()
		[ "$rest" != "$sc" ] && IFS=, read -r -a params <<<"${rest#*:}"
		# two runs a side, interleaved (the host's load drifts): the means must agree within what
		# the lab shows between its own repeats
		lab "lab-extra-patched-$name" "$sc" kernel=6.1 flavor=patched ${params[@]+"${params[@]}"} || continue
		if ! want c || [ ! -d "$runs/lab-extra-probed-$name" ]; then
			lab "lab-extra-probed-$name" "$sc" kernel=6.1 flavor=stock probes=on ${params[@]+"${params[@]}"} || continue
		fi
		lab "lab-extra-patched-$name-r2" "$sc" kernel=6.1 flavor=patched ${params[@]+"${params[@]}"} &&
			lab "lab-extra-probed-$name-r2" "$sc" kernel=6.1 flavor=stock probes=on ${params[@]+"${params[@]}"} || continue
		check "(b) $name" means "$runs/lab-extra-patched-$name,$runs/lab-extra-patched-$name-r2" \
			"$runs/lab-extra-probed-$name,$runs/lab-extra-probed-$name-r2"
	done
fi

if want d; then
	# 128 KiB writes need an R2T: on 6.1 nvme_complete_rq then reads the H2CData header's transfer
	# tag where the command id was. The stock join pairs those completions through the block request.
	if lab lab-extra-stock-write-128k write-128k kernel=6.1 flavor=stock qd=4; then
		out=$(cd "$repo" && "$py" -m ntscope sql "$runs/lab-extra-stock-write-128k" -c "
			SELECT count(*) FILTER (WHERE io_type = 'write') AS writes,
			       count(*) FILTER (WHERE io_type = 'write' AND match_state = 'matched') AS matched,
			       (SELECT count(*) FROM nvme_commands WHERE role = 'initiator' AND kind = 'io' AND io_type = 'write'
			          AND pairing = 'block' AND complete_cid <> cid) AS ttag_completions,
			       (SELECT count(*) FROM nvme_commands WHERE role = 'initiator' AND kind = 'io' AND io_type = 'write'
			          AND state <> 'complete') AS incomplete
			FROM io" | tail -n 1)
		IFS=, read -r writes matched ttag incomplete <<<"$out"
		if [ "${writes:-0}" -gt 0 ] && [ "$matched" = "$writes" ] && [ "${ttag:-0}" -gt 0 ] && [ "$incomplete" = 0 ]; then
			result ok "(d) stock R2T writes: $writes writes, all matched and complete; $ttag completions reported the transfer tag, paired through the block request"
		else result FAIL "(d) stock R2T writes: writes $writes, matched $matched, transfer-tag completions $ttag, incomplete $incomplete"; fi
	fi
fi

if want e; then
	if LAB_TEST_SET=extra LAB_TEST_CAPTURE_TEST=0 bash "$here/lab-test.sh" >"$runs/lab-extra-intensities.log" 2>&1
	then result ok "(e) second intensities: $(tail -n 1 "$runs/lab-extra-intensities.log")"
	else grep -E '^FAIL ' "$runs/lab-extra-intensities.log" | sed 's/^/    /'
		result FAIL "(e) second intensities: $(tail -n 1 "$runs/lab-extra-intensities.log") ($runs/lab-extra-intensities.log)"; fi
fi

echo "lab-test-extra: $(( $(date +%s) - t_all )) s"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
