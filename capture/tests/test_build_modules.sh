#!/usr/bin/env bash
# Host-side test of kernel-patches/build_modules.sh's checks, no kernel build: prepared
# trees (NTSCOPE_HOST_ROOT: /proc, /sys, /etc, /lib/modules/KVER/build/.config) for the
# checks before building (--check) and fake built modules (ELF objects with a .modinfo
# section and __tracepoint_* symbols) for the checks after building (--verify).
#   capture/tests/test_build_modules.sh      (just test-capture)
# Out: "ok ..." / "FAIL ..." lines, last line "N passed, N failed"; exit 1 on a failure.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$(dirname "$here")")
bm=$repo/kernel-patches/build_modules.sh
T=$(mktemp -d "${TMPDIR:-/tmp}/ntscope-modules-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
passed=0 failed=0
result() { if [ "$1" = ok ]; then passed=$((passed + 1)); echo "ok   $2"; else failed=$((failed + 1)); echo "FAIL $2"; fi; }
K=6.1.0-56-amd64
gcc_ver=$(gcc --version | head -n 1)
gcc_ver=${gcc_ver##* }

# tree NAME: a Debian host running $K with its headers (a good .config) and nvme-core.ko
tree() {
	local r=$T/$1
	rm -rf "$r"
	mkdir -p "$r/proc/sys/kernel" "$r/etc" "$r/sys/module/module/parameters" "$r/sys/kernel/security" \
		"$r/lib/modules/$K/build" "$r/lib/modules/$K/kernel/drivers/nvme/host" "$r/sys/firmware/efi/efivars"
	echo "$K" >"$r/proc/sys/kernel/osrelease"
	echo "Linux version $K (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-01-01)" >"$r/proc/version"
	printf 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n' >"$r/etc/os-release"
	echo N >"$r/sys/module/module/parameters/sig_enforce"
	echo "[none] integrity confidentiality" >"$r/sys/kernel/security/lockdown"
	cat >"$r/lib/modules/$K/build/.config" <<EOF
CONFIG_CC_VERSION_TEXT="gcc-12 (Debian 12.2.0-14+deb12u1) $gcc_ver"
CONFIG_MODULES=y
CONFIG_MODVERSIONS=y
CONFIG_MODULE_SIG=y
CONFIG_MODULE_SIG_HASH="sha256"
CONFIG_NVME_FABRICS=m
CONFIG_NVME_TCP=m
CONFIG_NVME_TARGET=m
CONFIG_NVME_TARGET_TCP=m
CONFIG_TRACEPOINTS=y
CONFIG_EVENT_TRACING=y
EOF
	: >"$r/lib/modules/$K/build/Module.symvers"
	fake_ko "$r/lib/modules/$K/kernel/drivers/nvme/host/nvme-core.ko" "$K SMP preempt mod_unload modversions " "" none
	echo "$r"
}
# fake_ko FILE VERMAGIC DEPENDS SYSTEM: an ELF object with .modinfo and N tracepoint symbols
fake_ko() {
	local n=0 i
	case "$4" in nvme_tcp) n=11 ;; nvmet_tcp) n=14 ;; esac
	[ -n "${FAKE_N:-}" ] && n=$FAKE_N
	{ for ((i = 0; i < n; i++)); do echo "int __tracepoint_$4_e$i;"; done; echo "int ntscope_dummy;"; } >"$T/ko.c"
	gcc -fno-common -c -o "$T/ko.o" "$T/ko.c" || return 1
	printf 'vermagic=%s\0depends=%s\0' "$2" "$3" >"$T/modinfo.bin"
	objcopy --add-section .modinfo="$T/modinfo.bin" "$T/ko.o" "$1"
}
# run NAME WANT_RC ROOT TEXT... -- ARGS: run build_modules.sh, assert the status and each text
run() {
	local name=$1 want=$2 root=$3
	shift 3
	local texts=()
	while [ "$1" != -- ]; do texts+=("$1"); shift; done
	shift
	local out rc ok=1 miss=""
	out=$(NTSCOPE_HOST_ROOT=$root NTSCOPE_CACHE=$T/cache bash "$bm" "$@" 2>&1)
	rc=$?
	[ "$rc" = "$want" ] || ok=0
	for t in "${texts[@]}"; do grep -qF -- "$t" <<<"$out" || { ok=0; miss="$miss [$t]"; }; done
	if [ $ok = 1 ]; then result ok "$name (exit $rc)"; else result FAIL "$name: exit $rc (want $want), missing:$miss
$out"; fi
}

