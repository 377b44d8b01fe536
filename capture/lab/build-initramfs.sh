#!/usr/bin/env bash
# Build (or reuse) the lab VMs' initramfs: busybox-static, trace-cmd, fio, nvme-cli,
# iproute2's ip and tc, iperf3 (a bulk TCP stream between the VMs: nic-contention),
# e2fsprogs' mke2fs (mkfs.ext4 on the namespace: fs-ext4), xfsprogs' mkfs.xfs (tenant-files), chrony (clock_sync=chrony),
# their shared libraries (from ldd), and capture/ itself.
# In:  the host's Debian packages (installed if missing), capture/ (this folder's parent)
# Out: ${NTSCOPE_CACHE}/lab/initramfs-<hash>.cpio.gz, path printed on stdout.
#      <hash> covers capture/ and the package versions, so edits rebuild it (~10 s).
set -euo pipefail

die() { echo "build-initramfs: error: $*" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
capture_dir=$(dirname "$here")
cache=${NTSCOPE_CACHE:-$HOME/.cache/ntscope}/lab
mkdir -p "$cache"

# Debian packages that provide the guest tools.
pkgs="busybox-static trace-cmd fio nvme-cli iproute2 iperf3 e2fsprogs xfsprogs"
bash "$here/../../tools/ensure-packages.sh" $pkgs gcc || exit 2

# chrony (clock_sync=chrony) comes from its .deb, unpacked, never installed on this host:
# the package would start a daemon here that reaches for public NTP servers. Its
# libraries are ordinary packages.
bash "$here/../../tools/ensure-packages.sh" libcap2 libedit2 libgnutls30 libnettle8 libseccomp2 || exit 2
find_deb() { for f in "$cache"/chrony_*.deb; do [ -e "$f" ] && echo "$f" && return; done; return 0; }
chrony_deb=$(find_deb)
if [ -z "$chrony_deb" ]; then
	(cd "$cache" && apt-get download chrony >/dev/null 2>&1) ||
		die "apt-get download chrony failed; fix: apt-get update, then retry"
	chrony_deb=$(find_deb)
fi
chrony_root="$cache/chrony-root"
[ -x "$chrony_root/usr/sbin/chronyd" ] || dpkg-deb -x "$chrony_deb" "$chrony_root" || die "cannot unpack $chrony_deb"

versions=$(for p in $pkgs; do dpkg-query -W -f '${Package}=${Version}\n' "$p"; done; basename "$chrony_deb")
hash=$( { echo "$versions"; cd "$capture_dir" && find . -type f ! -name '*.pyc' ! -path './lab/test-out/*' -print0 | sort -z | xargs -0 sha256sum; } | sha256sum | cut -c1-16)
# none (default) or gzip: an uncompressed image is bigger on disk but skips the
# in-guest decompression, which is slow under TCG.
compress=${NTSCOPE_LAB_COMPRESS:-none}
case "$compress" in gzip) ext=cpio.gz ;; none) ext=cpio ;; *) die "NTSCOPE_LAB_COMPRESS='$compress' is not gzip or none" ;; esac
out="$cache/initramfs-$hash.$ext"
if [ -s "$out" ]; then echo "$out"; exit 0; fi

