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

# net_flows: tcp:tcp_probe filtered in the kernel to connections on neither NVMe/TCP port of
# this host (a controller's trsvcid on an initiator, an nvmet port's on a target)
r=$(tree flows-ini initiator stock)
expect "net_flows: no tcp_probe event, a note" 0 "other TCP traffic not recorded: this kernel has no tcp:tcp_probe event" \
	@ "$r" role=initiator run=x dry_run=1 -- true
event "$r" tcp tcp_probe "__u8 saddr[28]" "__u8 daddr[28]" "__u16 sport" "__u16 dport" "__u16 data_len" "__u32 snd_una"
expect "net_flows: no controller yet, the NVMe/TCP ports 4420 and 8009 left out" 0 \
	"-e 'tcp:tcp_probe' -f 'sport != 4420 && dport != 4420 && sport != 8009 && dport != 8009'" @ "$r" role=initiator run=x dry_run=1 -- true
mkdir -p "$r/sys/class/nvme/nvme0" "$r/sys/class/nvme/nvme1"
echo tcp >"$r/sys/class/nvme/nvme0/transport"
echo "traddr=10.0.0.2,trsvcid=4421,src_addr=10.0.0.1" >"$r/sys/class/nvme/nvme0/address"
echo rdma >"$r/sys/class/nvme/nvme1/transport"
echo "traddr=10.0.1.2,trsvcid=4999" >"$r/sys/class/nvme/nvme1/address"
expect "net_flows: the initiator's NVMe/TCP controller's port (not the RDMA one's)" 0 \
	"-e 'tcp:tcp_probe' -f 'sport != 4421 && dport != 4421'" @ "$r" role=initiator run=x dry_run=1 -- true
expect "net_flows=0 leaves it out" 0 "" @ "$r" role=initiator run=x net_flows=0 dry_run=1 -- true
expect_not "net_flows=0: no tcp events" "tcp:tcp_probe"
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

# ---------------------------------------------------------------- 5. one source: EVENTS.md
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
