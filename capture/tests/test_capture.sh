#!/usr/bin/env bash
# Host-side test of ntscope-capture, no VM and no tracing: argument checks, the preflight
# against prepared trees (NTSCOPE_HOST_ROOT: fake /proc, /sys, /etc, /lib/modules), the
# trace-cmd command it builds (filters of sample=, block=, qid=), and a whole "recording"
# with a stand-in trace-cmd (host.json: sample, io_counters, filters read back, a filter the
# kernel refused). Each check asserts the exit status and a message or value.
#   capture/tests/test_capture.sh        (just test-capture)
# Out: "ok   ..." / "FAIL ..." lines, last line "N passed, N failed"; exit 1 on a failure.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
capture_dir=$(dirname "$here")
repo=$(dirname "$capture_dir")
cap=$capture_dir/ntscope-capture
T=$(mktemp -d "${TMPDIR:-/tmp}/ntscope-capture-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
passed=0 failed=0
result() { # result ok|FAIL WHAT
	if [ "$1" = ok ]; then passed=$((passed + 1)); echo "ok   $2"; else failed=$((failed + 1)); echo "FAIL $2"; fi
}

# ---------------------------------------------------------------- stand-in trace-cmd
# -v: a version (FAKE_TC_VERSION); record: writes each -f filter into the tree's tracefs
# filter file as trace-cmd does (refused, with the kernel's parse error, for the events
# named in FAKE_TC_REFUSE),
# runs the command, writes the -o file; report --stat: nothing (no lost events).
mkdir -p "$T/bin"
cat >"$T/bin/trace-cmd" <<'EOF'
#!/bin/sh
case "$1" in
-v) echo "trace-cmd version ${FAKE_TC_VERSION:-3.1.6} (fake)"; exit 0 ;;
report) exit 0 ;;
record) shift ;;
*) exit 1 ;;
esac
out="" ev=""
while [ $# -gt 0 ]; do
	case "$1" in
	-C | -b) shift 2 ;;
	-o) out=$2; shift 2 ;;
	-e) ev=$2; shift 2 ;;
	-f) f=$NTSCOPE_HOST_ROOT/sys/kernel/tracing/events/${ev%%:*}/${ev#*:}/filter
		mkdir -p "${f%/filter}" # (a probe's event folder: the kernel made it when the probe was placed)
		# as trace-cmd 3.1 on 6.1: its own pids appended; a refused filter shows the parse error
		case " ${FAKE_TC_REFUSE:-} " in
		*" $ev "*) printf '((%s))&&((common_pid<9||common_pid>10))\n      ^\nparse_error: Too many terms in predicate expression\n' "$2" >"$f" ;;
		*) printf '((%s))&&((common_pid<9||common_pid>10))\n' "$2" >"$f" ;;
		esac
		shift 2 ;;
	*) break ;;
	esac
done
echo "$*" >"$FAKE_TC_LOG"
"$@"
echo fake-trace >"$out"
EOF
chmod +x "$T/bin/trace-cmd"
# A PATH without any trace-cmd: links to the tools the script uses.
mkdir -p "$T/notc"
for t in sh awk sed tr head cut grep cat ls stat id uname wc df mkdir mv rm date sleep; do
	ln -sf "$(command -v "$t")" "$T/notc/$t"
done
export FAKE_TC_LOG=$T/trace-cmd.log

# ---------------------------------------------------------------- prepared trees
ini_patched="nvme_tcp_queue_rq nvme_tcp_queue_request nvme_tcp_try_send nvme_tcp_try_send_cmd_pdu nvme_tcp_try_send_data_pdu nvme_tcp_try_send_data nvme_tcp_done_send_req nvme_tcp_handle_c2h_data nvme_tcp_recv_data nvme_tcp_process_nvme_cqe nvme_tcp_handle_r2t"
tgt_patched="nvmet_tcp_try_recv_pdu nvmet_tcp_done_recv_pdu nvmet_tcp_exec_read_req nvmet_tcp_exec_write_req nvmet_tcp_queue_response nvmet_tcp_setup_c2h_data_pdu nvmet_tcp_setup_r2t_pdu nvmet_tcp_setup_response_pdu nvmet_tcp_try_send_data_pdu nvmet_tcp_try_send_r2t nvmet_tcp_try_send_response nvmet_tcp_try_send_data nvmet_tcp_handle_h2c_data_pdu nvmet_tcp_try_recv_data"
block_all="block_bio_queue block_bio_backmerge block_bio_frontmerge block_bio_remap block_split block_getrq block_rq_insert block_rq_issue block_rq_merge block_rq_requeue block_rq_complete block_rq_error block_bio_complete block_plug block_unplug"
event() { # event ROOT SYSTEM NAME FIELD...: a format file with those fields
	local d=$1/sys/kernel/tracing/events/$2/$3
	shift 3
	mkdir -p "$d"
	{
		echo "name: ${d##*/}"
		echo "format:"
		printf '\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n'
		for f in "$@"; do printf '\tfield:%s;\toffset:8;\tsize:4;\tsigned:0;\n' "$f"; done
	} >"$d/format"
	echo none >"$d/filter"
}
# tree NAME ROLE FLAVOR: a Debian 6.1 host, root, tracefs at /sys/kernel/tracing, the
# role's module loaded, stock (+ patched) events and the block events; tests then break it.
tree() {
	local r=$T/$1 role=$2 flavor=$3 e
	rm -rf "$r"
	mkdir -p "$r/proc/self" "$r/proc/sys/kernel" "$r/etc" "$r/sys/kernel/tracing/events" \
		"$r/sys/kernel/tracing/per_cpu/cpu0" "$r/sys/kernel/debug" "$r/sys/kernel/security" \
		"$r/sys/class/block/nvme0n1" "$r/sys/block/nvme0n1" "$r/lib/modules/6.1.0-27-amd64"
	printf 'sysfs /sys sysfs rw 0 0\nproc /proc proc rw 0 0\ntracefs /sys/kernel/tracing tracefs rw,relatime 0 0\n' >"$r/proc/mounts"
	printf 'Name:\tsh\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t0\nCapEff:\t000001ffffffffff\n' >"$r/proc/self/status"
	echo 6.1.0-27-amd64 >"$r/proc/sys/kernel/osrelease"
	printf 'processor\t: 0\nprocessor\t: 1\n' >"$r/proc/cpuinfo"
	echo "MemAvailable:    4000000 kB" >"$r/proc/meminfo"
	printf 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n' >"$r/etc/os-release"
	echo "none [integrity] confidentiality" >"$r/sys/kernel/security/lockdown"
	echo "[local] global counter uptime perf mono mono_raw boot tai x86-tsc" >"$r/sys/kernel/tracing/trace_clock"
	for f in tracing_on buffer_size_kb events/enable per_cpu/cpu0/trace_pipe_raw; do echo 0 >"$r/sys/kernel/tracing/$f"; done
	echo 259:0 >"$r/sys/class/block/nvme0n1/dev"
	echo "     100        0     800      10      200        0    1600       20        0       30       30        0        0        0        0        5        1" >"$r/sys/block/nvme0n1/stat"
	if [ "$role" = initiator ]; then
		echo "nvme_tcp 45056 2 - Live 0x0000000000000000" >"$r/proc/modules"
		event "$r" nvme nvme_setup_cmd "char disk[32]" "int ctrl_id" "int qid" "u16 cid" "u8 opcode" "u8 cdw10[24]"
		event "$r" nvme nvme_complete_rq "char disk[32]" "int ctrl_id" "int qid" "int cid" "u16 status"
		event "$r" nvme nvme_sq "int ctrl_id" "int qid" "int sq_head"
		if [ "$flavor" = patched ]; then
			for e in $ini_patched; do event "$r" nvme_tcp "$e" "int ctrl_instance" "u16 cntlid" "u16 qid" "u16 cid" "int tag"; done
		fi
	else
		echo "nvmet_tcp 32768 1 - Live 0x0000000000000000" >"$r/proc/modules"
		event "$r" nvmet nvmet_req_init "u16 ctrl_id" "int qid" "u16 cid" "u8 opcode"
		event "$r" nvmet nvmet_req_complete "u16 ctrl_id" "int qid" "u16 cid" "u16 status"
		if [ "$flavor" = patched ]; then
			for e in $tgt_patched; do event "$r" nvmet_tcp "$e" "u16 cntlid" "u16 qid" "int queue_idx" "u16 cid"; done
		fi
	fi
	for e in $block_all; do event "$r" block "$e" "dev_t dev" "sector_t sector"; done
	echo "$r"
}

