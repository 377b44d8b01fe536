#!/usr/bin/env bash
# Lab test: ntscope-capture's argument checks (on this host, nothing recorded), then
# a few scenarios in the two-VM lab, each checked by check_run.py (events present,
# counts balanced between events, sides and fio).
#   lab-test.sh [kernel=6.1] [flavor=auto|patched|stock]  (builds a missing kernel: build=1)
# Env: LAB_TEST_SCENARIOS="name[:param=value,...] ..." replaces the default list.
# Out: runs/lab-test-<scenario>/ (replaced each time); last line "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
capture_dir=$(dirname "$here")
runs=${NTSCOPE_RUNS:-$(dirname "$capture_dir")/runs}
scenarios=${LAB_TEST_SCENARIOS:-"breakdown-randread:qd=4 slow-device slow-net-delay-target interference-c3 write-128k capture-filters capture-overrun"}
passed=0 failed=0
result() { # result OK|FAIL what
	if [ "$1" = ok ]; then passed=$((passed + 1)); echo "ok   $2"; else failed=$((failed + 1)); echo "FAIL $2"; fi
}

# 1. ntscope-capture refuses bad input with exit 2 and a message naming the problem.
expect_error() { # expect_error "what to find in stderr" args...
	local want=$1; shift
	local err rc
	err=$("$capture_dir/ntscope-capture" "$@" 2>&1 >/dev/null); rc=$?
	if [ $rc = 2 ] && grep -q -- "$want" <<<"$err"; then result ok "ntscope-capture $* -> exit 2, '$want'"
	else result FAIL "ntscope-capture $* -> exit $rc, stderr: $err"; fi
}
expect_error "role is missing" run=x
expect_error "is not initiator or target" role=server run=x
expect_error "run is missing" role=target
expect_error "characters other than" role=target run=../x
expect_error "both duration=5 and a command" role=target run=x duration=5 -- true
expect_error "unknown key 'color'" role=target run=x color=red
expect_error "not a whole number of seconds" role=target run=x duration=abc
expect_error "trace clock 'nope'" role=initiator run=x events=block clock=nope
# dry run on this host: prints the trace-cmd command, records nothing
out=$("$capture_dir/ntscope-capture" role=initiator run=x runs=/tmp/r events=block:block_rq_issue qid=1 buffer_kb=4096 dry_run=1 -- true 2>/dev/null)
if [[ "$out" == "trace-cmd record -C 'mono' -b 4096 -o '/tmp/r/x/initiator/.trace.dat.partial' -e 'block:block_rq_issue' 'true'" ]]; then
	result ok "ntscope-capture dry_run prints the trace-cmd command"
else result FAIL "ntscope-capture dry_run printed: $out"; fi

# 2. Lab scenarios.
t_all=$(date +%s)
for spec in $scenarios; do
	sc=${spec%%:*}
	params=()
	[ "$spec" != "$sc" ] && IFS=, read -r -a params <<<"${spec#*:}"
	run="lab-test-$sc"
	t0=$(date +%s)
	if bash "$here/lab.sh" "$run" "$sc" force=1 build=1 "$@" ${params[@]+"${params[@]}"}; then
		result ok "lab $run $sc ${params[*]:-} ($(( $(date +%s) - t0 )) s)"
		out=$(python3 "$here/check_run.py" "$runs/$run")
		rc=$?
		echo "$out" | sed 's/^/    /'
		if [ $rc = 0 ]; then result ok "check_run $run: $(tail -n 1 <<<"$out")"
		else result FAIL "check_run $run: $(tail -n 1 <<<"$out")"; fi
	else
		result FAIL "lab $run $sc ${params[*]:-} (see the error above)"
	fi
done
# Live diagnosis: a base run of the same workload as slow-device above (4 KiB random
# reads, iodepth 1), then `just compare` must name the injected cause.
repo=$(dirname "$capture_dir")
if bash "$here/lab.sh" lab-test-base breakdown-randread force=1 build=1 "$@"; then
	# Only the device cause is checked live: under TCG on a loaded 2-core machine the
	# base run's own network time varies by more than a 2 ms netem delay (fixtures
	# cover the network verdict: reports/ntscope_compare/tests).
	for pair in "slow-device:target device"; do
		sc=${pair%%:*} want=${pair#*:}
		[ -d "$runs/lab-test-$sc" ] || { result FAIL "compare base $sc: the $sc run is missing"; continue; }
		if (cd "$repo" && just compare "$runs/lab-test-base" "$runs/lab-test-$sc" >/dev/null 2>"$runs/lab-test-$sc.compare.err"); then
			got=$(python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["verdicts"][0]; print(v["verdict"], "|", v["cause"])' \
				"$runs/lab-test-$sc/report/compare.json")
			case "$got" in
				"slower | $want"*) result ok "compare base $sc: $got" ;;
				*) result FAIL "compare base $sc: expected 'slower | $want...', got '$got'" ;;
			esac
		else
			result FAIL "compare base $sc failed: $(tail -n 3 "$runs/lab-test-$sc.compare.err")"
		fi
	done
else
	result FAIL "lab lab-test-base breakdown-randread (see the error above)"
fi
echo "lab-test: scenarios took $(( $(date +%s) - t_all )) s"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
