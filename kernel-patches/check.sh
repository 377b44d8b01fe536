#!/usr/bin/env bash
# CI check of the kernel patches: check.sh [VERSION...]   (default: 6.1 6.12)
# For each version:
#   1. every patch of VERSION/series applies to a pristine linux-source-VERSION
#      tree (dry run first; a reject fails with the patch name);
#   2. the patched nvme-tcp host and nvmet-tcp target objects compile
#      (lab config, -Werror on those two objects only);
#   3. the events the compiled objects define, the events the patches define
#      and the events EVENTS.md documents are the same three sets.
# The configured, prepared pristine tree is cached in
# ${NTSCOPE_CACHE}/kernels/check-VERSION (patches are reverted after each run),
# so a second run only recompiles the two objects.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

EVENTS_MD="$KP_DIR/EVENTS.md"
OBJECTS="drivers/nvme/host/tcp.o drivers/nvme/target/tcp.o"
versions=("$@"); [ "${#versions[@]}" -gt 0 ] || versions=($SUPPORTED_VERSIONS)
fail=0

# Event names EVENTS.md documents: headings "### nvme_tcp_xxx" / "### nvmet_tcp_xxx".
events_in_doc() {
    [ -f "$EVENTS_MD" ] || die "check: $EVENTS_MD missing; fix: write it (one '### <event>' heading per event)"
    grep -oE '^### (nvme_tcp|nvmet_tcp)_[a-z0-9_]+' "$EVENTS_MD" | cut -c5- | sort -u
}

# Event names the patches of a version define (TRACE_EVENT(name / DEFINE_EVENT(class, name).
events_in_patches() {
    series_patches "$1" | xargs cat | grep '^+' | {
        grep -oE 'TRACE_EVENT\((nvme_tcp|nvmet_tcp)_[a-z0-9_]+|DEFINE_EVENT\([a-z0-9_]+, *(nvme_tcp|nvmet_tcp)_[a-z0-9_]+' || true
    } | sed -E 's/.*[(, ]//' | sort -u
}

# Event names compiled into the objects (one __tracepoint_<event> symbol each).
events_in_objects() {
    local tree=$1 o
    for o in $OBJECTS; do nm "$tree/$o"; done |
        { grep -oE '__tracepoint_(nvme_tcp|nvmet_tcp)_[a-z0-9_]+$' || true; } |
        sed 's/^__tracepoint_//' | sort -u
}

compare_sets() {   # compare_sets NAME_A FILE_A NAME_B FILE_B
    local only_a only_b
    only_a=$(comm -23 "$2" "$4" | tr '\n' ' ')
    only_b=$(comm -13 "$2" "$4" | tr '\n' ' ')
    if [ -n "$only_a$only_b" ]; then
        [ -z "$only_a" ] || echo "check: in $1 but not in $3: $only_a" >&2
        [ -z "$only_b" ] || echo "check: in $3 but not in $1: $only_b" >&2
        return 1
    fi
}

# Prepared pristine tree: unpacked, lab-configured, `make prepare` done.
prepare_tree() {
    local version=$1 tarball=$2 tree=$3 want
    want=$( { stat -c '%n %s %Y' "$tarball"; cat "$LAB_FRAGMENT"; } | sha256sum | cut -d' ' -f1)
    if [ -f "$tree/.ntscope-dirty" ] || [ "$(cat "$tree/.ntscope-check-base" 2>/dev/null)" != "$want" ]; then
        unpack_and_patch "$version" stock "$tarball" "$tree"
        configure_lab "$tree"
        verify_config "$tree/.config" "$version"
        echo "check: $version: make prepare" >&2
        nice -n 10 make -s -C "$tree" ARCH=x86_64 -j2 prepare >&2
        echo "$want" > "$tree/.ntscope-check-base"
    fi
}

check_version_tree() {
    local version=$1 tarball tree p t0 patches tmp
    t0=$(date +%s)
    tarball=$(ensure_source_tarball "$version")
    tree="$KERNELS_DIR/check-$version"
    mkdir -p "$KERNELS_DIR"
    exec 8>"$tree.lock"; flock 8
    prepare_tree "$version" "$tarball" "$tree"
    mapfile -t patches < <(series_patches "$version")
    [ "${#patches[@]}" -gt 0 ] || { echo "check: $version: series is empty" >&2; return 1; }

    # 1. apply: dry run of the whole series first (nothing touched on a reject).
    touch "$tree/.ntscope-dirty"
    for p in "${patches[@]}"; do
        if ! patch -p1 -d "$tree" --dry-run --quiet -F0 < "$p" >/dev/null; then
            patch -p1 -d "$tree" --dry-run -F0 < "$p" >&2 || true
            rm -f "$tree/.ntscope-dirty"
            echo "check: $version: $(basename "$p") does not apply to $tarball (see rejects above); fix: rebase it" >&2
            return 1
        fi
        patch -p1 -d "$tree" --quiet -F0 < "$p"
    done
    echo "check: $version: ${#patches[@]} patches apply cleanly"

    # 2. compile both drivers, warnings as errors.
    local ok=1
    if ! nice -n 10 make -s -C "$tree" ARCH=x86_64 -j2 KCFLAGS=-Werror $OBJECTS >&2; then
        echo "check: $version: patched $OBJECTS do not compile" >&2; ok=0
    else
        echo "check: $version: $OBJECTS compile"
    fi

    # 3. events: objects == patches == EVENTS.md.
    tmp=$(mktemp -d)
    events_in_doc > "$tmp/doc"
    events_in_patches "$version" > "$tmp/patches"
    if [ "$ok" = 1 ]; then
        events_in_objects "$tree" > "$tmp/objects"
        compare_sets "compiled objects" "$tmp/objects" "patches" "$tmp/patches" || ok=0
    fi
    compare_sets "patches ($version)" "$tmp/patches" "EVENTS.md" "$tmp/doc" || ok=0
    [ "$ok" = 0 ] || echo "check: $version: $(wc -l < "$tmp/patches") events, same in objects, patches and EVENTS.md"
    rm -rf "$tmp"

    # Restore the pristine tree (reverse order) for the next run.
    for ((i=${#patches[@]}-1; i>=0; i--)); do
        patch -p1 -R -d "$tree" --quiet < "${patches[$i]}"
    done
    rm -f "$tree/.ntscope-dirty"
    echo "check: $version: done in $(( $(date +%s) - t0 )) s"
    [ "$ok" = 1 ]
}

for v in "${versions[@]}"; do
    check_version "$v"
    check_version_tree "$v" || fail=1
done
if [ "$fail" = 1 ]; then echo "check: FAILED" >&2; exit 1; fi
echo "check: OK (${versions[*]})"
