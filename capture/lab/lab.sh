#!/usr/bin/env bash
# Run one lab scenario in QEMU VMs (a target and an initiator; more when the scenario's
# `hosts` says so, see topology.sh) and bring out runs/RUN/.
#
#   lab.sh RUN SCENARIO [kernel=6.1|6.12] [flavor=auto|patched|stock] [accel=tcg|kvm]
#          [timeout=SECONDS] [force=1] [build=1] [smp=CPUS] [PARAM=VALUE ...]
#
# SCENARIO is a file capture/scenarios/SCENARIO.sh; PARAM=VALUE pairs that are not lab
# keys override the scenario's parameters (e.g. qd=8). flavor=auto takes the patched
# kernel when it is built, else the stock one. build=1 builds a missing kernel with
# kernel-patches/build_kernel.sh. --kernel X, --stock, --patched, --kvm are accepted too.
#
# In:  ${NTSCOPE_CACHE}/kernels/VERSION-FLAVOR/bzImage (from `just kernel`), the
#      initramfs (built/cached by build-initramfs.sh), the scenario.
# Out: RUNS/RUN/<host>/{trace.dat,host.json,fio-*.json} (hosts: initiator, target, or the
#      scenario's `hosts`), RUNS/RUN/truth.json,
#      RUNS/RUN/scenario.sh, RUNS/RUN/lab/{lab.json,*.console.log,*.qemu.log}.
#      Built in RUNS/.RUN.staging and renamed at the end; on failure the staging folder
#      stays for debugging and the consoles' tails are printed.
set -euo pipefail

die() { echo "lab: error: $*" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
capture_dir=$(dirname "$here")
cache=${NTSCOPE_CACHE:-$HOME/.cache/ntscope}
runs=${NTSCOPE_RUNS:-$(dirname "$capture_dir")/runs}
# truth.json names the ntscope version of the capture script the VMs run
ntscope_version=$("$capture_dir/ntscope-capture" version | cut -d' ' -f2)

[ $# -ge 2 ] || die "usage: lab.sh RUN SCENARIO [kernel=6.1|6.12] [flavor=auto|patched|stock] [accel=tcg|kvm] [timeout=S] [PARAM=VALUE ...]; scenarios: $(cd "$capture_dir/scenarios" && ls *.sh | sed 's/\.sh$//' | tr '\n' ' ')"
run=$1 scenario=$2
shift 2
case "$run" in *[!A-Za-z0-9._-]* | .*) die "run name '$run' may only use A-Z a-z 0-9 . _ - (not starting with .)" ;; esac
scenario_file="$capture_dir/scenarios/$scenario.sh"
[ -f "$scenario_file" ] || die "no scenario '$scenario' ($scenario_file); fix: pick one of: $(cd "$capture_dir/scenarios" && ls *.sh | sed 's/\.sh$//' | tr '\n' ' ')"

kernel=6.1 flavor=auto accel=tcg timeout=300 force=0 mem=768 smp=2 build=0 probes=""
params=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) [ $# -ge 2 ] || die "--kernel needs a version (6.1 or 6.12)"; kernel=$2; shift ;;
	--kernel=*) kernel=${1#--kernel=} ;;
	--stock) flavor=stock ;;
	--patched) flavor=patched ;;
	--kvm) accel=kvm ;;
	kernel=*) kernel=${1#kernel=} ;;
	flavor=*) flavor=${1#flavor=} ;;
	accel=*) accel=${1#accel=} ;;
	timeout=*) timeout=${1#timeout=} ;;
	force=*) force=${1#force=} ;;
	mem=*) mem=${1#mem=} ;;
	smp=*) smp=${1#smp=} ;;
	build=*) build=${1#build=} ;;
	probes=*) probes=${1#probes=} ;;
	[a-z_]*=*)
		k=${1%%=*}
		case "$k" in *[!a-z0-9_]*) die "parameter name '$k' must be lower-case snake_case" ;; esac
		params+=("$1") ;;
	*) die "unexpected argument '$1'; fix: lab keys are kernel= flavor= accel= timeout= force= mem= smp= build=, scenario parameters are NAME=VALUE" ;;
	esac
	shift
done
case "$kernel" in 6.1 | 6.12) ;; *) die "kernel '$kernel' is not 6.1 or 6.12" ;; esac
case "$accel" in tcg | kvm) ;; *) die "accel '$accel' is not tcg or kvm" ;; esac
case "$probes" in '' | auto | on | off) ;; *) die "probes '$probes' is not auto, on or off" ;; esac
[[ "$timeout" =~ ^[0-9]+$ ]] || die "timeout '$timeout' is not a number of seconds"
[[ "$smp" =~ ^[1-9][0-9]*$ ]] || die "smp '$smp' is not a number of CPUs"
if [ "$accel" = kvm ] && ! [ -w /dev/kvm ]; then die "accel=kvm but /dev/kvm is not usable; fix: use accel=tcg"; fi

