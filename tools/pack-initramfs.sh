#!/usr/bin/env bash
# Packs a root folder into an initramfs (newc cpio), atomically: used by the lab
# (capture/lab/build-initramfs.sh) and by the kernel checks (kernel-patches/lib.sh).
# Usage: pack-initramfs.sh ROOT OUT [gzip|none]   (default none: under TCG an
# uncompressed image boots faster than the guest can gunzip one)
set -euo pipefail
root=$1 out=$2 compress=${3:-none}
[ -d "$root" ] || { echo "pack-initramfs: error: $root is not a folder" >&2; exit 2; }
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
case "$compress" in
gzip) (cd "$root" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1 >"$tmp") ;;
none) (cd "$root" && find . -print0 | cpio --null -o -H newc --quiet >"$tmp") ;;
*) echo "pack-initramfs: error: compression '$compress' is not gzip or none" >&2; exit 2 ;;
esac
mv "$tmp" "$out"
trap - EXIT
