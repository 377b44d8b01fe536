#!/bin/sh
# This VM's part of a lab run (busybox sh, inside the guest). The VM is host $NTSCOPE_HOST
# (from the kernel command line; default: its role) of the scenario's hosts (topology.sh).
#   guest.sh target|initiator RUN     set up, then record with ntscope-capture
#   guest.sh target-wait RUN          (wrapped by the target's capture) load + wait
#   guest.sh workload RUN             (wrapped by the initiator's capture) the fio workload
#   guest.sh call-initiator|call-target RUN FUNCTION [ARGS]   call a scenario function
#                                     (scenarios that record several times, e.g. overhead)
# In:  /share/RUN/scenario.sh (parameters + scenario, written by lab.sh on the host)
# Out: /share/RUN/<host>/{trace.dat,host.json,...}; /share/.sync/<host>.status ("ok" or
#      "fail: why"); markers in /share/.sync that order the VMs (<target>.recording,
#      workload.start, <initiator>.done).
set -u
mode=$1 run=$2
share=/share
sync_dir=$share/.sync
rundir=$share/$run
self=/opt/ntscope/capture/lab/guest.sh

host=${NTSCOPE_HOST:-}
# shellcheck source=topology.sh
. /opt/ntscope/capture/lab/topology.sh
# the two-VM lab's names (link 0); scenarios and chrony use them
target_ip=$(topo_addr 0 2)
initiator_ip=$(topo_addr 0 1)
nqn=nqn.2026-11.io.ntscope:lab
port=4420

# The capture's BTF answers (its probes' offsets) kept on the share for this kernel build:
# every run boots the same kernel, and reading the BTF takes ~15 s under TCG
export NTSCOPE_BTF_CACHE=/share/.btf-cache
mkdir -p "$NTSCOPE_BTF_CACHE" 2>/dev/null
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
	target | initiator) echo "fail: $*" >"$sync_dir/$host.status" ;;
	workload) echo "$*" >"$sync_dir/$host.workload.failed" ;;
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
connect=""        # extra `nvme connect` arguments (e.g. "-i 1", "-g -G": digests)
target_netem=""   # tc netem arguments on the target's egress (eth0)
initiator_netem="" # tc netem arguments on the initiator's egress (eth0)
clock_sync=""     # "chrony": sync the initiator's clock to the target's, record on clock=tai
runtime=3         # seconds per fio job
initiator_capture="" # extra `just capture` keys on the initiator (e.g. "qid=1 clock=tai")
target_capture=""    # extra `just capture` keys on the target
target_busy() { :; } # runs on the target while it records (e.g. a local fio)
target_setup() { :; }    # the target, once it exports its namespace, before recording
initiator_preconnect() { :; } # the initiator, before it connects (e.g. nvme_core's io_timeout)
initiator_setup() { :; } # the initiator, once connected, before recording (e.g. mkfs, mount)
initiator_cleanup() { :; } # the initiator, after recording, before disconnecting (e.g. umount)
workload() { fail "scenario defines no workload()"; }
# How each VM records once set up (a scenario may replace them, e.g. to record several times):
# the target records until the initiator is done, the initiator records its workload.
target_main() {
	# shellcheck disable=SC2086
	capture role=target host="$host" run="$run" runs=$share $target_capture -- sh $self target-wait "$run"
}
initiator_main() {
	# shellcheck disable=SC2086
	capture role=initiator host="$host" run="$run" runs=$share $initiator_capture -- sh $self workload "$run"
}
# The capture's own checks with this VM's real tracefs, saved as <role>/preflight.txt
# (check_run.py reads it): a patched or stock lab kernel must pass them.
preflight() { # preflight EXTRA_CAPTURE_KEYS
	mkdir -p "$rundir/$host"
	# shellcheck disable=SC2086
	capture role=$role host="$host" run="$run" runs=$share $1 check=1 >"$rundir/$host/preflight.txt" 2>&1 ||
		fail "ntscope-capture check=1 failed: $(grep -m 3 'error' "$rundir/$host/preflight.txt" | tr '\n' ' ')"
	log "preflight: $(tail -n 1 "$rundir/$host/preflight.txt")"
}

# The capture's probes must all be gone once it ended: what is left of its groups in
# kprobe_events goes to <host>/probes-left.txt (check_run.py wants it empty).
probes_left() {
	grep ':ntscope_' /sys/kernel/tracing/kprobe_events >"$rundir/$host/probes-left.txt" 2>/dev/null
	return 0
}