kdir="$cache/kernels"
case "$flavor" in
auto) # patched when built, else stock when built, else build patched
	if [ -s "$kdir/$kernel-patched/bzImage" ]; then flavor=patched
	elif [ -s "$kdir/$kernel-stock/bzImage" ]; then flavor=stock
	else flavor=patched; fi ;;
patched | stock) ;;
*) die "flavor '$flavor' is not auto, patched or stock" ;;
esac
bzimage="$kdir/$kernel-$flavor/bzImage"
if [ ! -s "$bzimage" ]; then
	builder="$(dirname "$capture_dir")/kernel-patches/build_kernel.sh"
	[ "$build" = 1 ] && [ -f "$builder" ] ||
		die "no lab kernel $bzimage; fix: just kernel $kernel $flavor (~15 min on 2 cores), or add build=1"
	echo "lab: no $bzimage yet: building it (just kernel $kernel $flavor; ~15 min on 2 cores)" >&2
	bash "$builder" "$kernel" "$flavor" || die "kernel build failed (see above)"
fi
bash "$here/../../tools/ensure-packages.sh" qemu-system-x86 || die "qemu-system-x86_64 is missing; fix: apt-get install qemu-system-x86"

final="$runs/$run"
if [ -e "$final" ]; then
	[ "$force" = 1 ] || die "$final already exists; fix: pick another RUN or add force=1 to replace it"
fi
stage="$runs/.$run.staging"
rm -rf "$stage"
mkdir -p "$stage/$run/lab" "$stage/.sync" "$stage/.btf-cache"
# The captures' BTF answers for this kernel build (NTSCOPE_BTF_CACHE in guest.sh): kept between
# runs here, so that only the first run of a kernel reads its BTF (~15 s under TCG)
btf_cache="$cache/lab/btf-answers"
[ -d "$btf_cache" ] && cp -R "$btf_cache/." "$stage/.btf-cache/" 2>/dev/null

# scenario.sh of the run = parameter overrides + the scenario (self-contained, reproducible)
{
	echo "# lab scenario '$scenario' as run by lab.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "# parameter overrides (from the lab command line):"
	for p in ${params[@]+"${params[@]}"}; do printf '%s=%q\n' "${p%%=*}" "${p#*=}"; done
	# lab key probes=: both VMs record with ntscope-capture probes=VALUE (guest.sh)
	[ -z "$probes" ] || printf 'lab_probes=%q\n' "$probes"
	echo "# --- capture/scenarios/$scenario.sh"
	cat "$scenario_file"
} >"$stage/$run/scenario.sh"

# truth.json: the scenario's truth() with its parameters, plus the lab facts. Sourcing
# a scenario only defines variables and functions.
truth=$( cd "$stage" && bash -c 'set -e; runtime=3; . "$1"; truth' _ "$stage/$run/scenario.sh" ) ||
	die "scenario $scenario: truth() failed"
# main_trace=0: the scenario records elsewhere than <role>/trace.dat (e.g. overhead: one host
# folder per repetition), so the VMs' <role>/trace.dat is not required.
main_trace=$( cd "$stage" && bash -c 'runtime=3; . "$1"; echo "${main_trace:-1}"' _ "$stage/$run/scenario.sh" )
# The VMs (topology.sh): hosts="NAME:ROLE ..." and per-role CPUs (target_smp=, initiator_smp=)
# from the scenario; every initiator gets a point-to-point link to every target.
# shellcheck source=topology.sh
. "$here/topology.sh"
eval "$( cd "$stage" && bash -c 'runtime=3; . "$1"; printf "hosts=%q paths=%q target_smp=%q initiator_smp=%q\n" "${hosts:-}" "${paths:-}" "${target_smp:-}" "${initiator_smp:-}"' _ "$stage/$run/scenario.sh" )"
why=$(topo_check) || die "scenario $scenario: $why"
for v in "$target_smp" "$initiator_smp"; do
	[ -z "$v" ] || [[ "$v" =~ ^[1-9][0-9]*$ ]] || die "scenario $scenario: target_smp/initiator_smp '$v' is not a number of CPUs"
