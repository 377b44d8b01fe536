#!/usr/bin/env bash
# Build patched nvme-tcp.ko and nvmet-tcp.ko for an installed kernel, without rebuilding
# the kernel, and check them against that kernel.
#   build_modules.sh [KVER]            check, build, verify (default KVER: the running kernel)
#   build_modules.sh --check [KVER]    only the checks before building (nothing is built)
#   build_modules.sh --verify [KVER]   only the checks after building, on the built modules
# In:  /lib/modules/KVER/build (Debian/Ubuntu: linux-headers-KVER; RHEL: kernel-devel-KVER),
#      Debian's linux-source-X.Y of the same kernel (X.Y from KVER), the series; the running
#      kernel's /proc/version, module-signing state (/sys) and its installed modules.
#      Env: NTSCOPE_SIGN_KEY + NTSCOPE_SIGN_CERT: sign the modules with that key (sign-file);
#      NTSCOPE_FORCE=1: build despite a source/image version mismatch; NTSCOPE_HOST_ROOT=DIR:
#      read /proc, /sys, /etc and /lib/modules under DIR (tests: a prepared tree).
# Out: ${NTSCOPE_CACHE}/modules/KVER/{nvme-tcp.ko,nvmet-tcp.ko}
# Every failed check says what, where, the value and the fix; exit 2. Only
# drivers/nvme/{host,target} are taken from the source tarball; each .ko is built as an
# external module (Kbuild with just tcp.o) against the headers, so it links against the
# running nvme-core / nvme-fabrics / nvmet modules.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mode=build
case "${1:-}" in --check) mode=check; shift ;; --verify) mode=verify; shift ;; esac
R=${NTSCOPE_HOST_ROOT:-}
running=$(cat "$R/proc/sys/kernel/osrelease" 2>/dev/null || uname -r)
kver=${1:-$running}
case "$kver" in *[!A-Za-z0-9._+~-]* | '') die "modules: KVER '$kver' is not a kernel release name (e.g. $running)" ;; esac
kdir="$R/lib/modules/$kver/build"
work="$NTSCOPE_CACHE/modules/$kver"

# Distribution: package names in the fixes.
os=$( { sed -n 's/^ID=//p; s/^ID_LIKE=//p' "$R/etc/os-release" 2>/dev/null || true; } | tr -d '"' | tr '\n' ' ')
case " $os " in
*" ubuntu "* | *" debian "*) headers_pkg="apt-get install linux-headers-$kver" ;;
*" rhel "* | *" fedora "* | *" centos "*) headers_pkg="dnf install kernel-devel-$kver" ;;
*) headers_pkg="install the headers of $kver (Debian/Ubuntu: apt-get install linux-headers-$kver; RHEL: dnf install kernel-devel-$kver)" ;;
esac

problems=0
problem() { # problem WHAT FIX: reported, counted; the script stops after all checks
    echo "modules: error: $1" >&2
    echo "modules:   fix: $2" >&2
    problems=$((problems + 1))
}
warning() { echo "modules: WARNING: $1" >&2; [ -z "${2:-}" ] || echo "modules:   fix: $2" >&2; }
note() { echo "modules: $*" >&2; }
cfg() { # cfg CONFIG_X: its value in the headers' .config (y, m, a string, or empty when unset)
    sed -n "s/^$1=//p" "$kdir/.config" | head -n 1 | tr -d '"'
}