# fio on the NVMe/TCP device (initiator) or the backing device (target). A job's own
# --filename= adds a file to this global one, it does not replace it: a scenario whose jobs
# name their files (a file system) sets fio_device= (empty) to leave the device out.
# run_fio NAME [fio options...]: JSON results in <host>/fio-NAME.json
run_fio() {
	name=$1; shift
	# no SysV IPC in the kernel (no /proc/sysvipc): fio's segment via lab/shm_shim
	shim=""
	[ -d /proc/sysvipc ] || shim=/usr/lib/ntscope/shm_shim.so
	# global options first; "$@" may add more jobs (--name=other ...) that inherit them
	# shellcheck disable=SC2086
	LD_PRELOAD=$shim fio ${fio_device-"--filename=$dev"} --direct=1 --ioengine=libaio --time_based \
		--runtime="$runtime" --size=256M --eta=never --output-format=json \
		--output="$rundir/$host/fio-$name.json" --name="$name" "$@"
}

[ -r "$rundir/scenario.sh" ] || fail "no $rundir/scenario.sh in the share"
# shellcheck disable=SC1090
. "$rundir/scenario.sh"

case "$mode" in
target | target-wait | call-target) role=target; dev=/dev/nullb0 ;;
initiator | workload | call-initiator) role=initiator; dev=/dev/nvme0n1 ;;
*) fail "unknown mode '$mode'" ;;
esac
[ -n "$host" ] || host=$role
why=$(topo_check) || fail "$why"
[ "$(topo_role "$host")" = "$role" ] || fail "host '$host' is not a $role in hosts=\"$(topo_hosts)\""
# every block device this initiator reaches, one per target it connects to (nvme0n1 ...).
# Controllers are numbered in link order; with several paths (multipath) a target's
# namespace is one device named after its first controller (nvme0n1: paths nvme0c0n1,
# nvme0c1n1)
devs=""
n=0
for p in $(topo_links | awk -v h="$host" '$2 == h { print $4 }'); do
	[ "$p" != 0 ] || devs="$devs /dev/nvme${n}n1"
	n=$((n + 1))
done
devs=${devs# }
# The digests the connections use (nvme connect -g / -G): no kernel shows them in sysfs, so
# both hosts' captures are told (host.json nvme_tcp_digest).
lab_digest=none
case " $connect " in *" -g "* | *" --hdr_digest "*) lab_digest=header ;; esac
case " $connect " in *" -G "* | *" --data_digest "*) lab_digest=${lab_digest#none},data; lab_digest=${lab_digest#,} ;; esac
initiator_capture="digest=$lab_digest $initiator_capture"
target_capture="digest=$lab_digest $target_capture"
# lab key probes=: both captures record with it (dynamic probes instead of, or beside, the
# patched events: capture/README.md)
if [ -n "${lab_probes:-}" ]; then
	initiator_capture="probes=$lab_probes $initiator_capture"
	target_capture="probes=$lab_probes $target_capture"
fi

# iproute2's ip and tc by full path: busybox sh prefers its own applets of those names
ip() { /usr/sbin/ip "$@"; }
tc() { /usr/sbin/tc "$@"; }

ifname_of() { # ifname_of MAC: the interface with that address
	for d in /sys/class/net/*; do
		[ "$(cat "$d/address" 2>/dev/null)" = "$1" ] && { echo "${d##*/}"; return 0; }
	done
	return 1
}

setup_links() { # setup_links NETEM: every link of this host (topology.sh), netem on each egress
	ip link set lo up
	end=2
	[ "$role" = initiator ] && end=1
	nl=0
	for k in $(topo_links | awk -v h="$host" '$2 == h || $3 == h { print $1 }'); do
		ifc=$(ifname_of "$(topo_mac "$k" $end)") || fail "no interface with MAC $(topo_mac "$k" $end) (link $k of $host)"
		ip link set "$ifc" up || fail "ip link set $ifc up failed"
		ip addr add "$(topo_addr "$k" $end)/24" dev "$ifc" || fail "ip addr add $(topo_addr "$k" $end) dev $ifc failed"
		apply_netem "$1" "$ifc"
		log "link $k: $ifc $(topo_addr "$k" $end)"
		nl=$((nl + 1))
	done
	[ $nl -gt 0 ] || fail "host $host has no link (hosts=\"$(topo_hosts)\")"
}

