#!/usr/bin/env bash
# Build patched nvme-tcp.ko and nvmet-tcp.ko for an installed kernel, without
# rebuilding the kernel: build_modules.sh [KVER]   (default: uname -r)
# In:  /lib/modules/KVER/build (Debian: linux-headers-KVER),
#      Debian's linux-source-X.Y of the same kernel (X.Y from KVER), the series.
# Out: ${NTSCOPE_CACHE}/modules/KVER/{nvme-tcp.ko,nvmet-tcp.ko}
# Only drivers/nvme/{host,target} are taken from the source tarball; each .ko
# is built as an external module (Kbuild with just tcp.o) against the headers,
# so it links against the running nvme-core / nvme-fabrics / nvmet modules.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

kver=${1:-$(uname -r)}
kdir="/lib/modules/$kver/build"
[ -d "$kdir" ] || die "modules: $kdir missing (no headers for kernel $kver); fix: apt-get install linux-headers-$kver"

# Source series from the kernel release: 6.1.0-27-amd64 -> 6.1, 6.12.9+deb13-amd64 -> 6.12.
series_version=$(echo "$kver" | grep -oE '^[0-9]+\.[0-9]+')
check_version "$series_version"
for opt in CONFIG_NVME_TCP CONFIG_NVME_TARGET_TCP CONFIG_TRACEPOINTS; do
    grep -qE "^$opt=(y|m)" "$kdir/.config" ||
        die "modules: $kdir/.config has no $opt; fix: use a kernel built with nvme-tcp/nvmet-tcp and tracepoints"
done
for opt in CONFIG_NVME_TCP CONFIG_NVME_TARGET_TCP; do
    grep -qx "$opt=m" "$kdir/.config" ||
        die "modules: $opt is built into $kver (not =m), so a module cannot replace it; fix: use 'just kernel' instead"
done

tarball=$(ensure_source_tarball "$series_version")

# The private structures of nvme-core/nvmet must match the running modules:
# on Debian, the source package must be the same version as the kernel image.
if [ "${NTSCOPE_FORCE:-0}" != 1 ] && command -v dpkg-query >/dev/null; then
    img_ver=$(dpkg-query -W -f '${Version}' "linux-image-$kver" 2>/dev/null || true)
    src_ver=$(dpkg-query -W -f '${Version}' "linux-source-$series_version" 2>/dev/null || true)
    if [ -n "$img_ver" ] && [ "$img_ver" != "$src_ver" ]; then
        die "modules: linux-image-$kver is $img_ver but linux-source-$series_version is ${src_ver:-not installed}; fix: apt-get install linux-source-$series_version=$img_ver (or NTSCOPE_FORCE=1 if you know the nvme structures match)"
    fi
fi

work="$NTSCOPE_CACHE/modules/$kver"
src="$work/src"
rm -rf "$src"; mkdir -p "$src"
top="linux-source-$series_version"   # top directory of Debian's tarball
tar -xf "$tarball" -C "$src" --strip-components=1 "$top/drivers/nvme/host" "$top/drivers/nvme/target"
for p in $(series_patches "$series_version"); do
    patch -p1 -d "$src" --quiet -F0 < "$p" ||
        die "modules: $(basename "$p") does not apply to $tarball; fix: rebase the series"
done

# Kbuild files that build only the TCP transports (a Kbuild file takes
# precedence over the directory's Makefile).
printf 'ccflags-y += -I$(src)\nobj-m := nvme-tcp.o\nnvme-tcp-y := tcp.o\n' > "$src/drivers/nvme/host/Kbuild"
printf 'ccflags-y += -I$(src)\nobj-m := nvmet-tcp.o\nnvmet-tcp-y := tcp.o\n' > "$src/drivers/nvme/target/Kbuild"

for d in host target; do
    nice -n 10 make -C "$kdir" M="$src/drivers/nvme/$d" -j2 modules
done
cp "$src/drivers/nvme/host/nvme-tcp.ko" "$work/nvme-tcp.ko.tmp" && mv "$work/nvme-tcp.ko.tmp" "$work/nvme-tcp.ko"
cp "$src/drivers/nvme/target/nvmet-tcp.ko" "$work/nvmet-tcp.ko.tmp" && mv "$work/nvmet-tcp.ko.tmp" "$work/nvmet-tcp.ko"
echo "modules: built $work/nvme-tcp.ko and $work/nvmet-tcp.ko for $kver"
echo "modules: load (initiator): nvme disconnect-all; modprobe -r nvme-tcp; modprobe nvme-fabrics; insmod $work/nvme-tcp.ko"
echo "modules: load (target): remove nvmet tcp ports in configfs; modprobe -r nvmet-tcp; modprobe nvmet; insmod $work/nvmet-tcp.ko"