# ---------------------------------------------------------------- before building
pre_checks() {
    if [ ! -d "$kdir" ]; then
        problem "no headers for kernel $kver: $kdir does not exist" "$headers_pkg"
        return
    fi
    if [ ! -f "$kdir/.config" ]; then
        problem "$kdir has no .config (incomplete headers)" "reinstall them: $headers_pkg"
        return
    fi
    [ -f "$kdir/Module.symvers" ] || [ "$(cfg CONFIG_MODVERSIONS)" != y ] ||
        problem "$kdir/Module.symvers is missing but $kver uses CONFIG_MODVERSIONS: the modules would not load (symbol version CRCs)" "reinstall the headers: $headers_pkg"
    [ "$(cfg CONFIG_MODULES)" = y ] ||
        problem "$kver has no module support (CONFIG_MODULES=$(cfg CONFIG_MODULES) in $kdir/.config)" "use 'just kernel' (a whole patched kernel) instead of modules"
    local opt v
    for opt in CONFIG_NVME_TCP CONFIG_NVME_TARGET_TCP; do
        v=$(cfg "$opt")
        case "$v" in
        m) ;;
        y) problem "$opt=y in $kdir/.config: nvme-tcp is built into $kver, so a module cannot replace it" \
            "boot a kernel with $opt=m (Debian, Ubuntu and RHEL kernels have it), or use 'just kernel'" ;;
        *) problem "$opt is not set in $kdir/.config (${v:-unset}): $kver has no NVMe/TCP $( [ $opt = CONFIG_NVME_TCP ] && echo host || echo target ) driver to replace" \
            "boot a kernel built with $opt=m" ;;
        esac
    done
    for opt in CONFIG_NVME_FABRICS CONFIG_NVME_TARGET; do
        case "$(cfg "$opt")" in y | m) ;; *) problem "$opt is not set in $kdir/.config: the patched module needs it" "boot a kernel built with $opt=m" ;; esac
    done
    for opt in CONFIG_TRACEPOINTS CONFIG_EVENT_TRACING; do
        [ "$(cfg "$opt")" = y ] ||
            problem "$opt is not set in $kdir/.config (${opt#CONFIG_}=$(cfg "$opt")): the modules' events would not reach tracefs" \
                "boot a kernel built with $opt=y (distribution kernels are)"
    done
    # Compiler: kbuild warns when it differs from the kernel's; GCC plugins (RANDSTRUCT) must match.
    local kcc cc
    kcc=$(cfg CONFIG_CC_VERSION_TEXT)
    cc=$( (${CC:-gcc} --version 2>/dev/null || true) | head -n 1)
    if [ -z "$cc" ]; then
        problem "no C compiler (${CC:-gcc}) to build the modules" "install the kernel's compiler: ${kcc:-gcc} (Debian: apt-get install gcc)"
    elif [ -n "$kcc" ] && [ "${kcc##* }" != "${cc##* }" ]; then
        warning "$kver was built with '$kcc', ${CC:-gcc} is '$cc': the modules usually load, but with GCC plugins (CONFIG_RANDSTRUCT) they must match" \
            "install that compiler (Debian: apt-get install ${kcc%% *}) and build with CC=${kcc%% *} just modules"
    fi
    if [ "$kver" != "$running" ]; then
        note "building for $kver, but this machine runs $running: load the modules after booting $kver"
    fi
}

# The running kernel's Debian package version, from /proc/version ("... Debian 6.1.192-2 (...)").
image_version() {
    if [ "$kver" = "$running" ] && [ -r "$R/proc/version" ]; then
        sed -n 's/.* Debian \([0-9][^ ]*\) .*/\1/p' "$R/proc/version" | head -n 1
    elif command -v dpkg-query >/dev/null; then
        dpkg-query -W -f '${Version}' "linux-image-$kver" 2>/dev/null || true
    fi
}

# Module signing: what the kernel will do with unsigned modules.
signing_state() {
    local sig force lock sb reasons=""
    sig=$(cfg CONFIG_MODULE_SIG) force=$(cfg CONFIG_MODULE_SIG_FORCE)
    [ "$force" = y ] && reasons="$reasons CONFIG_MODULE_SIG_FORCE=y;"
    if [ "$kver" = "$running" ]; then
        [ "$(cat "$R/sys/module/module/parameters/sig_enforce" 2>/dev/null)" = Y ] && reasons="$reasons module.sig_enforce=Y;"
        lock=$(sed -n 's/.*\[\([a-z]*\)\].*/\1/p' "$R/sys/kernel/security/lockdown" 2>/dev/null)
        case "$lock" in integrity | confidentiality) reasons="$reasons lockdown=$lock;" ;; esac
        for sb in "$R"/sys/firmware/efi/efivars/SecureBoot-*; do
            [ -r "$sb" ] || continue
            [ "$(od -An -t u1 -j 4 -N 1 "$sb" | tr -d ' ')" = 1 ] && reasons="$reasons Secure Boot on;"
        done
    fi
    if [ -n "$reasons" ]; then
        echo "enforced:${reasons%;}"
    elif [ "$sig" = y ]; then
        echo "permissive"
    else
        echo "none"
    fi
}
signing_report() { # after the build: what happens when the modules are loaded
    local st ko
    st=$(signing_state)
    if [ -n "${NTSCOPE_SIGN_KEY:-}" ]; then
        for ko in "$work/nvme-tcp.ko" "$work/nvmet-tcp.ko"; do
            [ -n "$(modinfo -F signer "$ko" 2>/dev/null)" ] ||
                die "modules: $ko carries no signature although NTSCOPE_SIGN_KEY is set; fix: check sign-file's messages above"
        done
        note "ok   both modules signed by '$(modinfo -F signer "$work/nvme-tcp.ko")' ($NTSCOPE_SIGN_CERT): the kernel loads them if that key is enrolled (mokutil --import)"
    fi
    case "$st" in
    enforced:*)
        if [ -n "${NTSCOPE_SIGN_KEY:-}" ]; then
            note "module signing enforced (${st#enforced: })"
        else
            warning "$kver only loads signed modules (${st#enforced: }): insmod of these unsigned modules fails with 'Key was rejected by service' (dmesg: 'Loading of unsigned module is rejected')" \
                "sign them with a key the kernel trusts: create one (openssl req -new -x509 -newkey rsa:2048 -nodes -days 36500 -subj /CN=ntscope/ -keyout MOK.priv -outform DER -out MOK.der), enroll it (mokutil --import MOK.der, reboot, confirm in the MOK manager), then build again with NTSCOPE_SIGN_KEY=MOK.priv NTSCOPE_SIGN_CERT=MOK.der just modules; or turn Secure Boot / module.sig_enforce off"
        fi ;;
    permissive)
        note "module signing: $kver checks signatures but does not enforce them: loading an unsigned module works and taints the kernel ('module verification failed: signature and/or required key missing')" ;;
    *) note "module signing: off in $kver" ;;
    esac
}

