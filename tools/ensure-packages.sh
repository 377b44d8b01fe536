#!/usr/bin/env bash
# ensure-packages.sh [@GROUP | PKG]...: installs the Debian packages that are missing. @GROUP
# stands for the packages of that group in tools/apt-packages.txt (test, lab, kernel): the
# recipes that need them call this, so analysis alone needs no root. Installing needs root
# or sudo (retries while another apt holds the dpkg lock); without either, exit 2 naming the
# packages and the command to run. Nothing missing: exit 0 at once, no root needed.
set -euo pipefail
list=$(dirname "${BASH_SOURCE[0]}")/apt-packages.txt
wanted=()
for a in "$@"; do
	case "$a" in
	@*) mapfile -t -O "${#wanted[@]}" wanted < <(sed -e 's/#.*//' "$list" | awk -v g="${a#@}" \
		'NF >= 2 { n = split($2, gs, ","); for (i = 1; i <= n; i++) if (gs[i] == g) print $1 }')
	    [ "${#wanted[@]}" -gt 0 ] || { echo "ensure-packages: no package in group ${a#@} ($list)" >&2; exit 2; } ;;
	*) wanted+=("$a") ;;
	esac
done
missing=()
for p in ${wanted[@]+"${wanted[@]}"}; do
	dpkg -s "$p" >/dev/null 2>&1 || case " ${missing[*]-} " in *" $p "*) ;; *) missing+=("$p") ;; esac
done
[ "${#missing[@]}" -gt 0 ] || exit 0
if [ "$(id -u)" = 0 ]; then as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as_root=(sudo -n)
else
	echo "ntscope: this needs Debian packages that are missing: ${missing[*]}; fix: as root, apt-get install ${missing[*]} (or run this again with sudo rights)" >&2
	exit 2
fi
echo "ntscope: installing Debian packages: ${missing[*]}" >&2
for try in 1 2 3 4 5 6; do
	if DEBIAN_FRONTEND=noninteractive ${as_root[@]+"${as_root[@]}"} apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then exit 0; fi
	[ "$try" = 1 ] && { ${as_root[@]+"${as_root[@]}"} apt-get update -qq >/dev/null 2>&1 || true; continue; }
	sleep 10
done
echo "ntscope: apt-get install ${missing[*]} failed; fix: run it by hand and read its error" >&2
exit 2