apply_netem() { # apply_netem NETEM IFACE: tc netem on IFACE's egress (nothing when empty)
	[ -n "$1" ] || return 0
	if [ -z "$clock_sync" ]; then
		# shellcheck disable=SC2086
		tc qdisc add dev "$2" root netem $1 || fail "tc qdisc add dev $2 root netem $1 failed"
		log "netem on $2 egress: $1"
		return
	fi
	# With a clock sync only the NVMe/TCP traffic goes through netem: NTP assumes a
	# symmetric path and would shift the clock by half of an injected one-way delay.
	# shellcheck disable=SC2086
	tc qdisc add dev "$2" root handle 1: prio bands 3 priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 &&
		tc qdisc add dev "$2" parent 1:3 handle 30: netem $1 &&
		tc filter add dev "$2" parent 1: protocol ip u32 match ip sport $port 0xffff flowid 1:3 &&
		tc filter add dev "$2" parent 1: protocol ip u32 match ip dport $port 0xffff flowid 1:3 ||
		fail "tc netem on $2 for port $port failed"
	log "netem on $2 egress, NVMe/TCP port $port only: $1"
}

# Clock sync (clock_sync=chrony): chronyd on both VMs, the target serving its own clock,
# the initiator polling it 64 times a second (median of 8) and steering CLOCK_REALTIME,
# hence CLOCK_TAI (trace clock tai), onto it; it keeps tracking while both record. The
# error bound is chrony's own: |offset| + root delay / 2 + root dispersion.
chrony_start() { # chrony_start server|client
	mkdir -p /run/chrony /var/lib/chrony
	if [ "$1" = server ]; then
		printf 'local stratum 8\nallow %s/24\n' "$target_ip"
	else
		# step only while locking on (first 3 updates), slew afterwards: no jumps in the trace
		printf 'server %s iburst minpoll -6 maxpoll -6 filter 8\nmakestep 0.001 3\n' "$target_ip"
	fi >/tmp/chrony.conf
	echo "pidfile /tmp/chronyd.pid" >>/tmp/chrony.conf
	chronyd -u root -f /tmp/chrony.conf -l /tmp/chronyd.log || fail "chronyd did not start (see /tmp/chronyd.log)"
	log "chronyd started as $1"
}

chrony_bound_us() { # error bound in us while the client tracks the server, else nothing
	chronyc -n tracking 2>/dev/null | awk '
		/^Reference ID/ { ref = $4 } /^Leap status/ { leap = $4 }
		/^System time/ { off = $4 } /^Root delay/ { rd = $4 } /^Root dispersion/ { disp = $4 }
		END { if (leap == "Normal" && ref != "00000000" && off < 0.0002)
		          printf "%d", (off + rd / 2 + disp) * 1e6 + 1 }'
}

chrony_client_sync() { # prints the bound once 3 checks a second apart are in sync (60 s max)
	i=0 good=0 bound=""
	while [ $i -lt 60 ] && [ $good -lt 3 ]; do
		sleep 1
		i=$((i + 1))
		bound=$(chrony_bound_us)
		if [ -n "$bound" ]; then good=$((good + 1)); else good=0; fi
	done
	chronyc -n tracking >"$rundir/lab/initiator.chrony-tracking.txt" 2>&1
	[ $good -ge 3 ] || { chronyc -n tracking >&2; return 1; }
	echo "$bound"
}

setup_nullb() { # setup_nullb [NAME]: null_blk device /dev/NAME (default nullb0, the one the
	# target exports) through configfs, with the scenario's attributes
	nb=${1:-nullb0}
	cfg=/sys/kernel/config/nullb
	[ -d $cfg ] || fail "no $cfg: the kernel lacks CONFIG_BLK_DEV_NULL_BLK (built in, configfs mounted)"
	mkdir $cfg/$nb || fail "mkdir $cfg/$nb failed" # the dir name is the disk name
	echo 4096 >$cfg/$nb/blocksize
	echo 4096 >$cfg/$nb/size # MiB; not memory backed, costs nothing
	for kv in $nullb; do
		[ -e "$cfg/$nb/${kv%%=*}" ] || fail "null_blk has no attribute '${kv%%=*}' (scenario nullb=\"$nullb\")"
		echo "${kv#*=}" >"$cfg/$nb/${kv%%=*}" || fail "cannot set null_blk ${kv%%=*}=${kv#*=}"
	done
	echo 1 >$cfg/$nb/power || fail "cannot power on the null_blk device $nb"
	wait_for /dev/$nb 10 || fail "/dev/$nb did not appear (is null_blk.nr_devices=0 on the command line?)"
	log "null_blk /dev/$nb up ${nullb:+($nullb)}"
}

