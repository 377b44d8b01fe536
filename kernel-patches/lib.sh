# Shared helpers for build_kernel.sh, check.sh and build_modules.sh (sourced, not run).
# Everything heavy lives under ${NTSCOPE_CACHE}/kernels, never in the repo.

KP_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${NTSCOPE_CACHE:=$HOME/.cache/ntscope}"
KERNELS_DIR="$NTSCOPE_CACHE/kernels"
LAB_FRAGMENT="$KP_DIR/lab.config"
SUPPORTED_VERSIONS="6.1 6.12"

die() { echo "$*" >&2; exit 2; }

check_version() {
    case " $SUPPORTED_VERSIONS " in
        *" $1 "*) ;;
        *) die "kernel: unsupported VERSION '$1'; fix: use one of: $SUPPORTED_VERSIONS" ;;
    esac
}

# Install Debian's linux-source-VERSION if its tarball is missing (retry while
# another process holds the dpkg lock).
ensure_source_tarball() {
    local version=$1 tarball="/usr/src/linux-source-$1.tar.xz" try
    [ -f "$tarball" ] && { echo "$tarball"; return; }
    echo "kernel: $tarball missing, installing linux-source-$version" >&2
    for try in 1 2 3 4 5 6 7 8 9 10; do
        if DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
            "linux-source-$version" flex bison bc libelf-dev libssl-dev xz-utils >&2; then
            break
        fi
        echo "kernel: apt-get failed (dpkg lock held by someone else?), retry $try in 20 s" >&2
        sleep 20
    done
    [ -f "$tarball" ] || die "kernel: $tarball still missing after apt-get install linux-source-$version; fix: run 'apt-get update' and retry"
    echo "$tarball"
}

# Paths of the patches of a version's series, in order (comments and blank lines skipped).
series_patches() {
    local version=$1 series="$KP_DIR/$1/series" line
    [ -f "$series" ] || die "kernel: no series file $series; fix: create it (one patch file name per line)"
    while IFS= read -r line || [ -n "$line" ]; do
        line="${line%%#*}"; line="$(echo "$line" | tr -d '[:space:]')"
        [ -n "$line" ] || continue
        [ -f "$KP_DIR/$version/$line" ] || die "kernel: $series names '$line' but $KP_DIR/$version/$line does not exist; fix: add the patch or remove the line"
        echo "$KP_DIR/$version/$line"
    done < "$series"
}

# Hash identifying a source tree state: tarball identity + the patches applied.
tree_hash() {
    local version=$1 flavor=$2 tarball=$3
    {
        stat -c '%n %s %Y' "$tarball"
        if [ "$flavor" = patched ]; then
            series_patches "$version" | while read -r p; do echo "$(basename "$p")"; cat "$p"; done
        fi
    } | sha256sum | cut -d' ' -f1
}

# Unpack the tarball into DIR (fresh) and apply the series when FLAVOR=patched.
# A dry run first so that a reject leaves no half-patched tree behind.
unpack_and_patch() {
    local version=$1 flavor=$2 tarball=$3 dir=$4 p
    rm -rf "$dir" "$dir.tmp"
    mkdir -p "$dir.tmp"
    echo "kernel: unpacking $tarball -> $dir" >&2
    tar -xf "$tarball" -C "$dir.tmp" --strip-components=1
    if [ "$flavor" = patched ]; then
        for p in $(series_patches "$version"); do
            if ! patch -p1 -d "$dir.tmp" --dry-run --quiet -F0 < "$p" >/dev/null; then
                patch -p1 -d "$dir.tmp" --dry-run -F0 < "$p" >&2 || true
                rm -rf "$dir.tmp"
                die "kernel: patch $p does not apply cleanly to linux-source-$version ($tarball); fix: rebase the patch on this tree"
            fi
            patch -p1 -d "$dir.tmp" --quiet -F0 < "$p" >&2
            echo "kernel: applied $(basename "$p")" >&2
        done
    fi
    mv "$dir.tmp" "$dir"
}

# Hash of a list of patch files (names and contents, in order).
hash_patch_list() {
    local p
    for p in "$@"; do basename "$p"; cat "$p"; done | sha256sum | cut -d' ' -f1
}

# Hash of the patches currently applied to TREE (copies kept in TREE/.ntscope-applied).
applied_hash() {
    local dir="$1/.ntscope-applied" names=() n
    [ -f "$dir/order" ] && mapfile -t names < "$dir/order"
    hash_patch_list $(for n in "${names[@]}"; do echo "$dir/$n"; done)
}