# run_cap OUT ROOT args...: ntscope-capture with the tree and the stand-in trace-cmd; status in $rc
run_cap() {
	local out=$1 root=$2
	shift 2
	NTSCOPE_HOST_ROOT=$root PATH="$T/bin:$PATH" "$cap" "$@" >"$out.out" 2>"$out.err"
	rc=$?
}
# expect NAME STATUS 'text in stdout+stderr'... ROOT -- args: run, then assert status and each text
expect() {
	local name=$1 want_rc=$2
	shift 2
	local texts=()
	while [ "$1" != @ ]; do texts+=("$1"); shift; done
	shift
	local root=$1
	shift
	run_cap "$T/last" "$root" "$@"
	local all ok=1 missing=""
	all=$(cat "$T/last.out" "$T/last.err")
	[ "$rc" = "$want_rc" ] || ok=0
	for t in "${texts[@]}"; do
		grep -qF -- "$t" <<<"$all" || { ok=0; missing="$missing [$t]"; }
	done
	if [ $ok = 1 ]; then result ok "$name (exit $rc)"
	else result FAIL "$name: exit $rc (want $want_rc), missing:$missing; output:
$all"; fi
}
expect_not() { # expect_not NAME TEXT: the last stdout (check lines, trace-cmd command) does not contain TEXT
	if grep -qF -- "$2" "$T/last.out"; then result FAIL "$1: output has '$2'"; else result ok "$1"; fi
}

# ---------------------------------------------------------------- 1. arguments (no tree needed)
expect "role missing" 2 "role is missing" @ "" run=x
expect "role unknown" 2 "is not initiator or target" @ "" role=server run=x
expect "run missing" 2 "run is missing" @ "" role=target
expect "run with a path" 2 "characters other than" @ "" role=target run=../x
expect "duration and command" 2 "both duration=5 and a command" @ "" role=target run=x duration=5 -- true
expect "unknown key" 2 "unknown key 'color'" @ "" role=target run=x color=red
expect "duration not a number" 2 "not a whole number of seconds" @ "" role=target run=x duration=abc
expect "clock_error_us fraction" 2 "is not a whole number of microseconds" @ "" role=initiator run=x clock=tai clock_error_us=1.5
expect "clock_error_us without tai" 2 "but clock=mono" @ "" role=initiator run=x clock_error_us=50
expect "sample not a power of two" 2 "sample '6' is not a power of two between 1 and 4096" "bits of the command id" @ "" role=initiator run=x sample=6
expect "sample too big" 2 "sample '8192' is not a power of two" @ "" role=initiator run=x sample=8192
expect "block value" 2 "block 'some' is not all or none" @ "" role=initiator run=x block=some
expect "check flag value" 2 "check 'yes' is not 0 or 1" @ "" role=initiator run=x check=yes
expect "clock not a clock name" 2 "clock 'm.n.' is not a trace clock name" "e.g. clock=mono" @ "" role=initiator run=x clock=m.n. dry_run=1 -- true
expect "empty ring buffer" 2 "buffer_kb '0' leaves no ring buffer to record into" @ "" role=initiator run=x buffer_kb=0 dry_run=1 -- true

# ---------------------------------------------------------------- 2. preflight on prepared trees
r=$(tree stock-ini initiator stock)
expect "stock initiator passes" 0 "result: pass (stock" "ok   tracefs: /sys/kernel/tracing" "ok   permissions: root" \
	"ok   trace-cmd 3.1.6" "ok   module nvme_tcp loaded" "ok   stock events: nvme (nvme_setup_cmd,nvme_complete_rq)" \
	"note stock kernel: no nvme_tcp events" "host: debian (debian), kernel 6.1.0-27-amd64" @ "$r" role=initiator run=x check=1
r=$(tree patched-tgt target patched)
expect "patched target passes" 0 "result: pass (patched" "ok   patched events: nvmet_tcp (14 of 14)" \
	"ok   module nvmet_tcp loaded" "ok   stock events: nvmet (nvmet_req_init,nvmet_req_complete)" @ "$r" role=target run=x check=1
expect "wrong clock" 2 "trace clock 'nope' is not offered by this kernel (offered: local global" "result: FAIL (1 problem" @ "$r" role=target run=x clock=nope check=1

r=$(tree nomount initiator stock)
sed -i '/tracefs/d' "$r/proc/mounts"
expect "tracefs not mounted" 2 "tracefs is not mounted" "fix: mount -t tracefs nodev /sys/kernel/tracing" @ "$r" role=initiator run=x check=1
sed -i 's/^Uid:.*/Uid:\t1000\t1000\t1000\t1000/; s/^CapEff:.*/CapEff:\t0000000000000000/' "$r/proc/self/status"
expect "tracefs not mounted, not root" 2 "as root (mounting needs CAP_SYS_ADMIN): sudo mount -t tracefs" @ "$r" role=initiator run=x check=1

r=$(tree debugfs initiator stock)
mv "$r/sys/kernel/tracing" "$r/sys/kernel/debug/tracing"
sed -i 's|^tracefs .*|debugfs /sys/kernel/debug debugfs rw 0 0|' "$r/proc/mounts"
expect "tracefs inside debugfs" 0 "ok   tracefs: /sys/kernel/debug/tracing" "result: pass (stock" @ "$r" role=initiator run=x check=1

r=$(tree notracefs initiator stock)
rm -rf "$r/sys/kernel/tracing"
sed -i '/tracefs/d' "$r/proc/mounts"
expect "kernel without tracefs" 2 "this kernel has no tracefs" "CONFIG_FTRACE=y and CONFIG_EVENT_TRACING=y" @ "$r" role=initiator run=x check=1

r=$(tree lockdown initiator stock)
echo "none integrity [confidentiality]" >"$r/sys/kernel/security/lockdown"
expect "lockdown confidentiality" 2 "kernel lockdown is 'confidentiality'" "boot with lockdown=integrity" @ "$r" role=initiator run=x check=1

# permissions: tracefs files root:root 0640 (0660 for the control files in the group case)
r=$(tree nonroot initiator stock)
chmod 0640 "$r"/sys/kernel/tracing/{tracing_on,trace_clock,buffer_size_kb,events/enable,per_cpu/cpu0/trace_pipe_raw}
chown 0:0 "$r"/sys/kernel/tracing/{tracing_on,trace_clock,buffer_size_kb,events/enable,per_cpu/cpu0/trace_pipe_raw}
sed -i 's/^Uid:.*/Uid:\t1000\t1000\t1000\t1000/; s/^Gid:.*/Gid:\t1000\t1000\t1000\t1000/; s/^Groups:.*/Groups:\t1000 2000/; s/^CapEff:.*/CapEff:\t0000000000000000/' "$r/proc/self/status"
expect "not root, no access" 2 "not root (uid 1000, CapEff 0000000000000000: lacks CAP_DAC_OVERRIDE) and tracefs is not writable: /sys/kernel/tracing/tracing_on" \
	"run as root (sudo ntscope-capture" @ "$r" role=initiator run=x check=1
sed -i 's/^CapEff:.*/CapEff:\t0000000000200000/' "$r/proc/self/status"
expect "not root, CAP_SYS_ADMIN only" 2 "has CAP_SYS_ADMIN (not enough" @ "$r" role=initiator run=x check=1
sed -i 's/^CapEff:.*/CapEff:\t0000000000000002/' "$r/proc/self/status"
expect "not root, CAP_DAC_OVERRIDE" 0 "ok   permissions: uid 1000 with tracefs access" @ "$r" role=initiator run=x check=1
sed -i 's/^CapEff:.*/CapEff:\t0000000000000000/' "$r/proc/self/status"
chgrp 2000 "$r"/sys/kernel/tracing/{tracing_on,trace_clock,buffer_size_kb,events/enable,per_cpu/cpu0/trace_pipe_raw}
chmod 0660 "$r"/sys/kernel/tracing/{tracing_on,trace_clock,buffer_size_kb,events/enable}
expect "not root, tracefs group access" 0 "ok   permissions: uid 1000 with tracefs access" "note not root: nvmet configfs" @ "$r" role=initiator run=x check=1
# tracefs itself root:root 0700 (the default): the user cannot list it, which is no kernel without events
r=$(tree nonroot-700 initiator stock)
chown 0:0 "$r/sys/kernel/tracing" && chmod 0700 "$r/sys/kernel/tracing"
sed -i 's/^Uid:.*/Uid:\t1000\t1000\t1000\t1000/; s/^Gid:.*/Gid:\t1000\t1000\t1000\t1000/; s/^Groups:.*/Groups:\t1000/; s/^CapEff:.*/CapEff:\t0000000000000000/' "$r/proc/self/status"
expect "not root, tracefs unreadable" 2 "not root (uid 1000) and tracefs at /sys/kernel/tracing cannot be read by this user (its mode is 700)" \
	"run as root (sudo ntscope-capture" @ "$r" role=initiator run=x check=1
