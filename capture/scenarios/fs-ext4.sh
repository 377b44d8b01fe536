# File-system workload (the paper's sections 4.6 and 4.7): ext4 on the NVMe/TCP namespace,
# $jobs fio jobs (job i pinned to CPU i) reading their own file with mixed sizes
# (--bssplit, direct I/O, the paper's case 6 reads 128 KiB from a file system). The files are
# written and the file system mounted (noatime: reads write no metadata) before the
# recording starts, so the traced I/Os are fio's reads and nothing else. Each job logs its
# I/Os (<initiator>/iolog-fsN.txt, fio's iolog: offset and length of each read).
# Variants of the paper's k2 and k4:
#   queues=1            one NVMe/TCP I/O queue for all jobs (k2; base: queues=0, one per CPU)
#   local_qd=N          a writer on the target itself, on the same device (k4; base:
#                       local_qd=0), in a region of the device the file system does not use
# The backing device is a memory-backed null_blk (ext4 reads back what it wrote) of 512 MiB;
# ext4 takes the first $fs_mib MiB, the target's local writer the last 128 MiB. Its
# bandwidth is capped (mbps, null_blk's throttle): the writer's 1 MiB writes fill it with
# few requests, so the remote reads wait for the device, not for a target CPU that a
# 4 KiB writer at a thousand IOPS would also take under TCG (measured: the network stages
# grow as much as the device's). Every fs run has the same device, the base included.
: "${queues:=0}"
: "${jobs:=2}"
: "${qd:=4}"
: "${bssplit:=4k/50:64k/30:128k/20}"
: "${local_qd:=0}"
: "${local_bs:=1m}"
: "${mbps:=20}"
: "${delay_us:=10000}"
: "${tags:=8}"
: "${fs_mib:=256}"
: "${file_mib:=48}"
: "${runtime:=3}"
initiator_smp=$jobs
nullb="memory_backed=1 size=512 irqmode=2 completion_nsec=$((delay_us * 1000)) submit_queues=1 hw_queue_depth=$tags mbps=$mbps"
if [ "$queues" -gt 0 ]; then connect="-i $queues"; fi
mnt=/mnt/ntscope-fs
fio_device="" # each job names its file (guest.sh run_fio)
fs_jobs() { # every job's fio options, the first job's before the others' --name
	set -- --filename=$mnt/fs0 --rw=randread --bssplit="$bssplit" --iodepth="$qd" --size="${file_mib}M" --cpus_allowed=0 \
		--write_iolog="$rundir/$host/iolog-fs0.txt"
	i=1
	while [ "$i" -lt "$jobs" ]; do
		set -- "$@" --name="fs$i" --filename=$mnt/fs$i --rw=randread --bssplit="$bssplit" --iodepth="$qd" \
			--size="${file_mib}M" --cpus_allowed="$i" --write_iolog="$rundir/$host/iolog-fs$i.txt"
		i=$((i + 1))
	done
	printf '%s\n' "$@"
}
initiator_setup() {
	# -E nodiscard,lazy_itable_init: mkfs writes only what ext4 needs (null_blk is not a
	# real SSD); the size argument keeps ext4 out of the target writer's region
	mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=1,lazy_journal_init=1 /dev/nvme0n1 "${fs_mib}M" || return 1
	mkdir -p $mnt && mount -t ext4 -o noatime /dev/nvme0n1 $mnt || return 1
	# the files, written one after the other so that each is one contiguous extent (two
	# written at once interleave: a read across an extent boundary becomes two requests)
	i=0
	while [ "$i" -lt "$jobs" ]; do
		dd if=/dev/zero of=$mnt/fs$i bs=1M count="$file_mib" conv=fsync 2>/dev/null || return 1
		i=$((i + 1))
	done
	sync
	log "ext4 on /dev/nvme0n1 (${fs_mib} MiB) at $mnt: $(ls $mnt | tr '\n' ' ')"
}
workload() {
	set -- $(fs_jobs)
	run_fio fs0 "$@"
}
initiator_cleanup() { umount $mnt; }
target_busy() {
	[ "$local_qd" -gt 0 ] || return 0
	runtime=$((runtime + 1))
	run_fio local --filename=/dev/nullb0 --rw=randwrite --bs="$local_bs" --iodepth="$local_qd" --offset=384M --size=128M
}
truth() {
	nq=null
	[ "$queues" -gt 0 ] && nq=$queues
	local_fio=null
	[ "$local_qd" -gt 0 ] && local_fio="{\"rw\": \"randwrite\", \"bs\": \"$local_bs\", \"iodepth\": $local_qd, \"offset_mib\": 384, \"size_mib\": 128}"
	cause=none bn=null
	if [ "$local_qd" -gt 0 ]; then cause=busy_device
		bn='{"stock": "target_exec", "ntprof": "target_subsystem", "s_notation": "S7-S9(S+C)"}'
	elif [ "$queues" -gt 0 ] && [ "$jobs" -gt "$queues" ]; then cause=few_queues
		# one queue's io_work sends every CPU's commands (S2(S) grows) and receives every
		# response, completed on the submitter's CPU: S2(C) amplifies most (LAD 46-140 in the lab)
		bn='{"stock": "fabric_total", "ntprof": "nvme_tcp_completion", "s_notation": "S2(C)"}'
	fi
	wl=""
	i=0
	while [ "$i" -lt "$jobs" ]; do
		[ -n "$wl" ] && wl="$wl, "
		wl="$wl{\"job\": \"fs$i\", \"rw\": \"randread\", \"bs_bytes\": null, \"bssplit\": \"$bssplit\", \"iodepth\": $qd, \"cpu\": $i, \"runtime_s\": $runtime,
   \"fs\": {\"type\": \"ext4\", \"size_mib\": $fs_mib, \"mount_options\": \"noatime\", \"file_mib\": $file_mib, \"direct\": true}}"
		i=$((i + 1))
	done
	cat <<JSON
{"scenario": "fs-ext4", "family": "fs", "cause": "$cause",
 "injected": {"nvme_connect_nr_io_queues": $nq, "jobs": $jobs, "target_local_fio": $local_fio,
              "null_blk_hw_queue_depth": $tags, "null_blk_submit_queues": 1, "null_blk_completion_nsec": $((delay_us * 1000)),
              "null_blk_mbps": $mbps, "null_blk_memory_backed": true},
 "expected_bottleneck": $bn,
 "workload": [$wl],
 "setup_io_before_recording": "mkfs.ext4, mount and writing the files: the target records them, the initiator does not",
 "expect": "fio's reads through ext4 reach the device one request each (direct I/O, preallocated files): the report's groups by size hold the bssplit shares; one queue for all jobs shows in the initiator's transport queue, a writer on the target in the target's device time"}
JSON
}