# Make the patches applied to TREE exactly the series (patched) or none (stock):
# revert what is applied (newest first, from the kept copies), then apply the
# series, each patch dry-run first. A failed revert re-unpacks the tarball.
sync_series() {
    local version=$1 flavor=$2 tarball=$3 tree=$4 dir="$4/.ntscope-applied" want=() applied=() p i
    mkdir -p "$dir"; touch "$dir/order"
    [ "$flavor" = patched ] && mapfile -t want < <(series_patches "$version")
    [ "$(hash_patch_list "${want[@]}")" = "$(applied_hash "$tree")" ] && return 0
    mapfile -t applied < "$dir/order"
    for ((i=${#applied[@]}-1; i>=0; i--)); do
        p="$dir/${applied[$i]}"
        if patch -p1 -R -d "$tree" --dry-run --quiet -F0 < "$p" >/dev/null; then
            patch -p1 -R -d "$tree" --quiet -F0 < "$p" >&2
            echo "kernel: reverted ${applied[$i]}" >&2
            head -n "$i" "$dir/order" > "$dir/order.tmp"; mv "$dir/order.tmp" "$dir/order"; rm -f "$p"
        else
            echo "kernel: cannot revert ${applied[$i]} in $tree; unpacking a fresh tree" >&2
            unpack_and_patch "$version" stock "$tarball" "$tree"
            mkdir -p "$dir"; : > "$dir/order"
            tree_hash "$version" stock "$tarball" > "$tree/.ntscope-base-hash"
            break
        fi
    done
    for p in "${want[@]}"; do
        if ! patch -p1 -d "$tree" --dry-run --quiet -F0 < "$p" >/dev/null; then
            patch -p1 -d "$tree" --dry-run -F0 < "$p" >&2 || true
            die "kernel: patch $p does not apply cleanly to linux-source-$version ($tarball); fix: rebase the patch on this tree"
        fi
        patch -p1 -d "$tree" --quiet -F0 < "$p" >&2
        cp "$p" "$dir/"; basename "$p" >> "$dir/order"
        echo "kernel: applied $(basename "$p")" >&2
    done
}

# Configure DIR: allnoconfig with the lab fragment forced, then olddefconfig.
configure_lab() {
    local dir=$1
    make -s -C "$dir" ARCH=x86_64 KCONFIG_ALLCONFIG="$LAB_FRAGMENT" allnoconfig >&2
    make -s -C "$dir" ARCH=x86_64 olddefconfig >&2
}

# Fail naming every CONFIG_*=y of the fragment that is not =y in CONFIG_FILE; a line
# marked "# only V" is checked on version V only. Usage: verify_config CONFIG_FILE VERSION
verify_config() {
    local config_file=$1 version=$2 missing=() opt only
    while read -r opt only; do
        [ -z "$only" ] || [ "$only" = "$version" ] || continue
        grep -qx "$opt=y" "$config_file" || missing+=("$opt")
    done < <(sed -nE 's/^(CONFIG_[A-Z0-9_]+)=y([[:space:]]*#[[:space:]]*only[[:space:]]+([0-9.]+))?.*$/\1 \3/p' "$LAB_FRAGMENT")
    if [ "${#missing[@]}" -gt 0 ]; then
        echo "kernel: $config_file lacks options the lab needs: ${missing[*]}" >&2
        echo "kernel: fix: add their missing dependencies to $LAB_FRAGMENT (see 'make menuconfig' help for each)" >&2
        exit 2
    fi
}

# Boots KERNEL with $WORK/root as a busybox initramfs (no network) and keeps the
# console lines that start with TAG in $WORK/lines (TAG prefix kept). The init script
# must print "TAG done" last; otherwise the console tail is shown and we die.
# Usage: boot_busybox_vm KERNEL WORK TAG MEMORY_MB TIMEOUT_S WHO; sets vm_secs.
boot_busybox_vm() {
    local kernel=$1 work=$2 tag=$3 mem=$4 limit=$5 who=$6 t0
    chmod +x "$work/root/init"
    bash "$KP_DIR/../tools/pack-initramfs.sh" "$work/root" "$work/initramfs.cpio"
    t0=$(date +%s)
    timeout "$limit" qemu-system-x86_64 -m "$mem" -smp 1 -nographic -no-reboot -net none \
        -kernel "$kernel" -initrd "$work/initramfs.cpio" \
        -append "console=ttyS0 panic=-1 quiet no_timer_check" > "$work/console.log" 2>&1 || true
    vm_secs=$(( $(date +%s) - t0 ))
    # The console may prefix lines with escape codes: keep from the tag on.
    tr -d '\r' < "$work/console.log" | grep -ao "$tag .*" > "$work/lines" || true
    grep -q "^$tag done" "$work/lines" || {
        tr -d '\r' < "$work/console.log" | tail -40 >&2
        die "$who: $kernel did not finish its init script in ${vm_secs} s (console tail above)"
    }
}