expect_not "not root, tracefs unreadable: no kernel advice" "CONFIG_EVENT_TRACING"

# trace-cmd missing / too old; the fix names the distribution's package manager
r=$(tree tc-missing initiator stock)
NTSCOPE_HOST_ROOT=$r PATH="$T/notc" "$cap" role=initiator run=x check=1 >"$T/last.out" 2>"$T/last.err"
rc=$?
if [ $rc = 2 ] && grep -qF "trace-cmd is not installed" "$T/last.err" && grep -qF "fix: apt-get install trace-cmd (version 2.9 or newer)" "$T/last.err"; then
	result ok "trace-cmd missing (Debian: apt-get)"
else result FAIL "trace-cmd missing: exit $rc: $(cat "$T/last.err")"; fi
printf 'NAME="Red Hat Enterprise Linux"\nID="rhel"\nID_LIKE="fedora"\n' >"$r/etc/os-release"
NTSCOPE_HOST_ROOT=$r PATH="$T/notc" "$cap" role=initiator run=x check=1 >"$T/last.out" 2>"$T/last.err"
rc=$?
if [ $rc = 2 ] && grep -qF "fix: dnf install trace-cmd" "$T/last.err"; then result ok "trace-cmd missing (RHEL: dnf)"
else result FAIL "trace-cmd missing on RHEL: exit $rc: $(cat "$T/last.err")"; fi
FAKE_TC_VERSION=2.8.3 expect "trace-cmd too old" 2 "trace-cmd 2.8.3" "is too old: ntscope needs 2.9+" "fix: install trace-cmd 2.9 or newer: dnf install trace-cmd" @ "$r" role=initiator run=x check=1

# modules and events
r=$(tree nomod initiator stock)
: >"$r/proc/modules"
rm -rf "$r/sys/kernel/tracing/events/nvme"
mkdir -p "$r/lib/modules/6.1.0-27-amd64/kernel/drivers/nvme/host"
: >"$r/lib/modules/6.1.0-27-amd64/kernel/drivers/nvme/host/nvme-tcp.ko.xz"
expect "module not loaded, no nvme events" 2 "module nvme_tcp is not loaded (it is installed" "fix: modprobe nvme-tcp (it loads nvme-core and nvme-fabrics), then connect: nvme connect -t tcp" \
	"no nvme events (/sys/kernel/tracing/events/nvme missing)" "2 problem(s) above: nothing recorded" @ "$r" role=initiator run=x check=1
rm "$r/lib/modules/6.1.0-27-amd64/kernel/drivers/nvme/host/nvme-tcp.ko.xz"
expect "module absent (Debian)" 2 "has no nvme-tcp.ko" "apt-get install --reinstall linux-image-6.1.0-27-amd64" "CONFIG_NVME_TCP=m" @ "$r" role=initiator run=x check=1
printf 'ID=ubuntu\nID_LIKE=debian\n' >"$r/etc/os-release"
expect "module absent (Ubuntu)" 2 "apt-get install linux-modules-extra-6.1.0-27-amd64" @ "$r" role=initiator run=x check=1
printf 'ID="rocky"\nID_LIKE="rhel centos fedora"\n' >"$r/etc/os-release"
expect "module absent (Rocky/RHEL)" 2 "dnf install kernel-modules-6.1.0-27-amd64" @ "$r" role=initiator run=x check=1
r=$(tree tgt-nomod target stock)
: >"$r/proc/modules"
expect "target module absent" 2 "module nvmet_tcp is not loaded" "CONFIG_NVME_TARGET_TCP=m" @ "$r" role=target run=x check=1
rm "$r/proc/modules"
expect "kernel without module support" 0 "ok   module nvmet_tcp: kernel without module support (drivers built in)" @ "$r" role=target run=x check=1
r=$(tree builtin initiator stock)
: >"$r/proc/modules"
echo "kernel/drivers/nvme/host/nvme-tcp.ko" >"$r/lib/modules/6.1.0-27-amd64/modules.builtin"
expect "module built in (modules.builtin)" 0 "ok   module nvme_tcp built into the kernel" @ "$r" role=initiator run=x check=1

r=$(tree missing-ev initiator stock)
rm -rf "$r/sys/kernel/tracing/events/nvme/nvme_complete_rq" "$r/sys/kernel/tracing/events/block/block_getrq"
expect "stock and block events missing, named" 2 "stock events missing from /sys/kernel/tracing/events/nvme: nvme_complete_rq" \
	"block events missing from /sys/kernel/tracing/events/block: block_getrq" "2 problem(s)" @ "$r" role=initiator run=x check=1
r=$(tree noblock initiator stock)
rm -rf "$r/sys/kernel/tracing/events/block"
expect "no block events" 2 "the kernel has no block tracepoints" "or record without them: block=none" @ "$r" role=initiator run=x check=1
expect "no block events, block=none" 0 "result: pass (stock, 3 events)" @ "$r" role=initiator run=x check=1 block=none
r=$(tree partial initiator patched)
rm -rf "$r/sys/kernel/tracing/events/nvme_tcp/nvme_tcp_handle_r2t"
expect "patched system missing an event" 0 "patched nvme_tcp events missing (an older or different patch series?): nvme_tcp_handle_r2t" \
	"note patched events: nvme_tcp has 10 of 11" "result: pass (patched" @ "$r" role=initiator run=x check=1
r=$(tree patched-only initiator patched)
: >"$r/proc/modules"
expect "patched events prove the module" 0 "ok   module nvme_tcp: events present" @ "$r" role=initiator run=x check=1

# ---------------------------------------------------------------- 3. the trace-cmd command
r=$(tree dry initiator stock)
expect "dry run" 0 "" @ "$r" role=initiator run=x runs=/tmp/r events=block:block_rq_issue qid=1 buffer_kb=4096 dry_run=1 -- true
want="trace-cmd record -C 'mono' -b 4096 -o '/tmp/r/x/initiator/.trace.dat.partial' -e 'block:block_rq_issue' 'sh' '$cap' '__wrap' '/tmp/r/x/initiator' 'true'"
if [ "$(cat "$T/last.out")" = "$want" ]; then result ok "dry run prints the trace-cmd command (wrapper + command)"
else result FAIL "dry run printed: $(cat "$T/last.out") (want $want)"; fi

expect "stacks=1 asks trace-cmd for a kernel stack after every event" 0 \
	"-o '/tmp/r/x/initiator/.trace.dat.partial' -T -e 'block:block_rq_issue'" @ "$r" role=initiator run=x runs=/tmp/r events=block:block_rq_issue buffer_kb=4096 stacks=1 dry_run=1 -- true
expect "stacks other than 0 or 1" 2 "stacks 'yes' is not 0 or 1" @ "$r" role=initiator run=x stacks=yes dry_run=1 -- true

r=$(tree sample-ini initiator patched)
expect "sampled initiator command" 0 "-e 'nvme_tcp:nvme_tcp_queue_rq' -f '!(cid & 28672)'" "-e 'nvme_tcp:nvme_tcp_handle_r2t' -f '!(cid & 28672)'" \
	"-e 'nvme:nvme_complete_rq' -e 'nvme:nvme_setup_cmd' -f '!(cid & 28672)' -e 'nvme:nvme_sq' -e 'block:block_bio_queue' -e" @ "$r" role=initiator run=x sample=8 dry_run=1 -- true
expect_not "sampled initiator: block events unfiltered" "block:block_rq_issue' -f"
expect "sampled initiator, block=none" 0 "-e 'nvme:nvme_complete_rq' -f '!(cid & 28672)'" @ "$r" role=initiator run=x sample=8 block=none dry_run=1 -- true
expect_not "block=none: no block events" "-e 'block:"
expect "sample with qid and dev" 0 "-e 'nvme:nvme_setup_cmd' -f 'disk == \"nvme0n1\" && qid == 1 && !(cid & 61695)'" \
	"-e 'block:block_rq_issue' -f 'dev == 271581184'" @ "$r" role=initiator run=x sample=4096 qid=1 dev=nvme0n1 dry_run=1 -- true
