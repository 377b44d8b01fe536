# Tenants sharing one drive: three cgroups (cgroup v2, io controller on) on one initiator and
# two namespaces of one target, both backed by the same null_blk device.
#   latency  4 KiB random reads at iodepth 1 on namespace 1           (a latency class)
#   batch    128 KiB sequential writes at iodepth batch_qd on namespace 1, in batch_n bursts:
#            after batch_off seconds idle, batch_on seconds of I/O (one fio run each: fio's
#            thinktime_iotime did not pause a time-based job under the lab's emulation)
#   other    16 KiB random reads at iodepth 2 on namespace 2 (same drive on the target)
# Each tenant is one fio process, moved into its cgroup before it starts: the analysis must
# put every I/O in its cgroup (counts equal fio's per job), both namespaces on one target
# device, and show the latency tenant slower in the batch's bursts. Block merging is off on the
# initiator (nomerges=2): one fio I/O is one request, so the counts compare exactly.
# `other` has an io.max that never binds (riops=100000): host.json must show it.
: "${batch_qd:=32}"
: "${batch_on:=1}"
: "${batch_off:=1}"
: "${batch_n:=2}"
# latency and other run through every burst and the idle second after the last (span=N: that
# long; with batch_n=0, the base without the batch, e.g. batch_n=0 span=5)
: "${span:=$((batch_n * (batch_on + batch_off) + batch_off))}"
target_setup() { add_namespace 2 /dev/nullb0; } # the same backing device as namespace 1
initiator_setup() {
	wait_for /dev/nvme0n2 20 || { log "no /dev/nvme0n2 (namespace 2)"; return 1; }
	for d in nvme0n1 nvme0n2; do echo 2 >/sys/block/$d/queue/nomerges || return 1; done
	cgroups_setup latency batch other || return 1
	echo "$(cat /sys/block/nvme0n2/dev) riops=100000" >$cgroup_root/other/io.max || return 1
}
batch_bursts() { # fio-batch1.json, fio-batch2.json ...: one per burst, each on its own region
	i=1
	while [ "$i" -le "$batch_n" ]; do
		sleep "$batch_off"
		runtime=$batch_on run_fio "batch$i" --rw=write --bs=128k --iodepth="$batch_qd" --offset="$((128 * i))M" || return 1
		i=$((i + 1))
	done
}
workload() {
	# fio's own completion time of every I/O (iolog-latency_clat.1.log): the per-second counts
	# compare to it
	runtime=$span in_cgroup latency run_fio latency --rw=randread --bs=4k --iodepth=1 \
		--write_lat_log="$rundir/$host/iolog-latency" &
	[ "$batch_n" -eq 0 ] || in_cgroup batch batch_bursts &
	runtime=$span dev=/dev/nvme0n2 in_cgroup other run_fio other --rw=randread --bs=16k --iodepth=2 &
	wait
}
truth() {
	batch_job=""
	[ "$batch_n" -eq 0 ] || batch_job='              {"job": "batch", "fio_outputs": "fio-batch<n>.json, one per burst", "cgroup": "/batch", "device": "/dev/nvme0n1", "nsid": 1, "rw": "write", "bs_bytes": 131072, "iodepth": '"$batch_qd"', "cpu": null, "runtime_s": '"$batch_on"'},'
	cat <<JSON
{"scenario": "tenants", "family": "tenants", "cause": "none",
 "injected": {"cgroups": {"latency": "/latency", "batch": "/batch", "other": "/other"},
              "io_max": {"other": "riops=100000"},
              "shared_device": {"target_device": "/dev/nullb0", "namespaces": [1, 2]},
              "batch_bursts": {"n": $batch_n, "on_s": $batch_on, "off_s": $batch_off}},
 "expected_bottleneck": null,
 "workload": [{"job": "latency", "cgroup": "/latency", "device": "/dev/nvme0n1", "nsid": 1, "rw": "randread", "bs_bytes": 4096, "iodepth": 1, "cpu": null, "runtime_s": $span},
$batch_job
              {"job": "other", "cgroup": "/other", "device": "/dev/nvme0n2", "nsid": 2, "rw": "randread", "bs_bytes": 16384, "iodepth": 2, "cpu": null, "runtime_s": $span}],
 "expect": "every I/O in its job's cgroup (counts equal fio's per job); namespaces 1 and 2 on one target device; the latency tenant slower while the batch bursts"}
JSON
}