# ---------------------------------------------------------------- after building
# The kernel's vermagic, from one of its own modules (nvme-core for the host driver's
# dependency; any installed module says the same). Empty when KVER's modules are not here.
kernel_vermagic() {
    local m f
    for m in nvme-core nvmet nvme-fabrics; do
        modinfo -b "${R:-/}" -k "$kver" -F vermagic "$m" 2>/dev/null && return
    done
    # no modules.dep (e.g. an unpacked package): the files themselves
    for f in "$R/lib/modules/$kver/kernel/drivers/nvme/host/nvme-core.ko"* "$R/lib/modules/$kver/kernel/drivers/nvme/target/nvmet.ko"*; do
        [ -f "$f" ] && modinfo -F vermagic "$f" 2>/dev/null && return
    done
    return 0
}
expected_events() { # expected_events initiator|target: the EVENTS.md event names of that side
    awk -v side="$1" '/^## Initiator: trace system/ {s = "initiator"} /^## Target: trace system/ {s = "target"}
        /^## Expected event sequences/ {s = ""} s == side && /^### / {print $2}' "$KP_DIR/EVENTS.md"
}
verify() {
    local want ko got side n_want n_got deps deps_want sys same
    want=$(kernel_vermagic)
    for ko in "$work/nvme-tcp.ko" "$work/nvmet-tcp.ko"; do
        [ -f "$ko" ] || { problem "$ko does not exist" "build it: just modules $kver"; continue; }
        got=$(modinfo -F vermagic "$ko" 2>/dev/null || true)
        if [ "${got%% *}" != "$kver" ]; then
            problem "vermagic of $ko is '$got': built for ${got%% *}, not $kver; insmod would refuse it ('Invalid module format', dmesg: 'version magic ... should be ...')" \
                "build against $kver's own headers: $headers_pkg, then just modules $kver"
        elif [ -n "$want" ] && [ "$got" != "$want" ]; then
            problem "vermagic of $ko is '$got' but $kver's modules say '$want': insmod would refuse it ('Invalid module format')" \
                "the headers must be $kver's own ($headers_pkg, the same package version as the kernel image), then just modules $kver"
        else
            same=""
            [ -n "$want" ] && same=" = the kernel vermagic (modinfo -k $kver nvme-core)"
            note "ok   vermagic of ${ko##*/}: '$got'$same"
        fi
        if [ -z "$want" ]; then
            note "     (no installed module of $kver to compare with: its linux-image package is not installed here)"
        fi
        if [ "$kver" = "$running" ] && [ -r "$R/proc/version" ] && ! grep -q "^Linux version $kver " "$R/proc/version"; then
            problem "/proc/version does not name $kver ($(head -c 80 "$R/proc/version")...)" "check uname -r and the KVER given"
        fi
        side=initiator deps_want="nvme-core,nvme-fabrics"
        [ "${ko##*/}" = nvmet-tcp.ko ] && side=target deps_want="nvmet"
        deps=$(modinfo -F depends "$ko" 2>/dev/null || true)
        case ",$deps," in
        *",${deps_want%%,*},"*) note "ok   ${ko##*/} depends on $deps" ;;
        *) problem "${ko##*/} depends on '$deps', not on ${deps_want}: it was not built against the NVMe core" "rebuild: just modules $kver" ;;
        esac
        n_want=$(expected_events "$side" | wc -l)
        sys=nvme_tcp
        [ "$side" = target ] && sys=nvmet_tcp
        n_got=$( (nm "$ko" 2>/dev/null || true) | grep -c " __tracepoint_${sys}_" || true)
        if [ "$n_got" = "$n_want" ]; then note "ok   ${ko##*/}: $n_got tracepoints (EVENTS.md: $n_want)"
        else problem "${ko##*/} has $n_got nvme*_tcp tracepoints, EVENTS.md documents $n_want" "rebuild from this repository's series: just modules $kver"; fi
    done
}

