# Files of tenants: ext4 on namespace 1 and xfs on namespace 2 (each its own memory-backed
# null_blk on the target), three files at three rates, each written or read by one fio process
# in its own cgroup:
#   reader    ext4 /mnt/ext4/reads    4 KiB direct random reads,  qd 1, rate reader_iops
#   writer    ext4 /mnt/ext4/writes   16 KiB direct random writes, qd 2, rate writer_iops
#   buffered  xfs  /mnt/xfs/buffered  64 KiB buffered sequential writes, rate buffered_iops,
#             written back by a `sync` the workload runs from the root cgroup once fio ends:
#             each writeback I/O must still count for the buffered cgroup (its owner)
# The files are made (full size: fio then writes into them instead of laying out new ones) and
# the page cache dropped before the recording; a holder process keeps
# them open across it, as a service keeps its files, so the capture's open-file snapshots name
# them. Merging is off (nomerges=2): a direct I/O is one request, so the counts compare exactly;
# the buffered file compares by bytes (the page cache gathers writes into larger requests).
: "${reader_iops:=120}"
: "${writer_iops:=60}"
: "${buffered_iops:=30}"
: "${runtime:=3}"
nullb="memory_backed=1 size=512"
fio_device="" # each job names its file (guest.sh run_fio)
target_setup() { setup_nullb nullb1 && add_namespace 2 /dev/nullb1; }
initiator_setup() {
	wait_for /dev/nvme0n2 20 || { log "no /dev/nvme0n2 (namespace 2)"; return 1; }
	cgroups_setup reader writer buffered || return 1
	mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=1,lazy_journal_init=1 /dev/nvme0n1 || return 1
	mkfs.xfs -q -f -K /dev/nvme0n2 || return 1
	mkdir -p /mnt/ext4 /mnt/xfs
	mount -t ext4 -o noatime /dev/nvme0n1 /mnt/ext4 && mount -t xfs -o noatime /dev/nvme0n2 /mnt/xfs || return 1
	dd if=/dev/zero of=/mnt/ext4/reads bs=1M count=32 conv=fsync 2>/dev/null &&
		dd if=/dev/zero of=/mnt/ext4/writes bs=1M count=32 conv=fsync 2>/dev/null &&
		dd if=/dev/zero of=/mnt/xfs/buffered bs=1M count=32 conv=fsync 2>/dev/null || return 1
	sync
	echo 3 >/proc/sys/vm/drop_caches
	for d in nvme0n1 nvme0n2; do echo 2 >/sys/block/$d/queue/nomerges || return 1; done
	# the holder: keeps the three files open from before the recording to after it
	sh -c 'exec 3</mnt/ext4/reads 4</mnt/ext4/writes 5</mnt/xfs/buffered; exec sleep 600' &
	echo $! >/tmp/holder.pid
	log "ext4 /mnt/ext4 (nvme0n1), xfs /mnt/xfs (nvme0n2): $(ls /mnt/ext4 /mnt/xfs | tr '\n' ' ')"
}
initiator_cleanup() {
	kill "$(cat /tmp/holder.pid)" 2>/dev/null
	umount /mnt/ext4 /mnt/xfs
}
workload() {
	in_cgroup reader run_fio reader --filename=/mnt/ext4/reads --rw=randread --bs=4k --iodepth=1 \
		--size=32M --rate_iops="$reader_iops" &
	in_cgroup writer run_fio writer --filename=/mnt/ext4/writes --rw=randwrite --bs=16k --iodepth=2 \
		--size=32M --rate_iops="$writer_iops" &
	in_cgroup buffered run_fio buffered --filename=/mnt/xfs/buffered --rw=write --bs=64k --direct=0 \
		--ioengine=psync --size=32M --rate_iops="$buffered_iops" &
	wait
	sync # from the root cgroup: the writeback still counts for the pages' owner
}
truth() {
	cat <<JSON
{"scenario": "tenant-files", "family": "tenants", "cause": "none",
 "injected": {"cgroups": {"reader": "/reader", "writer": "/writer", "buffered": "/buffered"},
              "file_systems": {"/mnt/ext4": "ext4 on /dev/nvme0n1", "/mnt/xfs": "xfs on /dev/nvme0n2"}},
 "expected_bottleneck": null,
 "workload": [{"job": "reader", "cgroup": "/reader", "file": "/mnt/ext4/reads", "fs": "ext4", "direct": true, "rw": "randread", "bs_bytes": 4096, "iodepth": 1, "rate_iops": $reader_iops, "cpu": null, "runtime_s": $runtime},
              {"job": "writer", "cgroup": "/writer", "file": "/mnt/ext4/writes", "fs": "ext4", "direct": true, "rw": "randwrite", "bs_bytes": 16384, "iodepth": 2, "rate_iops": $writer_iops, "cpu": null, "runtime_s": $runtime},
              {"job": "buffered", "cgroup": "/buffered", "file": "/mnt/xfs/buffered", "fs": "xfs", "direct": false, "rw": "write", "bs_bytes": 65536, "iodepth": 1, "rate_iops": $buffered_iops, "cpu": null, "runtime_s": $runtime}],
 "expect": "each file's direct I/Os equal fio's count; the buffered file's bytes equal fio's, written back for its cgroup; each file named by its path"}
JSON
}
