#!/bin/sh
# This VM's part of a lab run (busybox sh, inside the guest).
#   guest.sh target|initiator RUN     set up, then record with ntscope-capture
#   guest.sh target-wait RUN          (wrapped by the target's capture) load + wait
#   guest.sh workload RUN             (wrapped by the initiator's capture) the fio workload
# In:  /share/RUN/scenario.sh (parameters + scenario, written by lab.sh on the host)
# Out: /share/RUN/<role>/{trace.dat,host.json,...}; /share/.sync/<role>.status ("ok" or
#      "fail: why"); markers in /share/.sync that order the two VMs.
set -u
mode=$1 run=$2
share=/share
sync_dir=$share/.sync
rundir=$share/$run
self=/opt/ntscope/capture/lab/guest.sh

target_ip=169.254.10.2
initiator_ip=169.254.10.1
nqn=nqn.2026-11.io.ntscope:lab
port=4420

# Record exactly as a user does on a host: `just capture ...` (plain ntscope-capture
# when the image has no just).
capture() {
	if [ -x /usr/bin/just ]; then
		just -f /opt/ntscope/justfile capture "$@"
	else
		/opt/ntscope/capture/ntscope-capture "$@"
	fi
}

log() { echo "ntscope-lab[$mode $(cut -d' ' -f1 /proc/uptime)s]: $*"; }
fail() { # fail WHY: record the failure for the host and stop
	log "FAIL: $*"
	case "$mode" in
	target | initiator) echo "fail: $*" >"$sync_dir/$mode.status" ;;
	workload) echo "$*" >"$sync_dir/workload.failed" ;;
	esac
	exit 1
}
wait_for() { # wait_for FILE SECONDS WHAT
	i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ "$i" -le $(($2 * 5)) ] || return 1
		sleep 0.2
	done
	return 0
}

# Defaults a scenario may override (it is sourced below).
nullb=""          # null_blk configfs attributes of the target's backing device
connect=""        # extra `nvme connect` arguments (e.g. "-i 1")
target_netem=""   # tc netem arguments on the target's egress (eth0)
initiator_netem="" # tc netem arguments on the initiator's egress (eth0)
clock_sync=""     # "ptp": sync both VMs' clocks with ptp4l before recording on clock=tai
runtime=3         # seconds per fio job
initiator_capture="" # extra `just capture` keys on the initiator (e.g. "qid=1 clock=tai")
target_capture=""    # extra `just capture` keys on the target
target_busy() { :; } # runs on the target while it records (e.g. a local fio)
workload() { fail "scenario defines no workload()"; }

# fio on the NVMe/TCP device (initiator) or the backing device (target).
# run_fio NAME [fio options...]: JSON results in <role>/fio-NAME.json
run_fio() {
	name=$1; shift
	# no SysV IPC in the kernel (no /proc/sysvipc): fio's segment via lab/shm_shim
	shim=""
	[ -d /proc/sysvipc ] || shim=/usr/lib/ntscope/shm_shim.so
	# global options first; "$@" may add more jobs (--name=other ...) that inherit them
	LD_PRELOAD=$shim fio --filename="$dev" --direct=1 --ioengine=libaio --time_based \
		--runtime="$runtime" --size=256M --eta=never --output-format=json \
		--output="$rundir/$role/fio-$name.json" --name="$name" "$@"
}

[ -r "$rundir/scenario.sh" ] || fail "no $rundir/scenario.sh in the share"
# shellcheck disable=SC1090
. "$rundir/scenario.sh"

case "$mode" in
target | target-wait) role=target; dev=/dev/nullb0 ;;
initiator | workload) role=initiator; dev=/dev/nvme0n1 ;;
*) fail "unknown mode '$mode'" ;;
esac

# iproute2's ip and tc by full path: busybox sh prefers its own applets of those names
ip() { /usr/sbin/ip "$@"; }
tc() { /usr/sbin/tc "$@"; }

setup_link() { # setup_link ADDR NETEM
	ip link set lo up
	ip link set eth0 up || fail "no eth0 (the VM's virtio-net link)"
	ip addr add "$1/24" dev eth0 || fail "ip addr add $1 failed"
	# with clock_sync the delay comes after the sync: PTP assumes a symmetric path
	[ -n "$clock_sync" ] || apply_netem "$2"
}

apply_netem() { # apply_netem NETEM: tc netem on eth0's egress (nothing when empty)
	[ -n "$1" ] || return 0
	# shellcheck disable=SC2086
	tc qdisc add dev eth0 root netem $1 || fail "tc qdisc add dev eth0 root netem $1 failed"
	log "netem on eth0 egress: $1"
}