setup_nvmet() { # export /dev/nullb0 as namespace 1 of this target's NQN on each of its link addresses
	t=/sys/kernel/config/nvmet
	[ -d $t ] || fail "no $t: the kernel lacks CONFIG_NVME_TARGET(_TCP)"
	mkdir $t/subsystems/$nqn || fail "mkdir nvmet subsystem failed"
	echo 1 >$t/subsystems/$nqn/attr_allow_any_host
	mkdir $t/subsystems/$nqn/namespaces/1
	printf %s /dev/nullb0 >$t/subsystems/$nqn/namespaces/1/device_path
	echo 1 >$t/subsystems/$nqn/namespaces/1/enable || fail "cannot enable nvmet namespace 1 on /dev/nullb0"
	pn=0
	for k in $(topo_links | awk -v h="$host" '$3 == h { print $1 }'); do
		pn=$((pn + 1))
		mkdir $t/ports/$pn
		echo "$(topo_addr "$k" 2)" >$t/ports/$pn/addr_traddr
		echo tcp >$t/ports/$pn/addr_trtype
		echo $port >$t/ports/$pn/addr_trsvcid
		echo ipv4 >$t/ports/$pn/addr_adrfam
		ln -s $t/subsystems/$nqn $t/ports/$pn/subsystems/$nqn || fail "cannot link the subsystem to nvmet port $pn (is nvmet-tcp built in?)"
		log "nvmet: $nqn on tcp $(topo_addr "$k" 2):$port"
	done
}

add_namespace() { # add_namespace NSID DEVICE: another namespace of this target's subsystem on
	# DEVICE (nvmet opens its devices shared: two namespaces may sit on one drive)
	ns=/sys/kernel/config/nvmet/subsystems/$nqn/namespaces/$1
	mkdir "$ns" || return 1
	printf %s "$2" >"$ns/device_path"
	echo 1 >"$ns/enable"
}

cgroup_root=/sys/fs/cgroup
cgroups_setup() { # cgroups_setup NAME...: cgroup v2 mounted, the io controller on below the root,
	# and a cgroup of each NAME under it
	mkdir -p $cgroup_root
	grep -q " $cgroup_root cgroup2 " /proc/mounts || mount -t cgroup2 none $cgroup_root || return 1
	echo +io >$cgroup_root/cgroup.subtree_control || return 1
	for c in "$@"; do mkdir -p "$cgroup_root/$c" || return 1; done
}
in_cgroup() { # in_cgroup NAME COMMAND...: runs COMMAND in cgroup NAME (a child of this shell
	# joins it first: sh -c's parent is the subshell, which the command's processes inherit)
	c=$1; shift
	( sh -c "echo \$PPID >$cgroup_root/$c/cgroup.procs" && "$@" )
}

connect_all() { # nvme connect to every target this initiator is linked to, in link order
	set -- $(topo_hostnqn "$host")
	# the first initiator keeps the initramfs' host NQN; others get their own
	printf '%s\n' "$1" >/etc/nvme/hostnqn
	printf '%s\n' "$2" >/etc/nvme/hostid
	n=0 head=0
	for k in $(topo_links | awk -v h="$host" '$2 == h { print $1 }'); do
		tgt=$(topo_links | awk -v k="$k" '$1 == k { print $3 }')
		path=$(topo_links | awk -v k="$k" '$1 == k { print $4 }')
		[ "$path" != 0 ] || head=$n
		a=$(topo_addr "$k" 2) p=$(topo_port "$tgt") q=$(topo_nqn "$tgt")
		i=0
		# shellcheck disable=SC2086
		until nvme connect -t tcp -a "$a" -s "$p" -n "$q" $connect; do
			i=$((i + 1))
			[ $i -lt 5 ] || fail "nvme connect -t tcp -a $a -s $p -n $q $connect failed 5 times"
			sleep 1
		done
		wait_for /dev/nvme${head}n1 20 || fail "/dev/nvme${head}n1 did not appear after nvme connect to $tgt ($a)"
		log "connected to $tgt (path $path): nvme$n $(cat /sys/class/nvme/nvme$n/address 2>/dev/null) cntlid $(cat /sys/class/nvme/nvme$n/cntlid) io queues $(ls -d /sys/block/nvme${head}n1/mq/* 2>/dev/null | wc -l)"
		n=$((n + 1))
	done
}