# ---------------------------------------------------------------- before building (--check)
r=$(tree good)
run "good headers pass" 0 "$r" "ok   headers $r/lib/modules/$K/build: CONFIG_NVME_TCP=m CONFIG_NVME_TARGET_TCP=m" \
	"checks signatures but does not enforce them: loading an unsigned module works and taints the kernel" -- --check
run "unsupported kernel version" 2 "$r" "kernel 5.15.0-1-amd64 is 5.15: the patch series exist for 6.1 6.12 only" \
	"no headers for kernel 5.15.0-1-amd64" "fix: apt-get install linux-headers-5.15.0-1-amd64" -- --check 5.15.0-1-amd64
r=$(tree noheaders)
rm -rf "$r/lib/modules/$K/build"
run "no headers (Debian)" 2 "$r" "no headers for kernel $K: $r/lib/modules/$K/build does not exist" "fix: apt-get install linux-headers-$K" -- --check
printf 'ID="rhel"\nID_LIKE="fedora"\n' >"$r/etc/os-release"
run "no headers (RHEL)" 2 "$r" "fix: dnf install kernel-devel-$K" -- --check
r=$(tree builtin)
sed -i 's/^CONFIG_NVME_TCP=m/CONFIG_NVME_TCP=y/; /^CONFIG_NVME_TARGET_TCP=/d; /^CONFIG_EVENT_TRACING=/d' "$r/lib/modules/$K/build/.config"
run "config: built in, unset, no event tracing" 2 "$r" "CONFIG_NVME_TCP=y in $r/lib/modules/$K/build/.config: nvme-tcp is built into $K, so a module cannot replace it" \
	"CONFIG_NVME_TARGET_TCP is not set in $r/lib/modules/$K/build/.config (unset): $K has no NVMe/TCP target driver" \
	"CONFIG_EVENT_TRACING is not set" "3 problem(s) above: nothing built" -- --check
r=$(tree nosymvers)
rm "$r/lib/modules/$K/build/Module.symvers"
sed -i 's/^CONFIG_MODULES=y/# CONFIG_MODULES is not set/' "$r/lib/modules/$K/build/.config"
run "no Module.symvers, no module support" 2 "$r" "Module.symvers is missing but $K uses CONFIG_MODVERSIONS" "$K has no module support" -- --check
r=$(tree compiler)
sed -i 's/^CONFIG_CC_VERSION_TEXT=.*/CONFIG_CC_VERSION_TEXT="gcc-13 (Debian 13.2.0-4) 13.2.0"/' "$r/lib/modules/$K/build/.config"
run "compiler differs: warning" 0 "$r" "WARNING: $K was built with 'gcc-13 (Debian 13.2.0-4) 13.2.0'" "apt-get install gcc-13) and build with CC=gcc-13 just modules" -- --check

# module signing: what happens when the modules are loaded
r=$(tree sig)
echo Y >"$r/sys/module/module/parameters/sig_enforce"
run "sig_enforce=Y: unsigned modules refused" 0 "$r" "WARNING: $K only loads signed modules (module.sig_enforce=Y)" \
	"'Key was rejected by service'" "NTSCOPE_SIGN_KEY=MOK.priv NTSCOPE_SIGN_CERT=MOK.der just modules" -- --check