done
vm_smp() { # vm_smp NAME: CPUs of that VM
	case "$(topo_role "$1")" in target) echo "${target_smp:-$smp}" ;; *) echo "${initiator_smp:-$smp}" ;; esac
}
host_names=$(topo_names)
nlinks=$(topo_links | wc -l)
initramfs=$(bash "$here/build-initramfs.sh") || die "initramfs build failed (see above)"
kernel_release=$(sed -n 's/^kernelrelease=//p' "$kdir/$kernel-$flavor/build-info.txt" 2>/dev/null || true)

# Free UDP ports on 127.0.0.1 for the dgram links: link k uses base+2k (initiator end) and
# base+2k+1 (target end).
pick_port() {
	local p q busy
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 20000)) busy=0
		for q in $(seq "$p" $((p + 2 * nlinks - 1))); do
			if ss -Huln "sport = :$q" 2>/dev/null | grep -q .; then busy=1; break; fi
		done
		[ $busy = 1 ] || { echo $p; return; }
	done
	die "no $((2 * nlinks)) free UDP ports found on 127.0.0.1"
}
port=$(pick_port)

accel_opt="tcg,thread=multi" cpu=max
[ "$accel" = kvm ] && accel_opt=kvm cpu=host
start_vm() { # start_vm NAME EXTRA_CMDLINE: one NIC per link of this host (topology.sh)
	local name=$1 role k ini tgt lp rp end nets=()
	role=$(topo_role "$name")
	while read -r k ini tgt _; do
		if [ "$ini" = "$name" ]; then lp=$((port + 2 * k)) rp=$((port + 2 * k + 1)) end=1
		elif [ "$tgt" = "$name" ]; then lp=$((port + 2 * k + 1)) rp=$((port + 2 * k)) end=2
		else continue; fi
		nets+=(-netdev "dgram,id=link$k,local.type=inet,local.host=127.0.0.1,local.port=$lp,remote.type=inet,remote.host=127.0.0.1,remote.port=$rp"
			-device "virtio-net-pci,netdev=link$k,mac=$(topo_mac "$k" $end)")
	done < <(topo_links)
	qemu-system-x86_64 -name "ntscope-$name" -machine pc -accel "$accel_opt" -cpu "$cpu" \
		-smp "$(vm_smp "$name")" -m "$mem" -nodefaults -display none -no-reboot \
		-kernel "$bzimage" -initrd "$initramfs" \
		-append "console=ttyS0 panic=-1 loglevel=4 no_timer_check ntscope.role=$role ntscope.host=$name ntscope.run=$run ntscope.epoch=$(date +%s) $2" \
		-serial "file:$stage/$run/lab/$name.console.log" \
		"${nets[@]}" \
		-virtfs "local,path=$stage,mount_tag=share,security_model=none,id=share" \
		>"$stage/$run/lab/$name.qemu.log" 2>&1 &
	echo $!
}

console_tails() {
	local r
	for r in $host_names; do
		echo "---- $r console (last 25 lines of $stage/$run/lab/$r.console.log):" >&2
		tail -n 25 "$stage/$run/lab/$r.console.log" >&2 2>/dev/null || true
		if [ -s "$stage/$run/lab/$r.qemu.log" ]; then
			echo "---- $r qemu:" >&2
			tail -n 5 "$stage/$run/lab/$r.qemu.log" >&2
		fi
	done
}

echo "lab: run=$run scenario=$scenario kernel=$kernel-$flavor ($kernel_release) accel=$accel ${params[*]+params: ${params[*]}}" >&2
t0=$(date +%s.%N)
# null_blk is built in: no default device; the target makes /dev/nullb0 via configfs
pids=""
# native multipath only with several paths per pair (topology.sh): one path keeps a
# /dev/nvmeXnY per controller, as the one-path scenarios and their fixtures have it
multipath=0
[ "$(topo_paths)" -le 1 ] || multipath=1
for h in $host_names; do pids="$pids $(start_vm "$h" "null_blk.nr_devices=0 nvme_core.multipath=$multipath")"; done
kill_vms() { for p in $pids; do kill "$p" 2>/dev/null || true; done; sleep 1; for p in $pids; do kill -9 "$p" 2>/dev/null || true; done; }
trap 'kill_vms; exit 130' INT TERM
any_alive() { local p; for p in $pids; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }

deadline=$(( $(date +%s) + timeout ))
while any_alive; do
	if [ "$(date +%s)" -ge "$deadline" ]; then
		kill_vms
		console_tails
		die "the VMs did not finish within timeout=$timeout s (killed); staging kept in $stage"
	fi
	# one VM failed: the others would wait for it until the timeout, stop now
	for r in $host_names; do
		if grep -q '^fail' "$stage/.sync/$r.status" 2>/dev/null; then
			sleep 2; kill_vms; console_tails
			die "$r VM failed: $(cat "$stage/.sync/$r.status"); staging kept in $stage"
		fi
	done
	sleep 0.5