expect "sample=16: the whole generation counter, no tag bit" 0 "-e 'nvme:nvme_setup_cmd' -f '!(cid & 61440)'" @ "$r" role=initiator run=x sample=16 dry_run=1 -- true
expect "sample=2: the counter's lowest bit" 0 "-e 'nvme:nvme_setup_cmd' -f '!(cid & 4096)'" @ "$r" role=initiator run=x sample=2 dry_run=1 -- true
expect "check lists the sample" 0 "ok   sample 1 in 8 (cid & 0x7000 == 0): filter '!(cid & 28672)' on nvme_tcp:nvme_tcp_done_send_req" "unfiltered: nvme:nvme_complete_rq nvme:nvme_sq block:block_bio_queue" @ "$r" role=initiator run=x sample=8 check=1
r=$(tree sample-tgt target patched)
expect "sampled target command" 0 "-e 'nvmet_tcp:nvmet_tcp_done_recv_pdu' -f '!(cid & 61443)'" "-e 'nvmet:nvmet_req_init' -f '!(cid & 61443)'" \
	"-e 'nvmet:nvmet_req_complete' -f '!(cid & 61443)'" @ "$r" role=target run=x sample=64 dry_run=1 -- true
expect_not "sampled target: try_recv_pdu (cid unknown) not recorded" "nvmet_tcp_try_recv_pdu"
expect "unsampled target keeps try_recv_pdu" 0 "-e 'nvmet_tcp:nvmet_tcp_try_recv_pdu' -e" @ "$r" role=target run=x dry_run=1 -- true
expect_not "unsampled: no cid filter" "cid &"

# cpu_wait: the workqueue events, filtered to this side's io_work by its kallsyms address, and NET_RX softirqs
r=$(tree iowork-tgt target patched)
for e in workqueue_queue_work workqueue_execute_start workqueue_execute_end; do event "$r" workqueue "$e" "void * work" "void * function"; done
printf 'ffffffff812eeb00 t nvmet_tcp_try_recv\t[nvmet_tcp]\nffffffff812eeb10 t nvmet_tcp_io_work\t[nvmet_tcp]\n' >"$r/proc/kallsyms"
expect "io_work: target io_work's workqueue events, by address" 0 \
	"-e 'workqueue:workqueue_queue_work' -f 'function == 0xffffffff812eeb10' -e 'workqueue:workqueue_execute_start' -f 'function == 0xffffffff812eeb10'" \
	@ "$r" role=target run=x dry_run=1 -- true
expect "cpu_wait=0 leaves them out" 0 "" @ "$r" role=target run=x cpu_wait=0 dry_run=1 -- true
expect_not "cpu_wait=0: no workqueue events" "workqueue:"
printf 'ffffffff812eeb00 t nvmet_tcp_try_recv\t[nvmet_tcp]\n' >"$r/proc/kallsyms"
expect "io_work: no symbol, a note and no workqueue events" 0 "io_work timing not recorded: no address for nvmet_tcp_io_work" \
	@ "$r" role=target run=x dry_run=1 -- true
expect_not "io_work: no symbol, no workqueue events" "workqueue:"
printf '0000000000000000 t nvmet_tcp_io_work\t[nvmet_tcp]\n' >"$r/proc/kallsyms"
expect "io_work: hidden address (kptr_restrict)" 0 "io_work timing not recorded" @ "$r" role=target run=x dry_run=1 -- true
expect "cpu_wait: a bad value" 2 "cpu_wait 'yes' is not 0 or 1" @ "$r" role=target run=x cpu_wait=yes dry_run=1 -- true
for e in softirq_raise softirq_entry softirq_exit; do event "$r" irq "$e" "unsigned int vec"; done
expect "cpu_wait: the NET_RX softirq events" 0 "-e 'irq:softirq_raise' -f 'vec == 3' -e 'irq:softirq_entry' -f 'vec == 3' -e 'irq:softirq_exit' -f 'vec == 3'" \
	@ "$r" role=target run=x dry_run=1 -- true
expect "cpu_wait=0: no softirq events either" 0 "" @ "$r" role=target run=x cpu_wait=0 dry_run=1 -- true
expect_not "cpu_wait=0: no irq events" "irq:"

# recovery: the initiator's error recovery, reconnect and reset works, beside its io_work, by address
r=$(tree recovery-ini initiator patched)
for e in workqueue_queue_work workqueue_execute_start workqueue_execute_end; do event "$r" workqueue "$e" "void * work" "void * function"; done
printf 'ffffffff81400010 t nvme_tcp_io_work\t[nvme_tcp]\nffffffff81400020 t nvme_tcp_error_recovery_work\t[nvme_tcp]\nffffffff81400030 t nvme_tcp_reconnect_ctrl_work\t[nvme_tcp]\n' >"$r/proc/kallsyms"
expect "recovery: the recovery works' events with io_work's, by address" 0 \
	"-e 'workqueue:workqueue_execute_start' -f 'function == 0xffffffff81400010 || function == 0xffffffff81400020 || function == 0xffffffff81400030'" \
	@ "$r" role=initiator run=x dry_run=1 -- true
expect "recovery: check names the works found" 0 "ok   recovery: the controller's error recovery, reconnect and reset work recorded (nvme_tcp_error_recovery_work nvme_tcp_reconnect_ctrl_work)" \
	@ "$r" role=initiator run=x check=1
expect "recovery with cpu_wait=0: the recovery works alone" 0 \
	"-e 'workqueue:workqueue_queue_work' -f 'function == 0xffffffff81400020 || function == 0xffffffff81400030'" \
	@ "$r" role=initiator run=x cpu_wait=0 dry_run=1 -- true
expect "recovery=0 cpu_wait=0: no workqueue events" 0 "" @ "$r" role=initiator run=x cpu_wait=0 recovery=0 dry_run=1 -- true
expect_not "recovery=0 cpu_wait=0: no workqueue events" "workqueue:"
expect "recovery=0: io_work's alone" 0 "-f 'function == 0xffffffff81400010' -e" @ "$r" role=initiator run=x recovery=0 dry_run=1 -- true
expect "recovery: a bad value" 2 "recovery 'yes' is not 0 or 1" @ "$r" role=initiator run=x recovery=yes dry_run=1 -- true
printf 'ffffffff81400010 t nvme_tcp_io_work\t[nvme_tcp]\n' >"$r/proc/kallsyms"
expect "recovery: no symbol, a note with the fix" 0 "recovery: no address for nvme_tcp_error_recovery_work in /proc/kallsyms" \
	@ "$r" role=initiator run=x check=1
r=$(tree recovery-tgt target patched)
for e in workqueue_queue_work workqueue_execute_start workqueue_execute_end; do event "$r" workqueue "$e" "void * work" "void * function"; done
printf 'ffffffff812eeb10 t nvmet_tcp_io_work\t[nvmet_tcp]\nffffffff81400020 t nvme_tcp_error_recovery_work\t[nvme_tcp]\n' >"$r/proc/kallsyms"
expect "recovery: off on a target by default" 0 "-f 'function == 0xffffffff812eeb10' -e" @ "$r" role=target run=x dry_run=1 -- true
expect_not "recovery: a target records no initiator work" "0xffffffff81400020"

# tenants: the cgroup v2 mount and its io controller are checked; without them a note says why
# every I/O counts for the root, and no cgroup events are recorded
r=$(tree tenants-ini initiator stock)
expect "tenants: no cgroup v2, a note" 0 "note tenants: no cgroup v2 is mounted" @ "$r" role=initiator run=x check=1
expect_not "tenants: no cgroup v2, no cgroup events" "cgroup:cgroup_mkdir"
mkdir -p "$r/sys/fs/cgroup/web" && echo "cpu memory" >"$r/sys/fs/cgroup/cgroup.subtree_control"
printf 'cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n' >>"$r/proc/mounts"
expect "tenants: io controller off below the root, a note with the fix" 0 \
	"echo +io > /sys/fs/cgroup/cgroup.subtree_control" @ "$r" role=initiator run=x check=1
echo "cpu io memory" >"$r/sys/fs/cgroup/cgroup.subtree_control"
for e in cgroup_mkdir cgroup_rmdir; do event "$r" cgroup "$e" "int root" "int level" "u64 id" "__data_loc char[] path"; done
expect "tenants: cgroup v2 with io on: counted, and the mkdir/rmdir events recorded" 0 \
	"ok   tenants: cgroup v2 at /sys/fs/cgroup, io controller on below the root: 2 cgroups now" @ "$r" role=initiator run=x check=1
expect "tenants: the cgroup events in the recording" 0 "-e 'cgroup:cgroup_mkdir' -e 'cgroup:cgroup_rmdir'" \
	@ "$r" role=initiator run=x dry_run=1 -- true
expect "tenants=0 leaves them out" 0 "" @ "$r" role=initiator run=x tenants=0 dry_run=1 -- true
expect_not "tenants=0: no cgroup events" "cgroup:cgroup_mkdir"
expect "tenants: a bad value" 2 "tenants 'yes' is not 0 or 1" @ "$r" role=initiator run=x tenants=yes dry_run=1 -- true