# ---------------------------------------------------------------- main
series_version=$(echo "$kver" | grep -oE '^[0-9]+\.[0-9]+' || true)
case " $SUPPORTED_VERSIONS " in
*" $series_version "*) ;;
*) problem "kernel $kver is ${series_version:-not a version}: the patch series exist for $SUPPORTED_VERSIONS only" "boot a $SUPPORTED_VERSIONS kernel, or port the series (kernel-patches/README.md)" ;;
esac

if [ "$mode" = verify ]; then
    verify
    [ "$problems" = 0 ] || die "modules: $problems problem(s) above"
    signing_report
    exit 0
fi

pre_checks
[ "$problems" = 0 ] || die "modules: $problems problem(s) above: nothing built"
if [ "$mode" = check ]; then
    note "ok   headers $kdir: CONFIG_NVME_TCP=m CONFIG_NVME_TARGET_TCP=m, tracepoints on"
    signing_report
    exit 0
fi

tarball=$(ensure_source_tarball "$series_version")
# The private structures of nvme-core/nvmet must match the running modules: on Debian the
# source package must be the same version as the kernel image.
img_ver=$(image_version)
if [ "${NTSCOPE_FORCE:-0}" != 1 ] && [ -n "$img_ver" ] && command -v dpkg-query >/dev/null; then
    src_ver=$(dpkg-query -W -f '${Version}' "linux-source-$series_version" 2>/dev/null || true)
    if [ "$img_ver" != "$src_ver" ]; then
        die "modules: kernel $kver is Debian $img_ver but linux-source-$series_version is ${src_ver:-not installed}; fix: apt-get install linux-source-$series_version=$img_ver (or NTSCOPE_FORCE=1 if you know the nvme structures match)"
    fi
fi

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
for m in host/nvme-tcp target/nvmet-tcp; do
    ko="$src/drivers/nvme/$m.ko"
    if [ -n "${NTSCOPE_SIGN_KEY:-}" ] || [ -n "${NTSCOPE_SIGN_CERT:-}" ]; then
        [ -r "${NTSCOPE_SIGN_KEY:-}" ] && [ -r "${NTSCOPE_SIGN_CERT:-}" ] ||
            die "modules: NTSCOPE_SIGN_KEY='${NTSCOPE_SIGN_KEY:-}' and NTSCOPE_SIGN_CERT='${NTSCOPE_SIGN_CERT:-}' must both be readable files; fix: give the private key and the DER certificate"
        "$kdir/scripts/sign-file" "$(cfg CONFIG_MODULE_SIG_HASH | sed 's/^$/sha256/')" "$NTSCOPE_SIGN_KEY" "$NTSCOPE_SIGN_CERT" "$ko" ||
            die "modules: $kdir/scripts/sign-file failed on $ko; fix: check the key and certificate"
    fi
    cp "$ko" "$work/${m#*/}.ko.tmp" && mv "$work/${m#*/}.ko.tmp" "$work/${m#*/}.ko"
done
echo "modules: built $work/nvme-tcp.ko and $work/nvmet-tcp.ko for $kver"
verify
[ "$problems" = 0 ] || die "modules: $problems problem(s) above: the built modules do not fit $kver"
signing_report
echo "modules: load (initiator): nvme disconnect-all; modprobe -r nvme-tcp; modprobe nvme-fabrics; insmod $work/nvme-tcp.ko"
echo "modules: load (target): remove nvmet tcp ports in configfs; modprobe -r nvmet-tcp; modprobe nvmet; insmod $work/nvmet-tcp.ko"