done
trap - INT TERM
t1=$(date +%s.%N)
for r in $host_names; do
	st=$(cat "$stage/.sync/$r.status" 2>/dev/null || echo "no status (the VM stopped before the end)")
	if [ "$st" != ok ]; then
		console_tails
		[ "$accel" = kvm ] && echo "lab: hint: accel=kvm fails where nested KVM does not work (assertions in the qemu log above); retry with accel=tcg" >&2
		die "$r VM: $st; staging kept in $stage"
	fi
	[ "$main_trace" = 0 ] || [ -s "$stage/$run/$r/trace.dat" ] || { console_tails; die "$r VM wrote no trace.dat"; }
done

# Boot time: kernel timestamp of the guest's first ntscope-lab line.
boot_s() { sed -n 's/.*ntscope-lab\[[a-z-]* \([0-9.]*\)s\].*/\1/p' "$stage/$run/lab/$1.console.log" | head -n 1; }
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')
# The topology as JSON for truth.json (each host's role, addresses, subsystem / connections)
topo_json=$(
	for h in $host_names; do
		role=$(topo_role "$h")
		if [ "$role" = target ]; then
			printf '%s\ttarget\t%s\t%s\t%s\n' "$h" "$(topo_nqn "$h")" "$(topo_port "$h")" "$(vm_smp "$h")"
		else
			printf '%s\tinitiator\t%s\t\t%s\n' "$h" "$(topo_hostnqn "$h" | cut -d' ' -f1)" "$(vm_smp "$h")"
		fi
	done
	topo_links | while read -r k ini tgt path; do printf 'link\t%s\t%s\t%s\t%s\t%s\t%s\n' "$ini" "$tgt" "$(topo_addr "$k" 1)" "$(topo_addr "$k" 2)" "$(topo_port "$tgt")" "$path"; done
)
first_lines=$(for h in $host_names; do printf '%s\t%s\n' "$h" "$(boot_s "$h")"; done)
python3 - "$stage/$run" "$truth" "$topo_json" "$first_lines" ${params[@]+"${params[@]}"} <<EOF || die "could not write truth.json / lab.json"
import json, os, sys
d, truth, topo, first = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
t = json.loads(truth)
hosts = {}
for line in topo.splitlines():
    f = line.split("\t")
    if f[0] == "link":
        ini, tgt, ini_addr, tgt_addr, port, path = f[1:]
        hosts[ini].setdefault("connects_to", []).append({"target": tgt, "address": tgt_addr, "port": int(port),
                                                          "nqn": hosts[tgt]["nqn"], "from_address": ini_addr,
                                                          "path": int(path)})
        hosts[tgt].setdefault("addresses", []).append(tgt_addr)
    elif f[1] == "target":
        hosts[f[0]] = {"role": "target", "nqn": f[2], "port": int(f[3]), "smp": int(f[4])}
    else:
        hosts[f[0]] = {"role": "initiator", "hostnqn": f[2], "smp": int(f[4])}
lab = {"scenario": "$scenario", "run": "$run", "kernel": "$kernel", "flavor": "$flavor", "probes": "$probes" or None,
       "kernel_release": "$kernel_release", "accel": "$accel", "smp": $smp, "mem_mib": $mem,
       "params": dict(p.split("=", 1) for p in sys.argv[5:]),
       "initramfs": os.path.basename("$initramfs"), "wall_s": round($wall, 1), "multipath": $multipath == 1,
       "hosts": hosts,
       "first_guest_line_s": dict(l.split("\t", 1) for l in first.splitlines())}
# each host's role (and how it is wired), unless the scenario's truth() says more
t.setdefault("hosts", {h: {"role": v["role"]} for h, v in hosts.items()})
t["lab"] = lab
t["ntscope_version"] = "$ntscope_version"
for name, obj in (("truth.json", t), ("lab/lab.json", lab)):
    p = os.path.join(d, name)
    with open(p + ".tmp", "w") as f:
        json.dump(obj, f, indent=2); f.write("\n")
    os.rename(p + ".tmp", p)
EOF

rm -rf "$final"
mkdir -p "$btf_cache" && cp -R "$stage/.btf-cache/." "$btf_cache/" 2>/dev/null
mv "$stage/$run" "$final"
rm -rf "$stage"
echo "lab: $final ready in ${wall%.*} s: $(cd "$final" && ls -d */trace.dat 2>/dev/null | tr '\n' ' ')" >&2
