#!/usr/bin/env bash
# Build a lab kernel: build_kernel.sh VERSION [stock|patched]
# In:  /usr/src/linux-source-VERSION.tar.xz (installed if missing), VERSION/series, lab.config
# Out: ${NTSCOPE_CACHE}/kernels/VERSION-FLAVOR/{bzImage,config,build-info.txt}
#      and ${NTSCOPE_CACHE}/kernels/VERSION-FLAVOR.READY once the bzImage is in place.
# One kept tree per version, ${NTSCOPE_CACHE}/kernels/src-VERSION, serves both
# flavors: the series is applied or reverted as the flavor asks (the copies of
# the applied patches are kept in the tree, so a changed series is reverted
# exactly before the new one is applied; a failed revert re-unpacks the
# tarball). kbuild then recompiles only what changed: switching flavor or
# editing a patch costs the two drivers and a relink, not a kernel build.
# A change of lab.config reconfigures the tree.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

version=${1:-}; flavor=${2:-patched}
[ -n "$version" ] || die "usage: build_kernel.sh VERSION [stock|patched] (VERSION: $SUPPORTED_VERSIONS)"
check_version "$version"
case "$flavor" in stock|patched) ;; *) die "kernel: unknown FLAVOR '$flavor'; fix: use 'stock' or 'patched'" ;; esac

mkdir -p "$KERNELS_DIR"
src="$KERNELS_DIR/src-$version"
out="$KERNELS_DIR/$version-$flavor"

# One build per tree at a time (another helper may call the same recipe).
exec 9>"$src.lock"
flock 9

tarball=$(ensure_source_tarball "$version")
want_base=$(tree_hash "$version" stock "$tarball")
if [ "$(cat "$src/.ntscope-base-hash" 2>/dev/null)" != "$want_base" ]; then
    unpack_and_patch "$version" stock "$tarball" "$src"
    mkdir -p "$src/.ntscope-applied"
    echo "$want_base" > "$src/.ntscope-base-hash"
fi
sync_series "$version" "$flavor" "$tarball" "$src"

want_cfg=$(sha256sum "$LAB_FRAGMENT" | cut -d' ' -f1)
if [ ! -f "$src/.config" ] || [ "$(cat "$src/.ntscope-config-hash" 2>/dev/null)" != "$want_cfg" ]; then
    echo "kernel: configuring $src from $LAB_FRAGMENT" >&2
    [ ! -f "$src/.config" ] || cp -p "$src/.config" "$src/.config.ntscope-prev"
    configure_lab "$src"
    # Same resulting config (e.g. only a comment changed): keep the old file
    # and its mtime, so kbuild does not resync the config and rebuild.
    if [ -f "$src/.config.ntscope-prev" ] && cmp -s "$src/.config" "$src/.config.ntscope-prev"; then
        mv -f "$src/.config.ntscope-prev" "$src/.config"
        echo "kernel: resulting .config unchanged" >&2
    fi
    rm -f "$src/.config.ntscope-prev"
    echo "$want_cfg" > "$src/.ntscope-config-hash"
fi
verify_config "$src/.config" "$version"

echo "kernel: building $version-$flavor bzImage (nice -n 10, -j2)" >&2
start=$(date +%s)
nice -n 10 make -C "$src" ARCH=x86_64 -j2 bzImage >"$src/.ntscope-build.log" 2>&1 || {
    tail -40 "$src/.ntscope-build.log" >&2
    die "kernel: build of $version-$flavor failed (full log: $src/.ntscope-build.log)"
}
secs=$(( $(date +%s) - start ))

mkdir -p "$out"
cp "$src/arch/x86/boot/bzImage" "$out/bzImage.tmp" && mv "$out/bzImage.tmp" "$out/bzImage"
cp "$src/.config" "$out/config.tmp" && mv "$out/config.tmp" "$out/config"
release=$(make -s -C "$src" ARCH=x86_64 kernelrelease)
cat > "$out/build-info.txt.tmp" <<INFO
version=$version
flavor=$flavor
kernelrelease=$release
tarball=$tarball
patches=$(ls "$src/.ntscope-applied" | grep -v '^order$' | tr '\n' ' ')
series_hash=$(applied_hash "$src")
fragment_hash=$want_cfg
build_seconds=$secs
built_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
INFO
mv "$out/build-info.txt.tmp" "$out/build-info.txt"
touch "$KERNELS_DIR/$version-$flavor.READY"
echo "kernel: $out/bzImage ($release) built in ${secs} s"