# net_flows: tcp:tcp_probe filtered in the kernel to connections on neither NVMe/TCP port of
# this host (a controller's trsvcid on an initiator, an nvmet port's on a target)
r=$(tree flows-ini initiator stock)
expect "net_flows: no tcp_probe event, a note" 0 "other TCP traffic not recorded: this kernel has no tcp:tcp_probe event" \
	@ "$r" role=initiator run=x dry_run=1 -- true
expect "nvme_acks: no tcp_probe event, a note" 0 "NVMe/TCP ACKs not recorded: this kernel has no tcp:tcp_probe event" \
	@ "$r" role=initiator run=x net_flows=0 dry_run=1 -- true
event "$r" tcp tcp_probe "__u8 saddr[28]" "__u8 daddr[28]" "__u16 sport" "__u16 dport" "__u16 data_len" "__u32 snd_una"
expect "net_flows: no controller yet, the NVMe/TCP ports 4420 and 8009 left out" 0 \
	"-e 'tcp:tcp_probe' -f 'sport != 4420 && dport != 4420 && sport != 8009 && dport != 8009'" @ "$r" role=initiator run=x nvme_acks=0 dry_run=1 -- true
mkdir -p "$r/sys/class/nvme/nvme0" "$r/sys/class/nvme/nvme1"
echo tcp >"$r/sys/class/nvme/nvme0/transport"
echo "traddr=10.0.0.2,trsvcid=4421,src_addr=10.0.0.1" >"$r/sys/class/nvme/nvme0/address"
echo rdma >"$r/sys/class/nvme/nvme1/transport"
echo "traddr=10.0.1.2,trsvcid=4999" >"$r/sys/class/nvme/nvme1/address"
expect "net_flows: the initiator's NVMe/TCP controller's port (not the RDMA one's)" 0 \
	"-e 'tcp:tcp_probe' -f 'sport != 4421 && dport != 4421'" @ "$r" role=initiator run=x nvme_acks=0 dry_run=1 -- true
# nvme_acks (default on an initiator): the NVMe/TCP connections too, so no port filter with
# net_flows, only the NVMe/TCP ports without it; the check says what it buys
expect "nvme_acks with net_flows: every connection, no filter" 0 "-e 'tcp:tcp_probe' 'sh'" @ "$r" role=initiator run=x dry_run=1 -- true
expect_not "nvme_acks with net_flows: no port filter" "-f 'sport"
expect "nvme_acks without net_flows: only the NVMe/TCP port" 0 "-e 'tcp:tcp_probe' -f 'sport == 4421 || dport == 4421'" \
	@ "$r" role=initiator run=x net_flows=0 dry_run=1 -- true
expect "nvme_acks: the check says what it can tell without the target" 0 \
	"ok   nvme_acks: tcp:tcp_probe on the NVMe/TCP port(s) 4421" @ "$r" role=initiator run=x check=1
expect "nvme_acks: a bad value" 2 "nvme_acks 'yes' is not 0 or 1" @ "$r" role=initiator run=x nvme_acks=yes dry_run=1 -- true
expect "net_flows=0 nvme_acks=0 leaves it out" 0 "" @ "$r" role=initiator run=x net_flows=0 nvme_acks=0 dry_run=1 -- true
expect_not "net_flows=0 nvme_acks=0: no tcp events" "tcp:tcp_probe"
expect "net_flows: a bad value" 2 "net_flows 'on' is not 0 or 1" @ "$r" role=initiator run=x net_flows=on dry_run=1 -- true
expect "net_flows: events= replaces the default events" 0 "" @ "$r" role=initiator run=x events=nvme dry_run=1 -- true
expect_not "net_flows with events=: no tcp events" "tcp:tcp_probe"
r=$(tree flows-tgt target stock)
event "$r" tcp tcp_probe "__u8 saddr[28]" "__u8 daddr[28]" "__u16 sport" "__u16 dport" "__u16 data_len" "__u32 snd_una"
for p in 1 2; do mkdir -p "$r/sys/kernel/config/nvmet/ports/$p"; echo tcp >"$r/sys/kernel/config/nvmet/ports/$p/addr_trtype"; done
echo 4420 >"$r/sys/kernel/config/nvmet/ports/1/addr_trsvcid"
echo 4430 >"$r/sys/kernel/config/nvmet/ports/2/addr_trsvcid"
expect "net_flows: the target's nvmet ports" 0 \
	"-e 'tcp:tcp_probe' -f 'sport != 4420 && dport != 4420 && sport != 4430 && dport != 4430'" @ "$r" role=target run=x dry_run=1 -- true
NTSCOPE_TEST_TRACE_CMD=$T/bin/trace-cmd expect "net_flows: a recording" 0 "" @ "$r" role=target run=flows runs="$T/runs-flows" -- true
if python3 - "$T/runs-flows/flows/target/host.json" <<'EOF'; then result ok "host.json: net_flows (event, filter, ports, interfaces)"; else result FAIL "host.json net_flows (above)"; fi
import json, sys
n = json.load(open(sys.argv[1]))["net_flows"]
ok = (n["event"] == "tcp:tcp_probe" and n["filter"] == "sport != 4420 && dport != 4420 && sport != 4430 && dport != 4430"
      and n["nvme_tcp_ports"] == [4420, 4430] and (n["interfaces"] is None or isinstance(n["interfaces"], list)))
print(n) if not ok else None
sys.exit(0 if ok else 1)
EOF

# native multipath: each controller's namespace paths with their ANA group and state in host.json
# (nvme_ana at the start and the end; the one-path lab's controllers have none: empty lists)
r=$(tree ana-ini initiator stock)
for c in 0 1; do
	mkdir -p "$r/sys/class/nvme/nvme$c/nvme0c${c}n1"
	echo tcp >"$r/sys/class/nvme/nvme$c/transport"
	echo 1 >"$r/sys/class/nvme/nvme$c/nvme0c${c}n1/nsid"
	echo 1 >"$r/sys/class/nvme/nvme$c/nvme0c${c}n1/ana_grpid"
done
echo optimized >"$r/sys/class/nvme/nvme0/nvme0c0n1/ana_state"
echo inaccessible >"$r/sys/class/nvme/nvme1/nvme0c1n1/ana_state"
NTSCOPE_TEST_TRACE_CMD=$T/bin/trace-cmd expect "nvme_ana: a recording" 0 "" @ "$r" role=initiator run=ana runs="$T/runs-ana" -- true
if python3 - "$T/runs-ana/ana/initiator/host.json" <<'EOF2'; then result ok "host.json: nvme_ana (each path's ANA group and state, start and end)"; else result FAIL "host.json nvme_ana (above)"; fi
import json, sys
a = json.load(open(sys.argv[1]))["nvme_ana"]
want = [{"controller": "nvme0", "instance": 0, "path_disk": "nvme0c0n1", "nsid": 1, "ana_grpid": 1, "ana_state": "optimized"},
        {"controller": "nvme1", "instance": 1, "path_disk": "nvme0c1n1", "nsid": 1, "ana_grpid": 1, "ana_state": "inaccessible"}]
ok = a["start"] == want and a["end"] == want
print(a) if not ok else None
sys.exit(0 if ok else 1)
EOF2

# ---------------------------------------------------------------- 4. a "recording" with the stand-in
r=$(tree rec initiator stock)
runs=$T/runs
expect "host root refuses a real recording" 2 "NTSCOPE_HOST_ROOT='$r' is for testing" @ "$r" role=initiator run=rec runs="$runs" -- true
# the workload: 50 more reads and 30 more writes on nvme0n1 while "recording"
work="$T/work.sh"
printf '#!/bin/sh\necho "     150        0    1200      10      230        0    1840       20        0       30       30        0        0        0        0        6        1" >"%s"\n' "$r/sys/block/nvme0n1/stat" >"$work"
NTSCOPE_TEST_TRACE_CMD=$T/bin/trace-cmd expect "recording with the stand-in" 0 "wrote $runs/rec/initiator/trace.dat" \
	@ "$r" role=initiator run=rec runs="$runs" sample=8 -- sh "$work"
