#!/usr/bin/env bash
# ensure-packages.sh PKG...: install the Debian packages that are missing (root or
# sudo; retries while another apt holds the dpkg lock). Exit 2 with the fix on failure.
set -euo pipefail
missing=""
for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
[ -n "$missing" ] || exit 0
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
echo "lab: installing Debian packages:$missing" >&2
for try in 1 2 3 4 5 6; do
	# shellcheck disable=SC2086
	if DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq $missing >/dev/null 2>&1; then exit 0; fi
	[ "$try" = 2 ] && as_root apt-get update -qq >/dev/null 2>&1 || true
	sleep 10
done
echo "lab: error: apt-get install$missing failed; fix: run it by hand and read its error" >&2
exit 2
