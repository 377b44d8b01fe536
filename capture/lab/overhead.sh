#!/usr/bin/env bash
# Tracing overhead in the lab, side by side: fio IOPS, latency and both VMs' CPU with no
# tracing, a full capture, a sampled capture and a sampled capture without block events,
# interleaved within one boot per kernel flavor (scenario `overhead`), then the table.
#   overhead.sh [PREFIX] [kernel=6.1] [flavors="stock patched"] [reps=3] [runtime=8] [sample=8] [qd=8]
#               [micro_reps=8] [modes="off full sampled sampled-noblock"]
# Out: runs/PREFIX-<kernel>-<flavor>/ (one lab run each; traces in <role>-r<rep>-<mode>/) and
#      runs/PREFIX-<kernel>.md (overhead_report.py's Markdown, also printed).
# TCG is slow and the machine is shared: read the medians and the ranges, not one run.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runs=${NTSCOPE_RUNS:-$(dirname "$(dirname "$here")")/runs}
die() { echo "overhead: error: $*" >&2; exit 2; }
prefix=overhead kernel=6.1 flavors="stock patched" reps=3 runtime=8 sample=8 qd=8 micro_reps=8
modes="off full sampled sampled-noblock"
if [ $# -gt 0 ] && [[ "$1" != *=* ]]; then prefix=$1; shift; fi
case "$prefix" in *[!A-Za-z0-9._-]* | .*) die "PREFIX '$prefix' may only use A-Z a-z 0-9 . _ -" ;; esac
for kv in "$@"; do
	case "$kv" in
	kernel=* | flavors=* | reps=* | runtime=* | sample=* | qd=* | micro_reps=* | modes=*) declare "${kv%%=*}=${kv#*=}" ;;
	*) die "unknown argument '$kv'; fix: keys are kernel= flavors= reps= runtime= sample= qd= micro_reps= modes=" ;;
	esac
done
for n in reps runtime sample qd micro_reps; do [[ "${!n}" =~ ^[1-9][0-9]*$ ]] || die "$n '${!n}' is not a positive whole number"; done
for fl in $flavors; do case "$fl" in stock | patched) ;; *) die "flavor '$fl' is not stock or patched" ;; esac; done
for m in $modes; do
	case "$m" in off | full | sampled | sampled-noblock) ;; *) die "mode '$m' is not off, full, sampled or sampled-noblock" ;; esac
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

# per repetition: 4 modes x (runtime + capture start/stop, slow under TCG on a busy host), plus boot and the microbenchmark
timeout=$(( 300 + reps * $(echo $modes | wc -w) * (runtime + 60) + micro_reps * 60 ))
dirs=()
for fl in $flavors; do
	run="$prefix-$kernel-$fl"
	bash "$here/lab.sh" "$run" overhead kernel="$kernel" flavor="$fl" force=1 timeout="$timeout" \
		reps="$reps" runtime="$runtime" sample="$sample" qd="$qd" calib_mb="$calib_mb" micro_reps="$micro_reps" modes="$modes"
	dirs+=("$runs/$run")
done
python3 "$here/overhead_report.py" --host-md5-seconds "$host_md5" --host-md5-mib "$calib_mb" "${dirs[@]}" | tee "$runs/$prefix-$kernel.md"