targets_ready() { # every target this initiator is linked to records
	for tgt in $(topo_links | awk -v h="$host" '$2 == h { print $3 }'); do
		wait_for "$sync_dir/$tgt.recording" 120 || fail "target $tgt did not start recording within 120 s (see $tgt.console.log)"
	done
}

case "$mode" in
target | initiator) log "booted: $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs" ;;
esac
case "$mode" in
target)
	mkdir -p "$sync_dir"
	nqn=$(topo_nqn "$host") port=$(topo_port "$host")
	# "|| fail": a step that is missing or returns non-zero (busybox sh has no set -e here)
	# must stop the run, not leave a target that records without a device
	setup_links "$target_netem" || fail "setup_links failed (exit $?)"
	setup_nullb || fail "setup_nullb failed (exit $?)"
	setup_nvmet || fail "setup_nvmet failed (exit $?)"
	target_setup || fail "the scenario's target_setup failed (exit $?)"
	if [ "$clock_sync" = chrony ]; then
		[ "$(topo_names | wc -l)" = 2 ] || fail "clock_sync=chrony needs the two-VM lab (hosts=\"$(topo_hosts)\")"
		chrony_start server
		wait_for "$sync_dir/clock.synced" 120 || fail "the initiator did not sync its clock within 120 s (see its console)"
		target_capture="$target_capture clock=tai clock_error_us=$(cat "$sync_dir/clock.synced")"
	fi
	preflight "$target_capture"
	log "recording"
	target_main
	rc=$?
	probes_left
	# 1 = events were lost (warned above): the run is still usable, the host reports it
	[ $rc -le 1 ] || fail "ntscope-capture (target) exited with $rc"
	echo ok >"$sync_dir/$host.status"
	log "done"
	;;
target-wait)
	touch "$sync_dir/$host.recording"
	# The local load (busy device) starts with the (first) initiator's workload and is
	# bounded by its own runtime, so nothing has to be killed.
	(wait_for "$sync_dir/workload.start" 300 && target_busy) &
	busy=$!
	for ini in $(topo_links | awk -v h="$host" '$3 == h { print $2 }'); do
		wait_for "$sync_dir/$ini.done" 600 || log "gave up waiting for initiator $ini"
	done
	wait $busy 2>/dev/null
	exit 0
	;;
initiator)
	mkdir -p "$sync_dir"
	setup_links "$initiator_netem" || fail "setup_links failed (exit $?)"
	if [ "$clock_sync" = chrony ]; then
		chrony_start client
		bound=$(chrony_client_sync) || fail "chrony did not sync to the target's clock within 60 s"
		log "clock synced to the target with chrony: error <= $bound us"
		echo "$bound" >"$sync_dir/clock.synced"
		initiator_capture="$initiator_capture clock=tai clock_error_us=$bound"
	elif [ -n "$clock_sync" ]; then
		fail "clock_sync='$clock_sync' is not chrony"
	fi
	targets_ready
	initiator_preconnect || fail "the scenario's initiator_preconnect failed (exit $?)"
	connect_all
	initiator_setup || fail "the scenario's initiator_setup failed (exit $?)"
	preflight "$initiator_capture"
	initiator_main
	rc=$?
	probes_left
	touch "$sync_dir/$host.done"
	initiator_cleanup
	nvme disconnect-all >/dev/null 2>&1
	[ $rc -le 1 ] || fail "ntscope-capture (initiator) exited with $rc"
	[ ! -e "$sync_dir/$host.workload.failed" ] || fail "workload: $(cat "$sync_dir/$host.workload.failed")"
	for f in "$rundir/$host"/fio-*.json; do
		[ -s "$f" ] || fail "fio wrote no results ($f)"
	done
	echo ok >"$sync_dir/$host.status"
	log "done"
	;;
call-initiator | call-target)
	shift 2
	"$@" || fail "$1 failed (exit $?)"
	;;
workload)
	log "workload start"
	touch "$sync_dir/workload.start"
	workload || fail "workload failed (exit $?)"
	log "workload end"
	;;
esac
exit 0