hj=$runs/rec/initiator/host.json
if python3 - "$hj" <<'EOF'; then result ok "host.json: sample, io_counters, filters read back"; else result FAIL "host.json content (above)"; fi
import json, sys
h = json.load(open(sys.argv[1]))
s, io, f = h["sample"], h["io_counters"], h["filters"]
checks = [
    (s["n"] == 8 and s["mask"] == 0x7000 and s["rule"] == "cid & 0x7000 == 0" and s["kernel_filter"] == "!(cid & 28672)", s),
    (s["filtered_events"] == ["nvme:nvme_setup_cmd"], s["filtered_events"]),
    ("nvme:nvme_complete_rq" in s["unfiltered_events"] and s["not_recorded"] == [], s),
    (h["block_events"] == "all", h["block_events"]),
    (f["applied"] is True and f["errors"] == [], f),
    (len(io) == 1 and io[0]["dev"] == "nvme0n1", io),
    (io[0]["end"]["reads"] - io[0]["start"]["reads"] == 50 and io[0]["end"]["writes"] - io[0]["start"]["writes"] == 30, io),
    (io[0]["end"]["flushes"] - io[0]["start"]["flushes"] == 1 and io[0]["start"]["read_sectors"] == 800, io),
    (h["command"].startswith("sh ") and h["command"].endswith("work.sh"), h["command"]),
    (h["net_flows"] is None, h.get("net_flows", "no net_flows key")),   # the tree has no tcp_probe
]
bad = [repr(v) for ok, v in checks if not ok]
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
tlog=$(cat "$FAKE_TC_LOG")
[ "$tlog" = "sh $cap __wrap $runs/rec/initiator sh $work" ] && result ok "trace-cmd ran the wrapper with the command" ||
	result FAIL "trace-cmd was given: $tlog"
# the kernel refuses the filter of one event: warning, exit 1, host.json says so
FAKE_TC_REFUSE=nvme:nvme_setup_cmd NTSCOPE_TEST_TRACE_CMD=$T/bin/trace-cmd expect "a refused filter is reported" 1 \
	"warning: the kernel did not apply the filter '!(cid & 28672)' to $r/sys/kernel/tracing/events/nvme/nvme_setup_cmd/filter (it shows: ((!(cid & 28672)))&&((common_pid<9||common_pid>10))|      ^|parse_error: Too many terms in predicate expression|)" \
	@ "$r" role=initiator run=rec runs="$runs" sample=8 force=1 -- true
if python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["filters"]; sys.exit(0 if f["applied"] is False and f["errors"] == [{"event": "nvme:nvme_setup_cmd", "filter": "!(cid & 28672)", "kernel_shows": "((!(cid & 28672)))&&((common_pid<9||common_pid>10))|      ^|parse_error: Too many terms in predicate expression|"}] else 1)' "$hj"; then
	result ok "host.json: filters.applied false with the refused filter"
else result FAIL "host.json filters after a refused filter: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["filters"])' "$hj")"; fi
NTSCOPE_TEST_TRACE_CMD=$T/bin/trace-cmd expect "unsampled recording" 0 "" @ "$r" role=initiator run=rec runs="$runs" force=1 -- true
python3 -c 'import json,sys; h=json.load(open(sys.argv[1])); sys.exit(0 if h["sample"] == {"n": 1, "mask": 0, "rule": "all commands"} and h["filters"]["applied"] is True else 1)' "$hj" &&
	result ok "host.json: sample n=1 when not sampling" || result FAIL "host.json sample when not sampling: $(grep '"sample"' "$hj")"
python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["nvme_tcp_digest"] is None else 1)' "$hj" &&
	result ok "host.json: nvme_tcp_digest null (unknown) without digest=" || result FAIL "host.json nvme_tcp_digest without digest=: $(grep '"nvme_tcp_digest"' "$hj")"
# the digests of the connections (nvme connect -g / -G): sysfs does not show them, the user says
NTSCOPE_TEST_TRACE_CMD=$T/bin/trace-cmd expect "recording with digest=header,data" 0 "" @ "$r" role=initiator run=rec runs="$runs" digest=header,data force=1 -- true
python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["nvme_tcp_digest"] == {"header": True, "data": True, "source": "capture key digest="} else 1)' "$hj" &&
	result ok "host.json: nvme_tcp_digest header and data" || result FAIL "host.json nvme_tcp_digest with digest=header,data: $(grep '"nvme_tcp_digest"' "$hj")"
NTSCOPE_TEST_TRACE_CMD=$T/bin/trace-cmd expect "recording with digest=none" 0 "" @ "$r" role=initiator run=rec runs="$runs" digest=none force=1 -- true
python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["nvme_tcp_digest"] == {"header": False, "data": False, "source": "capture key digest="} else 1)' "$hj" &&
	result ok "host.json: nvme_tcp_digest none" || result FAIL "host.json nvme_tcp_digest with digest=none: $(grep '"nvme_tcp_digest"' "$hj")"
expect "a bad digest= is refused" 2 "digest 'crc' is not none, header, data or header,data" @ "$r" role=initiator run=rec runs="$runs" digest=crc force=1 -- true

# ---------------------------------------------------------------- 5. probes (probes=)
# The BTF reader against the compiler: probe_structs.c holds stand-ins for the kernel structures
# the probes read; pahole turns its DWARF into BTF, whole and as base + split (module) BTF, and
# the reader's offsets must equal offsetof() / sizeof() / the enum values gcc printed.
btf=$T/btf
mkdir -p "$btf"
S=$here/probe_structs.c
if gcc -g -c -DPART_BASE "$S" -o "$btf/base.o" && gcc -g -c -DPART_MODULE "$S" -o "$btf/mod.o" &&
	gcc -g -c "$S" -o "$btf/all.o" && gcc -DPART_MAIN "$S" -o "$btf/answers" && "$btf/answers" >"$btf/want" &&
	pahole --btf_encode_detached="$btf/base.btf" "$btf/base.o" &&
	pahole --btf_base="$btf/base.btf" --btf_encode_detached="$btf/mod.btf" "$btf/mod.o" &&
	pahole --btf_encode_detached="$btf/all.btf" "$btf/all.o"; then
	sed 's/ = .*//' "$btf/want" >"$btf/queries"
	echo "member request nosuch" >>"$btf/queries"
	for form in "all.btf" "base.btf mod.btf"; do
		# shellcheck disable=SC2086
		got=$(cd "$btf" && "$cap" __btf_query queries $form)
		if [ "$got" = "$(cat "$btf/want"; echo "member request nosuch = ?")" ]; then
			result ok "BTF reader ($form): $(grep -c . "$btf/want") offsets, sizes and enum values as gcc has them; an absent member is ?"
		else result FAIL "BTF reader ($form) differs from gcc: $(diff <(echo "$got") "$btf/want")"; fi
	done
	# mawk has no bit operations: the reader must not need them (busybox awk is what the lab runs)
	if command -v mawk >/dev/null; then
		mkdir -p "$T/mawk"; ln -sf "$(command -v mawk)" "$T/mawk/awk"
		got=$(cd "$btf" && PATH="$T/mawk:$PATH" "$cap" __btf_query queries base.btf mod.btf)
		[ "$got" = "$(cat "$btf/want"; echo "member request nosuch = ?")" ] && result ok "BTF reader under mawk" ||
			result FAIL "BTF reader under mawk: $(diff <(echo "$got") "$btf/want")"
	fi
	expect "BTF reader: not a BTF file" 2 "is not a BTF file" @ "" __btf_query "$btf/queries" "$S"
else
	result FAIL "could not build the test BTF (gcc and pahole, from dwarves: tools/apt-packages.txt)"
fi

