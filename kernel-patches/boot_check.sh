#!/usr/bin/env bash
# Smoke-boot a built lab kernel: boot_check.sh VERSION [FLAVOR]
# Boots ${NTSCOPE_CACHE}/kernels/VERSION-FLAVOR/bzImage in QEMU (TCG, no
# network, serial console) with a busybox initramfs that lists the trace
# events under /sys/kernel/tracing/events, then checks the list:
#   stock and patched: systems nvme and nvmet exist;
#   patched: every event of EVENTS.md exists (and no other nvme_tcp/nvmet_tcp one);
#   both: probe events work as on distribution kernels (kernel BTF present, a kprobe on
#   nvme_tcp_queue_rq and a return probe on nvmet_tcp_queue_response can be placed).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

version=${1:-}; flavor=${2:-patched}
[ -n "$version" ] || die "usage: boot_check.sh VERSION [stock|patched]"
check_version "$version"
case "$flavor" in stock|patched) ;; *) die "boot_check: unknown FLAVOR '$flavor'; fix: use 'stock' or 'patched'" ;; esac
kernel="$KERNELS_DIR/$version-$flavor/bzImage"
[ -f "$kernel" ] || die "boot_check: $kernel missing; fix: just kernel $version $flavor"
busybox=$(command -v busybox) || die "boot_check: busybox not found; fix: apt-get install busybox-static"
file -L "$busybox" | grep -q 'statically linked' || die "boot_check: $busybox is not static; fix: apt-get install busybox-static"

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root/bin" "$work/root/proc" "$work/root/sys" "$work/root/dev"
cp "$busybox" "$work/root/bin/busybox"
cat > "$work/root/init" <<'EOF'
#!/bin/busybox sh
B=/bin/busybox
$B mount -t proc proc /proc
$B mount -t sysfs sysfs /sys
$B mount -t tracefs tracefs /sys/kernel/tracing
echo "BOOTCHECK release $($B uname -r)"
for d in /sys/kernel/tracing/events/*/*/; do
  echo "BOOTCHECK event $($B basename $($B dirname $d)):$($B basename $d)"
done
T=/sys/kernel/tracing
[ -s /sys/kernel/btf/vmlinux ] && echo "BOOTCHECK btf vmlinux"
if [ -w $T/kprobe_events ]; then
  echo 'p:ntscope_bootcheck/entry nvme_tcp_queue_rq' >> $T/kprobe_events && echo "BOOTCHECK probe entry"
  echo 'r:ntscope_bootcheck/ret nvmet_tcp_queue_response' >> $T/kprobe_events && echo "BOOTCHECK probe return"
  echo > $T/kprobe_events
fi
echo "BOOTCHECK done"
$B poweroff -f
EOF
boot_busybox_vm "$kernel" "$work" BOOTCHECK 512 300 boot_check
secs=$vm_secs
mv "$work/lines" "$work/console.txt"
release=$(sed -n 's/^BOOTCHECK release //p' "$work/console.txt")
sed -n 's/^BOOTCHECK event //p' "$work/console.txt" | sort -u > "$work/events"

fail=0
for sys in nvme nvmet; do
    grep -q "^$sys:" "$work/events" || { echo "boot_check: trace system $sys missing" >&2; fail=1; }
done
n_new=$(grep -cE '^(nvme_tcp|nvmet_tcp):' "$work/events" || true)
if [ "$flavor" = patched ]; then
    grep -oE '^### (nvme_tcp|nvmet_tcp)_[a-z0-9_]+' "$KP_DIR/EVENTS.md" | cut -c5- |
        sed -E 's/^(nvmet?_tcp)_(.*)$/\1:\1_\2/' | sort -u > "$work/want"
    grep -E '^(nvme_tcp|nvmet_tcp):' "$work/events" > "$work/have" || true
    missing=$(comm -23 "$work/want" "$work/have" | tr '\n' ' ')
    extra=$(comm -13 "$work/want" "$work/have" | tr '\n' ' ')
    [ -z "$missing" ] || { echo "boot_check: events of EVENTS.md missing in the booted kernel: $missing" >&2; fail=1; }
    [ -z "$extra" ] || { echo "boot_check: events in the booted kernel not in EVENTS.md: $extra" >&2; fail=1; }
else
    [ "$n_new" = 0 ] || { echo "boot_check: stock kernel has $n_new nvme_tcp/nvmet_tcp events" >&2; fail=1; }
fi
for want in "btf vmlinux" "probe entry" "probe return"; do
    grep -qx "BOOTCHECK $want" "$work/console.txt" || { echo "boot_check: no '$want' in the booted kernel (probe events and BTF: kernel-patches/lab.config)" >&2; fail=1; }
done
[ "$fail" = 0 ] || exit 1
echo "boot_check: $version-$flavor ($release) booted in ${secs} s; $n_new nvme_tcp/nvmet_tcp events, nvme and nvmet present; BTF and probe events work"