# Clock sync (clock_sync=ptp): ptp4l over UDPv4 with software timestamps, the target as
# the grandmaster, the initiator as a client that steps and then steers its
# CLOCK_REALTIME (so CLOCK_TAI, trace clock tai) onto the target's. Under TCG software
# timestamps jitter by milliseconds: 8 syncs per second, the linreg servo, steps only
# beyond 10 ms, and a long TX-timestamp timeout.
ptp_opts="-4 -S -i eth0 -m --uds_address=/tmp/ptp4l.uds --tx_timestamp_timeout=200
	--logSyncInterval=-3 --logMinDelayReqInterval=-3 --logAnnounceInterval=-2 --announceReceiptTimeout=3
	--summary_interval=0 --clock_servo=linreg --step_threshold=0.01 --delay_filter_length=16"
ptp_locked=4       # summary lines (one per second) in a row within the limit
ptp_limit_ns=2000000 # largest |offset| in each of those seconds

ptp_server() { # start the grandmaster in the background; its pid in /tmp/ptp4l.pid
	# shellcheck disable=SC2086
	ptp4l $ptp_opts --masterOnly=1 --priority1=1 >/tmp/ptp4l.log 2>&1 &
	echo $! >/tmp/ptp4l.pid
	log "ptp4l grandmaster started"
}

ptp_client() { # sync to the target; prints the error bound in us (max |offset| + path delay)
	# shellcheck disable=SC2086
	ptp4l $ptp_opts -s >/tmp/ptp4l.log 2>&1 &
	pid=$!
	i=0 bound=""
	while [ $i -lt 450 ]; do # 90 s
		sleep 0.2
		i=$((i + 1))
		# "ptp4l[t]: rms 2393 max 3150 freq +591 +/- 12 delay 1439 +/- 296" (ns), once a second
		bound=$(grep ': rms ' /tmp/ptp4l.log | tail -n $ptp_locked | awk -v n=$ptp_locked -v lim=$ptp_limit_ns '
			{ if ($5 > lim) bad = 1; if ($5 > mo) mo = $5; d = $(NF - 2) + $NF; if (d > md) md = d; c++ }
			END { if (c == n && !bad) printf "%d", (mo + md + 999) / 1000 }')
		[ -n "$bound" ] && break
		[ $((i % 50)) = 0 ] && log "ptp4l: $(grep ': rms ' /tmp/ptp4l.log | tail -n 1)"
	done
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	cp /tmp/ptp4l.log "$rundir/lab/initiator.ptp4l.log" 2>/dev/null
	[ -n "$bound" ] || { tail -n 5 /tmp/ptp4l.log >&2; return 1; }
	echo "$bound"
}

setup_nullb() { # null_blk device /dev/nullb0 through configfs, with the scenario's attributes
	cfg=/sys/kernel/config/nullb
	[ -d $cfg ] || fail "no $cfg: the kernel lacks CONFIG_BLK_DEV_NULL_BLK (built in, configfs mounted)"
	mkdir $cfg/nullb0 || fail "mkdir $cfg/nullb0 failed" # the dir name is the disk name
	echo 4096 >$cfg/nullb0/blocksize
	echo 4096 >$cfg/nullb0/size # MiB; not memory backed, costs nothing
	for kv in $nullb; do
		[ -e "$cfg/nullb0/${kv%%=*}" ] || fail "null_blk has no attribute '${kv%%=*}' (scenario nullb=\"$nullb\")"
		echo "${kv#*=}" >"$cfg/nullb0/${kv%%=*}" || fail "cannot set null_blk ${kv%%=*}=${kv#*=}"
	done
	echo 1 >$cfg/nullb0/power || fail "cannot power on the null_blk device"
	wait_for /dev/nullb0 10 || fail "/dev/nullb0 did not appear (is null_blk.nr_devices=0 on the command line?)"
	log "null_blk /dev/nullb0 up ${nullb:+($nullb)}"
}

setup_nvmet() { # export /dev/nullb0 as namespace 1 of $nqn on $target_ip:$port
	t=/sys/kernel/config/nvmet
	[ -d $t ] || fail "no $t: the kernel lacks CONFIG_NVME_TARGET(_TCP)"
	mkdir $t/subsystems/$nqn || fail "mkdir nvmet subsystem failed"
	echo 1 >$t/subsystems/$nqn/attr_allow_any_host
	mkdir $t/subsystems/$nqn/namespaces/1
	printf %s /dev/nullb0 >$t/subsystems/$nqn/namespaces/1/device_path
	echo 1 >$t/subsystems/$nqn/namespaces/1/enable || fail "cannot enable nvmet namespace 1 on /dev/nullb0"
	mkdir $t/ports/1
	echo $target_ip >$t/ports/1/addr_traddr
	echo tcp >$t/ports/1/addr_trtype
	echo $port >$t/ports/1/addr_trsvcid
	echo ipv4 >$t/ports/1/addr_adrfam
	ln -s $t/subsystems/$nqn $t/ports/1/subsystems/$nqn || fail "cannot link the subsystem to nvmet port 1 (is nvmet-tcp built in?)"
	log "nvmet: $nqn on tcp $target_ip:$port"
}

case "$mode" in
target | initiator) log "booted: $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs" ;;
esac
case "$mode" in
target)
	mkdir -p "$sync_dir"
	setup_link $target_ip "$target_netem"
	setup_nullb
	setup_nvmet
	if [ "$clock_sync" = ptp ]; then
		ptp_server
		wait_for "$sync_dir/clock.synced" 200 || fail "the initiator did not sync its clock within 200 s (see its console)"
		kill "$(cat /tmp/ptp4l.pid)" 2>/dev/null
		apply_netem "$target_netem"
		target_capture="$target_capture clock=tai clock_error_us=$(cat "$sync_dir/clock.synced")"
	fi
	log "recording"
	# shellcheck disable=SC2086
	capture role=target run="$run" runs=$share $target_capture -- sh $self target-wait "$run"
	rc=$?
	# 1 = events were lost (warned above): the run is still usable, the host reports it
	[ $rc -le 1 ] || fail "ntscope-capture (target) exited with $rc"
	echo ok >"$sync_dir/target.status"
	log "done"
	;;