# probe_tree NAME ROLE FLAVOR: a tree whose kernel has probe events, BTF (the stand-ins above,
# split for the module as Debian's /sys/kernel/btf/<module>) and kallsyms with the functions the
# probes sit on. kprobe_events is a plain file here: the definitions written land in it.
probe_tree() {
	local r mod
	r=$(tree "$1" "$2" "$3")
	: >"$r/sys/kernel/tracing/kprobe_events"
	: >"$r/sys/kernel/tracing/kprobe_profile"
	: >"$r/sys/kernel/tracing/error_log"
	mkdir -p "$r/sys/kernel/btf" "$r/proc/sys/kernel/random"
	cp "$btf/base.btf" "$r/sys/kernel/btf/vmlinux"
	mod=$( [ "$2" = initiator ] && echo nvme_tcp || echo nvmet_tcp )
	cp "$btf/mod.btf" "$r/sys/kernel/btf/$mod"
	echo 0e4c51d8-0000-4000-8000-$(printf '%012d' $$) >"$r/proc/sys/kernel/random/boot_id"
	echo 1 >"$r/proc/sys/kernel/kptr_restrict"
	cat >"$r/proc/kallsyms" <<KS
ffffffff81100000 T blk_mq_start_request
ffffffff81100200 T blk_mq_complete_request
ffffffff81200000 T kernel_sendpage
ffffffff81200100 T sock_sendmsg
ffffffff81300000 T nvmet_req_init
ffffffff81300400 T nvmet_req_complete
ffffffffc0100000 t nvme_tcp_try_send	[nvme_tcp]
ffffffffc0100800 t nvme_tcp_queue_rq	[nvme_tcp]
ffffffffc0100c00 t nvme_tcp_data_in_short	[nvme_tcp]
ffffffffc0100d00 t nvme_tcp_io_work	[nvme_tcp]
ffffffffc0100f00 d nvme_tcp_mq_ops	[nvme_tcp]
ffffffffc0200000 t nvmet_bdev_execute_rw	[nvmet]
ffffffffc0200100 t nvmet_bdev_execute_flush	[nvmet]
ffffffffc0200200 t nvmet_file_execute_rw	[nvmet]
ffffffffc0300000 t nvmet_tcp_queue_response	[nvmet_tcp]
ffffffffc0300300 t nvmet_tcp_io_work	[nvmet_tcp]
ffffffffc0300900 t nvmet_tcp_try_recv_pdu	[nvmet_tcp]
KS
	echo "$r"
}
want_off() { sed -n "s/^$1 = //p" "$btf/want"; } # want_off QUERY: gcc's answer
r=$(probe_tree probes-ini initiator stock)
export TMPDIR=$T/tmp && mkdir -p "$TMPDIR"
expect "probes: a stock initiator with probe events and BTF takes them (auto)" 0 "result: pass (stock, 18 events, 3 probes)" \
	"ok   probe queue_rq (blk_mq_start_request, called from nvme_tcp_queue_rq): nvme_tcp_queue_rq" \
	"ok   probe try_send (kernel_sendpage, called from nvme_tcp_try_send): nvme_tcp_try_send" \
	"note probe try_send: not on nvme_tcp_try_send_cmd_pdu (no function nvme_tcp_try_send_cmd_pdu in /proc/kallsyms" \
	"ok   probe cqe (nvme_tcp_data_in_short): nvme_tcp_process_nvme_cqe" \
	"ok   stages from this host's probes: ntprof:blk_submission ntprof:nvme_tcp_submission ntprof:nvme_tcp_completion" \
	"ok   stages with the target's NVMe/TCP milestones too (its probes or patched events): ntprof:network_transmission ntprof:nstack_submission ntprof:nstack_completion" \
	@ "$r" role=initiator run=x check=1
# each definition went to kprobe_events (then was taken back: the kernel's side, not emulated here)
sz=$(want_off "size request") cmd=$(want_off "member nvme_request cmd") cid=$(want_off "member nvme_common_command command_id")
tag=$(want_off "member request tag") uq=$(want_off "member sock sk_user_data") sk=$(want_off "member socket sk")
qr=$(want_off "member nvme_tcp_queue request") st=$(want_off "member nvme_tcp_request state")
if grep -qF "p:ntscope_nvme_tcp/queue_rq blk_mq_start_request caller=\$stack0:x64 cid=+$cid(+$((sz + cmd))(\$arg1)):u16" "$r/sys/kernel/tracing/kprobe_events" &&
	grep -qF "tag=-$((sz - tag))(+$qr(+$uq(+$sk(\$arg1)))):s32" "$r/sys/kernel/tracing/kprobe_events" &&
	grep -qF "send_state=+$st(+$qr(+$uq(+$sk(\$arg1)))):u32" "$r/sys/kernel/tracing/kprobe_events"; then
	result ok "probes: definitions with the BTF offsets (the command id through the request, the sent request through the socket)"
else result FAIL "probe definitions: $(cat "$r/sys/kernel/tracing/kprobe_events")"; fi
: >"$r/sys/kernel/tracing/kprobe_events"
expect "probes=off: none placed" 0 "note probes: off (probes=off)" @ "$r" role=initiator run=x check=1 probes=off
[ ! -s "$r/sys/kernel/tracing/kprobe_events" ] && result ok "probes=off writes nothing to kprobe_events" ||
	result FAIL "probes=off wrote: $(cat "$r/sys/kernel/tracing/kprobe_events")"
# a function inlined away: the probe that needs it is named, with the stages it costs
sed -i '/nvme_tcp_data_in_short/d' "$r/proc/kallsyms"
expect "probes: an inlined function is named with the stages it costs" 0 \
	"note probe cqe NOT PLACED (nvme_tcp_data_in_short): no function nvme_tcp_data_in_short in /proc/kallsyms" \
	"note stage ntprof:nvme_tcp_completion not measurable: no probe gives i:nvme_tcp_process_nvme_cqe" "result: pass (stock, 18 events, 2 probes)" \
	@ "$r" role=initiator run=x check=1
r=$(probe_tree probes-callers initiator stock)
sed -i '/nvme_tcp_try_send\|nvme_tcp_queue_rq/d' "$r/proc/kallsyms"
expect "probes: callers inlined away" 0 "note probe queue_rq NOT PLACED (blk_mq_start_request): none of its callers (nvme_tcp_queue_rq) is a function of this kernel (inlined)" \
	@ "$r" role=initiator run=x check=1
r=$(probe_tree probes-tgt target stock)
expect "probes: a stock target takes its probes" 0 "result: pass (stock, 17 events, 6 probes)" \
	"ok   probe recv_cmd (nvmet_req_init): nvmet_tcp_done_recv_pdu" "ok   probe exec_bdev_rw (nvmet_bdev_execute_rw): nvmet_tcp_exec_req" \
	"ok   probe send (kernel_sendpage, called from nvmet_tcp_io_work): nvmet_tcp_setup_c2h_data_pdu nvmet_tcp_setup_r2t_pdu nvmet_tcp_setup_response_pdu" \
	"note probe exec_file_dsm NOT PLACED (nvmet_file_execute_dsm)" "ok   probe queue_response (nvmet_tcp_queue_response): nvmet_tcp_queue_response" \
	"ok   stages from this host's probes: ntprof:nvmet_tcp_submission ntprof:nvmet_tcp_cmd_recv ntprof:nvmet_tcp_r2t_wait ntprof:target_subsystem ntprof:nvmet_tcp_completion" \
	@ "$r" role=target run=x check=1
# a 6.12 kernel: it resolves BTF-named arguments itself (its README lists the syntax), and the
# functions around the target's tracepoints are not inlined: their entries, no socket send
r=$(probe_tree probes-612 target stock)
printf '\t  <argname>[->field[->field|.field...]],\n' >"$r/sys/kernel/tracing/README"
cat >>"$r/proc/kallsyms" <<KS
ffffffffc0300a00 t nvmet_setup_response_pdu	[nvmet_tcp]
ffffffffc0300b00 t nvmet_try_send_r2t	[nvmet_tcp]
ffffffffc0300c00 t nvmet_try_send_data_pdu	[nvmet_tcp]
KS
expect "probes: a 6.12 target: BTF-named arguments, the PDU functions' entries" 0 "result: pass (stock, 17 events, 8 probes)" \
	"ok   probes: this kernel resolves BTF-named probe arguments itself" \
	"ok   probe setup_response (nvmet_setup_response_pdu): nvmet_tcp_setup_response_pdu" \
	"ok   probe setup_r2t (nvmet_try_send_r2t): nvmet_tcp_setup_r2t_pdu" "ok   probe setup_c2h (nvmet_try_send_data_pdu): nvmet_tcp_setup_c2h_data_pdu" \
	@ "$r" role=target run=x check=1
expect_not "probes: no socket-send probe when the PDU functions have entries" "probe send ("
if grep -qF "p:ntscope_nvmet_tcp/recv_cmd nvmet_req_init cid=req->cmd->common.command_id:u16 opcode=req->cmd->common.opcode:u8 qid=sq->qid:u16 cntlid=sq->ctrl->cntlid:u16 trtype=ops->type:u32" "$r/sys/kernel/tracing/kprobe_events" &&
	grep -qF "p:ntscope_nvmet_tcp/setup_r2t nvmet_try_send_r2t cid=cmd->req.cmd->common.command_id:u16" "$r/sys/kernel/tracing/kprobe_events"; then
	result ok "probes: BTF-named arguments in the definitions where the kernel takes them"
else result FAIL "6.12 definitions: $(cat "$r/sys/kernel/tracing/kprobe_events")"; fi