echo N >"$r/sys/module/module/parameters/sig_enforce"
echo "none [integrity] confidentiality" >"$r/sys/kernel/security/lockdown"
printf '\x06\x00\x00\x00\x01' >"$r/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
run "Secure Boot + lockdown: unsigned modules refused" 0 "$r" "only loads signed modules (lockdown=integrity; Secure Boot on)" -- --check
mkdir -p "$r/lib/modules/6.1.0-99-amd64" && cp -r "$r/lib/modules/$K/build" "$r/lib/modules/6.1.0-99-amd64/build"
run "another kernel: the running one's signing state does not apply" 0 "$r" "building for 6.1.0-99-amd64, but this machine runs $K" \
	"6.1.0-99-amd64 checks signatures but does not enforce them" -- --check 6.1.0-99-amd64
sed -i 's/^CONFIG_MODULE_SIG=y/# CONFIG_MODULE_SIG is not set/' "$r/lib/modules/$K/build/.config"
printf '\x06\x00\x00\x00\x00' >"$r/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
echo "[none] integrity confidentiality" >"$r/sys/kernel/security/lockdown"
run "signing off" 0 "$r" "module signing: off in $K" -- --check

# ---------------------------------------------------------------- after building (--verify)
r=$(tree verify)
m=$T/cache/modules/$K
mkdir -p "$m"
fake_ko "$m/nvme-tcp.ko" "$K SMP preempt mod_unload modversions " "nvme-core,nvme-fabrics" nvme_tcp
fake_ko "$m/nvmet-tcp.ko" "$K SMP preempt mod_unload modversions " "nvmet" nvmet_tcp
run "built modules fit the kernel" 0 "$r" "ok   vermagic of nvme-tcp.ko: '$K SMP preempt mod_unload modversions ' = the kernel vermagic" \
	"ok   nvme-tcp.ko depends on nvme-core,nvme-fabrics" "ok   nvme-tcp.ko: 11 tracepoints (EVENTS.md: 11)" \
	"ok   nvmet-tcp.ko: 14 tracepoints (EVENTS.md: 14)" -- --verify
fake_ko "$m/nvme-tcp.ko" "$K SMP mod_unload modversions " "nvme-core,nvme-fabrics" nvme_tcp
run "vermagic differs from the kernel's" 2 "$r" "vermagic of $m/nvme-tcp.ko is '$K SMP mod_unload modversions ' but $K's modules say '$K SMP preempt mod_unload modversions ': insmod would refuse it ('Invalid module format')" \
	"the headers must be $K's own (apt-get install linux-headers-$K" -- --verify
fake_ko "$m/nvme-tcp.ko" "6.1.0-55-amd64 SMP preempt mod_unload modversions " "nvme-core,nvme-fabrics" nvme_tcp
run "built for another release" 2 "$r" "built for 6.1.0-55-amd64, not $K" -- --verify
FAKE_N=10 fake_ko "$m/nvme-tcp.ko" "$K SMP preempt mod_unload modversions " "nvme-core,nvme-fabrics" nvme_tcp
fake_ko "$m/nvmet-tcp.ko" "$K SMP preempt mod_unload modversions " "" nvmet_tcp
run "missing tracepoint, missing dependency" 2 "$r" "nvme-tcp.ko has 10 nvme*_tcp tracepoints, EVENTS.md documents 11" \
	"nvmet-tcp.ko depends on '', not on nvmet" -- --verify
echo "Linux version 6.1.0-55-amd64 (x) #1 SMP" >"$r/proc/version"
run "/proc/version names another kernel" 2 "$r" "/proc/version does not name $K" -- --verify
rm -f "$r/lib/modules/$K/kernel/drivers/nvme/host/nvme-core.ko" "$m/nvme-tcp.ko"
run "no installed module to compare, a module missing" 2 "$r" "(no installed module of $K to compare with" "$m/nvme-tcp.ko does not exist" -- --verify

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
