#!/usr/bin/env bash
# Tracing overhead in the lab, side by side: fio IOPS, latency and both VMs' CPU with no
# tracing, a full capture, a sampled capture and a sampled capture without block events,
# interleaved within one boot per kernel flavor (scenario `overhead`), then the table.
#   overhead.sh [PREFIX] [kernel=6.1] [flavors="stock patched"] [reps=3] [runtime=8] [sample=8] [qd=8]
#               [micro_reps=8] [modes="off full sampled sampled-noblock"] [probe_modes="probes ..."]
# probe_modes: the capture's probes (probes=on; modes probes, probes-sampled,
# probes-sampled-noblock), added to the stock flavor's modes, and its microbenchmark measures a
# probe hit's cost beside an event's (default "probes probes-sampled probes-sampled-noblock"
# when the stock flavor is measured; probe_modes= none: not)
# Out: runs/PREFIX-<kernel>-<flavor>/ (one lab run each; traces in <role>-r<rep>-<mode>/) and
#      runs/PREFIX-<kernel>.md (overhead_report.py's Markdown, also printed).
# TCG is slow and the machine is shared: read the medians and the ranges, not one run.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runs=${NTSCOPE_RUNS:-$(dirname "$(dirname "$here")")/runs}
die() { echo "overhead: error: $*" >&2; exit 2; }
prefix=overhead kernel=6.1 flavors="stock patched" reps=3 runtime=8 sample=8 qd=8 micro_reps=8
modes="off full sampled sampled-noblock" probe_modes="probes probes-sampled probes-sampled-noblock"
if [ $# -gt 0 ] && [[ "$1" != *=* ]]; then prefix=$1; shift; fi
case "$prefix" in *[!A-Za-z0-9._-]* | .*) die "PREFIX '$prefix' may only use A-Z a-z 0-9 . _ -" ;; esac
for kv in "$@"; do
	case "$kv" in
	kernel=* | flavors=* | reps=* | runtime=* | sample=* | qd=* | micro_reps=* | modes=* | probe_modes=*) declare "${kv%%=*}=${kv#*=}" ;;
	*) die "unknown argument '$kv'; fix: keys are kernel= flavors= reps= runtime= sample= qd= micro_reps= modes= probe_modes=" ;;
	esac
done
for n in reps runtime sample qd micro_reps; do [[ "${!n}" =~ ^[1-9][0-9]*$ ]] || die "$n '${!n}' is not a positive whole number"; done
for fl in $flavors; do case "$fl" in stock | patched) ;; *) die "flavor '$fl' is not stock or patched" ;; esac; done
[ "$probe_modes" = none ] && probe_modes=""
for m in $modes $probe_modes; do
	case "$m" in off | full | full-noacks | full-notenants | sampled | sampled-noblock | probes | probes-sampled | probes-sampled-noblock) ;;
	*) die "mode '$m' is not off, full, full-noacks, full-notenants, sampled, sampled-noblock, probes, probes-sampled or probes-sampled-noblock" ;; esac
done

# this host's time for the guests' calibration (same busybox, same work): the fastest of 5
calib_mb=32
host_md5=""
for _ in 1 2 3 4 5; do
	t0=$(date +%s.%N)
	/bin/busybox dd if=/dev/zero bs=1M count=$calib_mb 2>/dev/null | /bin/busybox md5sum >/dev/null
	t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.3f", b - a}')
	host_md5=$(awk -v a="$host_md5" -v b="$t" 'BEGIN {print (a == "" || b < a) ? b : a}')
done
echo "overhead: this host: busybox md5sum of $calib_mb MiB in $host_md5 s (fastest of 5)" >&2

# per repetition: each mode x (runtime + capture start/stop, slow under TCG on a busy host), plus
# boot and the microbenchmark
dirs=()
for fl in $flavors; do
	run="$prefix-$kernel-$fl"
	# the probes on the stock kernel (a patched one has the tracepoints they stand for)
	fl_modes=$modes probe_micro=0
	[ "$fl" = stock ] && [ -n "$probe_modes" ] && fl_modes="$modes $probe_modes" probe_micro=1
	fl_timeout=$(( 300 + reps * $(echo $fl_modes | wc -w) * (runtime + 60) + micro_reps * 90 ))
	bash "$here/lab.sh" "$run" overhead kernel="$kernel" flavor="$fl" force=1 timeout="$fl_timeout" \
		reps="$reps" runtime="$runtime" sample="$sample" qd="$qd" calib_mb="$calib_mb" micro_reps="$micro_reps" \
		modes="$fl_modes" probe_micro="$probe_micro"
	dirs+=("$runs/$run")
done
python3 "$here/overhead_report.py" --host-md5-seconds "$host_md5" --host-md5-mib "$calib_mb" "${dirs[@]}" | tee "$runs/$prefix-$kernel.md"