echo "build-initramfs: building $out" >&2
root=$(mktemp -d "$cache/root.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib64,proc,sys,dev,tmp,share,etc/nvme,opt/ntscope,root,run,var/tmp}

# Full tools first (they win over busybox applets of the same name: ip, tc).
tools="/usr/bin/trace-cmd /usr/bin/fio /usr/sbin/nvme /usr/sbin/tc /usr/sbin/ip /usr/bin/iperf3 /usr/sbin/mke2fs /usr/sbin/mkfs.xfs"
for t in $tools; do
	[ -x "$t" ] || die "$t is missing; fix: apt-get install $pkgs"
	install -D -m 0755 "$t" "$root$t"
done
ln -s mke2fs "$root/usr/sbin/mkfs.ext4"
install -D -m 0644 /etc/mke2fs.conf "$root/etc/mke2fs.conf"
install -D -m 0755 "$chrony_root/usr/sbin/chronyd" "$root/usr/sbin/chronyd"
install -D -m 0755 "$chrony_root/usr/bin/chronyc" "$root/usr/bin/chronyc"
# Shared libraries and the dynamic loader, at the paths ldd reports.
for lib in $(ldd $tools "$chrony_root/usr/sbin/chronyd" "$chrony_root/usr/bin/chronyc" | awk '/=>/ && $3 ~ /^\// {print $3} /^\t\/lib/ {print $1}' | sort -u); do
	install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
done
[ -e "$root/lib64/ld-linux-x86-64.so.2" ] || install -D -m 0755 "$(readlink -f /lib64/ld-linux-x86-64.so.2)" "$root/lib64/ld-linux-x86-64.so.2"
# Keep /lib -> usr-merged layout working: ldd printed /lib/x86_64-linux-gnu paths.
if [ -d /usr/lib/x86_64-linux-gnu/traceevent/plugins ]; then
	mkdir -p "$root/usr/lib/x86_64-linux-gnu/traceevent"
	cp -a /usr/lib/x86_64-linux-gnu/traceevent/plugins "$root/usr/lib/x86_64-linux-gnu/traceevent/"
	for so in "$root"/usr/lib/x86_64-linux-gnu/traceevent/plugins/*.so; do
		for lib in $(ldd "$so" 2>/dev/null | awk '/=>/ && $3 ~ /^\// {print $3}'); do
			[ -e "$root$lib" ] || install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
		done
	done
fi

# busybox applets for everything else (sh, mount, awk, sed, ...), without
# shadowing the full tools copied above.
install -m 0755 /bin/busybox "$root/bin/busybox"
for a in $(/bin/busybox --list); do
	[ "$a" = busybox ] && continue
	for d in bin sbin usr/bin usr/sbin; do [ -e "$root/$d/$a" ] && continue 2; done
	ln -s busybox "$root/bin/$a"
done

# fio needs SysV shared memory; the minimal lab kernels may lack CONFIG_SYSVIPC.
command -v gcc >/dev/null || die "gcc is missing (needed for lab/shm_shim); fix: apt-get install gcc"
mkdir -p "$root/usr/lib/ntscope"
gcc -shared -fPIC -O2 -Wall -o "$root/usr/lib/ntscope/shm_shim.so" "$here/shm_shim/shm_shim.c" ||
	die "cannot compile $here/shm_shim/shm_shim.c"

# nvme-cli wants a host NQN; one fixed value is fine for a private lab.
echo "nqn.2014-08.org.nvmexpress:uuid:6e74736f-0000-4000-8000-00006c616221" >"$root/etc/nvme/hostnqn"
echo "6e74736f-0000-4000-8000-00006c616221" >"$root/etc/nvme/hostid"
echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"

# capture/ itself at /opt/ntscope/capture, with a justfile so that `just capture ...`
# works in the VM as on a host (just is copied when it is an ELF binary here).
mkdir -p "$root/opt/ntscope/capture"
cp -a "$capture_dir/ntscope-capture" "$capture_dir/capture.just" "$capture_dir/README.md" \
	"$capture_dir/lab" "$capture_dir/scenarios" "$root/opt/ntscope/capture/"
install -m 0644 "$here/vm.justfile" "$root/opt/ntscope/justfile"
for cand in "$(command -v just || true)" "$(bash "$capture_dir/../tools/checkout-cache.sh")/venv/bin/just"; do
	if [ -n "$cand" ] && [ "$(head -c 4 "$cand" | od -An -c | tr -d ' ')" = '177ELF' ]; then
		install -m 0755 "$cand" "$root/usr/bin/just"
		for lib in $(ldd "$cand" | awk '/=>/ && $3 ~ /^\// {print $3}'); do
			[ -e "$root$lib" ] || install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
		done
		break
	fi
done
[ -x "$root/usr/bin/just" ] || echo "build-initramfs: note: no just binary found; the VMs call ntscope-capture directly" >&2
install -m 0755 "$here/init" "$root/init"

bash "$(dirname "$capture_dir")/tools/pack-initramfs.sh" "$root" "$out" "$compress"
# keep the three newest images
ls -t "$cache"/initramfs-*.cpio* | tail -n +5 | xargs -r rm -f
echo "build-initramfs: $(du -h "$out" | cut -f1) ($versions)" | tr '\n' ' ' >&2
echo >&2
echo "$out"
