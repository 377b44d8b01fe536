#!/usr/bin/env bash
# Fire the patched events with real I/O in ONE QEMU VM: loopback_check.sh VERSION
# The VM (TCG, no network device) runs an nvmet-tcp target on null_blk and an
# nvme-tcp initiator connected to it over 127.0.0.1, enables nvme_tcp:* and
# nvmet_tcp:*, does a 4 KiB O_DIRECT read, a 4 KiB write (in-capsule) and a
# 128 KiB write (R2T), and prints the trace. The script then checks, per I/O,
# that each side fired the event sequence EVENTS.md promises (chunk events
# "1+" collapsed), and that cid/qid/cntlid agree between the two sides.
# This is a smoke test of the patches, not the two-VM lab (loopback skips the
# NIC and the qdisc path, and one CPU serializes both sides).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

version=${1:-}
[ -n "$version" ] || die "usage: loopback_check.sh VERSION"
check_version "$version"
kernel="$KERNELS_DIR/$version-patched/bzImage"
[ -f "$kernel" ] || die "loopback_check: $kernel missing; fix: just kernel $version patched"
busybox=$(command -v busybox) || die "loopback_check: busybox not found; fix: apt-get install busybox-static"

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root/bin" "$work/root/proc" "$work/root/sys" "$work/root/dev"
cp "$busybox" "$work/root/bin/busybox"
cat > "$work/root/init" <<'EOF'
#!/bin/busybox sh
B=/bin/busybox
$B mount -t proc proc /proc
$B mount -t sysfs sysfs /sys
$B mount -t devtmpfs dev /dev
$B mount -t configfs configfs /sys/kernel/config
$B mount -t tracefs tracefs /sys/kernel/tracing
$B ip link set lo up
$B ip addr add 127.0.0.1/8 dev lo
T=/sys/kernel/config/nvmet
S=$T/subsystems/ntscope-loop
$B mkdir $S
echo 1 > $S/attr_allow_any_host
$B mkdir $S/namespaces/1
echo -n /dev/nullb0 > $S/namespaces/1/device_path
echo 1 > $S/namespaces/1/enable
$B mkdir $T/ports/1
echo ipv4 > $T/ports/1/addr_adrfam
echo tcp > $T/ports/1/addr_trtype
echo 127.0.0.1 > $T/ports/1/addr_traddr
echo 4420 > $T/ports/1/addr_trsvcid
$B ln -s $S $T/ports/1/subsystems/ntscope-loop
TR=/sys/kernel/tracing
echo 8192 > $TR/buffer_size_kb
echo 1 > $TR/events/nvme_tcp/enable
echo 1 > $TR/events/nvmet_tcp/enable
echo "nqn=ntscope-loop,transport=tcp,traddr=127.0.0.1,trsvcid=4420,nr_io_queues=1" > /dev/nvme-fabrics
$B sleep 2
echo "LOOPCHECK devices: $($B ls /dev | $B grep nvme | $B tr '\n' ' ')"
echo "ntscope_mark read4k" > $TR/trace_marker
$B dd if=/dev/nvme0n1 of=/dev/null bs=4096 count=1 iflag=direct 2>&1 | $B sed 's/^/LOOPCHECK dd: /'
echo "ntscope_mark write4k" > $TR/trace_marker
$B dd if=/dev/zero of=/dev/nvme0n1 bs=4096 count=1 oflag=direct 2>&1 | $B sed 's/^/LOOPCHECK dd: /'
echo "ntscope_mark write128k" > $TR/trace_marker
$B dd if=/dev/zero of=/dev/nvme0n1 bs=131072 count=1 oflag=direct 2>&1 | $B sed 's/^/LOOPCHECK dd: /'
echo "ntscope_mark end" > $TR/trace_marker
echo 0 > $TR/tracing_on
$B sed 's/^/LOOPCHECK trace: /' $TR/trace
echo "LOOPCHECK done"
$B poweroff -f
EOF
boot_busybox_vm "$kernel" "$work" LOOPCHECK 768 600 loopback_check
secs=$vm_secs
grep -E '^LOOPCHECK (devices|dd):' "$work/lines" | sed 's/^LOOPCHECK /loopback_check: vm: /'
sed -n 's/^LOOPCHECK trace: //p' "$work/lines" > "$work/trace.txt"
[ -z "${NTSCOPE_KEEP_TRACE:-}" ] || cp "$work/trace.txt" "$NTSCOPE_KEEP_TRACE"
python3 "$KP_DIR/loopback_sequences.py" "$work/trace.txt"
echo "loopback_check: $version-patched VM ran in ${secs} s"