# what is missing, and the fix
r=$(probe_tree probes-nokprobe initiator stock)
rm "$r/sys/kernel/tracing/kprobe_events"
expect "probes=auto without probe events: a note, stock" 0 "note probes: off: this kernel has no probe events" "CONFIG_KPROBE_EVENTS=y" "result: pass (stock, 18 events)" @ "$r" role=initiator run=x check=1
expect "probes=on without probe events: refused" 2 "probes=on: this kernel has no probe events" "fix: a kernel built with CONFIG_KPROBES=y and CONFIG_KPROBE_EVENTS=y" @ "$r" role=initiator run=x check=1 probes=on
r=$(probe_tree probes-nobtf initiator stock)
rm "$r/sys/kernel/btf/vmlinux"
expect "probes=on without BTF: refused" 2 "probes=on: no kernel BTF" "CONFIG_DEBUG_INFO_BTF=y" @ "$r" role=initiator run=x check=1 probes=on
r=$(probe_tree probes-nomodbtf initiator stock)
rm "$r/sys/kernel/btf/nvme_tcp"
expect "probes=on with a module without BTF: refused" 2 "probes=on: module nvme_tcp has no BTF" "CONFIG_DEBUG_INFO_BTF_MODULES=y" @ "$r" role=initiator run=x check=1 probes=on
r=$(probe_tree probes-kptr initiator stock)
sed -i 's/^ffffffff[0-9a-f]*/0000000000000000/' "$r/proc/kallsyms"; echo 2 >"$r/proc/sys/kernel/kptr_restrict"
expect "probes=on with kallsyms hidden: refused" 2 "probes=on: /proc/kallsyms shows no addresses (kernel.kptr_restrict=2)" "sysctl kernel.kptr_restrict=1" @ "$r" role=initiator run=x check=1 probes=on
r=$(probe_tree probes-nonroot initiator stock)
chmod 0644 "$r/sys/kernel/tracing/kprobe_events"; chown 0:0 "$r/sys/kernel/tracing/kprobe_events"
sed -i 's/^Uid:.*/Uid:\t1000\t1000\t1000\t1000/; s/^Gid:.*/Gid:\t1000\t1000\t1000\t1000/; s/^Groups:.*/Groups:\t1000/; s/^CapEff:.*/CapEff:\t0000000000000000/' "$r/proc/self/status"
chmod 0666 "$r"/sys/kernel/tracing/{tracing_on,trace_clock,buffer_size_kb,events/enable,per_cpu/cpu0/trace_pipe_raw}
expect "probes=on not root: refused" 2 "probes=on: /sys/kernel/tracing/kprobe_events is not writable (uid 1000)" "run as root" @ "$r" role=initiator run=x check=1 probes=on
r=$(probe_tree probes-patched initiator patched)
expect "probes=auto on a patched kernel: off" 0 "note probes: off (the patched nvme_tcp events give the detailed stages" "result: pass (patched, 29 events)" @ "$r" role=initiator run=x check=1
expect "probes=on on a patched kernel: both" 0 "result: pass (patched, 29 events, 3 probes)" @ "$r" role=initiator run=x check=1 probes=on

# a leftover of a capture that was killed is removed before placing (here: the group cannot be
# removed, the kernel side is not emulated: the capture stops and says how); a live one refuses
r=$(probe_tree probes-leftover initiator stock)
mkdir -p "$r/sys/kernel/tracing/events/ntscope_nvme_tcp/queue_rq"
echo 0 >"$r/sys/kernel/tracing/events/ntscope_nvme_tcp/enable"
echo "p:ntscope_nvme_tcp/queue_rq blk_mq_start_request" >"$r/sys/kernel/tracing/kprobe_events"
echo 999999999 >"$TMPDIR/ntscope-capture.ntscope_nvme_tcp.pid"
expect "probes: a leftover group that cannot be removed stops the capture" 2 \
	"the probes of ntscope_nvme_tcp an earlier capture (pid 999999999) left behind cannot be removed" @ "$r" role=initiator run=x check=1
if grep -qx -- "-:ntscope_nvme_tcp/queue_rq" "$r/sys/kernel/tracing/kprobe_events" && [ "$(cat "$r/sys/kernel/tracing/events/ntscope_nvme_tcp/enable")" = 0 ]; then
	result ok "probes: the leftover was disabled and its removal written (-:ntscope_nvme_tcp/queue_rq)"
else result FAIL "leftover removal: $(cat "$r/sys/kernel/tracing/kprobe_events")"; fi
(exec -a ntscope-capture sleep 30) & live=$!
echo "$live" >"$TMPDIR/ntscope-capture.ntscope_nvme_tcp.pid"
expect "probes: a running capture's group is not touched" 2 "another ntscope-capture (pid $live) is recording with the probes of ntscope_nvme_tcp" "kill $live" @ "$r" role=initiator run=x check=1
kill "$live" 2>/dev/null

# a recording: the probe events are recorded with their filters (sample=8: the command id, or the
# generation counter where a probe reads the request), host.json says what was placed and why not
r=$(probe_tree probes-rec initiator stock)
NTSCOPE_TEST_TRACE_CMD=$T/bin/trace-cmd expect "probes: recording" 0 "probes: 3 in ntscope_nvme_tcp (queue_rq try_send cqe)" \
	@ "$r" role=initiator run=prec runs="$runs" sample=8 force=1 -- true
f=$r/sys/kernel/tracing/events/ntscope_nvme_tcp
if grep -qF "!(cid & 28672)" "$f/queue_rq/filter" 2>/dev/null && grep -qF "send_state == 0 && send_offset == 0 && !(genctr & 7)" "$f/try_send/filter" 2>/dev/null &&
	grep -qF "(caller >= 0xffffffffc0100800 && caller < 0xffffffffc0100c00)" "$f/queue_rq/filter"; then
	result ok "probes: kernel filters: callers' address ranges, the send state, sample=8 on the cid / generation counter"
else result FAIL "probe filters: $(cat "$f"/*/filter 2>&1)"; fi
hj=$runs/prec/initiator/host.json
if python3 - "$hj" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
p = h["probes"]
assert p["active"] is True and p["group"] == "ntscope_nvme_tcp", p
assert [b["file"] for b in p["btf"]] == ["/sys/kernel/btf/vmlinux", "/sys/kernel/btf/nvme_tcp"], p["btf"]
assert [(x["event"], x["milestones"]) for x in p["placed"]] == [("queue_rq", ["nvme_tcp_queue_rq"]), ("try_send", ["nvme_tcp_try_send"]), ("cqe", ["nvme_tcp_process_nvme_cqe"])], p["placed"]
assert all(x["definition"].startswith("p:ntscope_nvme_tcp/") and x["filter"] for x in p["placed"])
np = {(x["event"], x["function"]): x for x in p["not_placed"]}
assert np[("try_send", "nvme_tcp_try_send_cmd_pdu")]["another_placed"] is True
assert "ntscope_nvme_tcp:queue_rq" in h["events"] and "ntscope_nvme_tcp:queue_rq" in h["sample"]["filtered_events"]
assert h["lost_events"]["probe_misses"] == 0 and p["misses"] == 0
PY
then result ok "host.json: probes placed (definitions, filters, milestones, BTF files), not placed with why, no misses"
else result FAIL "host.json probes: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("probes"))' "$hj")"; fi
# the kernel counted misses: a warning, exit 1, lost events in host.json
r=$(probe_tree probes-miss initiator stock)
printf '  queue_rq      120      0\n  try_send      100      7\n  cqe      120      0\n' >"$r/sys/kernel/tracing/kprobe_profile"
NTSCOPE_TEST_TRACE_CMD=$T/bin/trace-cmd expect "probes: missed hits are lost events" 1 "warning: probe hits were LOST" "7 missed (kprobe_profile" \
	@ "$r" role=initiator run=pmiss runs="$runs" force=1 -- true
python3 -c 'import json,sys; h=json.load(open(sys.argv[1])); sys.exit(0 if h["lost_events"]["probe_misses"] == 7 and [x["misses"] for x in h["probes"]["placed"]] == [0, 7, 0] else 1)' "$runs/pmiss/initiator/host.json" &&
	result ok "host.json: probe misses per probe and in lost_events" || result FAIL "probe misses in host.json: $(grep -o '"lost_events":[^}]*}' "$runs/pmiss/initiator/host.json")"
unset TMPDIR

# ---------------------------------------------------------------- 6. one source: EVENTS.md
events_md=$(python3 - "$repo/kernel-patches/EVENTS.md" <<'EOF'
import re, sys
t = open(sys.argv[1]).read()
ini, tgt = t.split("## Initiator: trace system")[1].split("## Target: trace system")
tgt = tgt.split("## Expected event sequences")[0]
print(" ".join(re.findall(r"^### (\S+)", ini, re.M)))
print(" ".join(re.findall(r"^### (\S+)", tgt, re.M)))
EOF
)
in_script=$(sed -n '/^\tpatched_events="/,/"$/p' "$cap" | tr -d '\t"' | sed 's/^patched_events=//' | tr '\n' ' ' | sed 's/  */ /g')
want_md=$(tr '\n' ' ' <<<"$events_md")
for list in "$ini_patched" "$tgt_patched"; do want_md=${want_md/"$list"/}; done
if [ -z "${want_md// /}" ] && [ "$(echo $in_script)" = "$(echo $ini_patched $tgt_patched)" ]; then
	result ok "the patched event lists (script, this test) equal EVENTS.md's headings"
else result FAIL "patched event lists differ: EVENTS.md '$events_md' vs script '$in_script'"; fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