target-wait)
	touch "$sync_dir/target.recording"
	# The local load (busy device) starts with the initiator's workload and is
	# bounded by its own runtime, so nothing has to be killed.
	(wait_for "$sync_dir/workload.start" 300 && target_busy) &
	busy=$!
	wait_for "$sync_dir/initiator.done" 600 || log "gave up waiting for the initiator"
	wait $busy 2>/dev/null
	exit 0
	;;
initiator)
	mkdir -p "$sync_dir"
	setup_link $initiator_ip "$initiator_netem"
	if [ "$clock_sync" = ptp ]; then
		bound=$(ptp_client) || fail "ptp4l did not lock onto the target's clock within 90 s (see lab/initiator.ptp4l.log)"
		log "clock synced to the target with ptp4l: error <= $bound us"
		echo "$bound" >"$sync_dir/clock.synced"
		apply_netem "$initiator_netem"
		initiator_capture="$initiator_capture clock=tai clock_error_us=$bound"
	elif [ -n "$clock_sync" ]; then
		fail "clock_sync='$clock_sync' is not ptp"
	fi
	wait_for "$sync_dir/target.recording" 120 || fail "the target did not start recording within 120 s (see target.console.log)"
	i=0
	# shellcheck disable=SC2086
	until nvme connect -t tcp -a $target_ip -s $port -n $nqn $connect; do
		i=$((i + 1))
		[ $i -lt 5 ] || fail "nvme connect -t tcp -a $target_ip -s $port -n $nqn $connect failed 5 times"
		sleep 1
	done
	wait_for /dev/nvme0n1 20 || fail "/dev/nvme0n1 did not appear after nvme connect"
	log "connected: $(cat /sys/class/nvme/nvme0/address 2>/dev/null) cntlid $(cat /sys/class/nvme/nvme0/cntlid) io queues $(ls -d /sys/block/nvme0n1/mq/* | wc -l)"
	# shellcheck disable=SC2086
	capture role=initiator run="$run" runs=$share $initiator_capture -- sh $self workload "$run"
	rc=$?
	touch "$sync_dir/initiator.done"
	nvme disconnect-all >/dev/null 2>&1
	[ $rc -le 1 ] || fail "ntscope-capture (initiator) exited with $rc"
	[ ! -e "$sync_dir/workload.failed" ] || fail "workload: $(cat "$sync_dir/workload.failed")"
	for f in "$rundir"/initiator/fio-*.json; do
		[ -s "$f" ] || fail "fio wrote no results ($f)"
	done
	echo ok >"$sync_dir/initiator.status"
	log "done"
	;;
workload)
	log "workload start"
	touch "$sync_dir/workload.start"
	workload || fail "workload failed (exit $?)"
	log "workload end"
	;;
esac
exit 0
