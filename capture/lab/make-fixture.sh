#!/usr/bin/env bash
# Copy a lab run into fixtures/NAME for git: every host's trace, host.json, fio
# results, fio iologs (iolog-*.txt) and completion logs (iolog-*_clat.N.log) and iperf3's result (iperf3.txt) (initiator, target, and
# initiator2, target2 ... of a multi-host run),
# truth.json, scenario.sh and lab/lab.json (not the consoles nor qemu logs, not
# parquet/ or report/). Refuses an existing NAME and anything over 3 MB.
#   make-fixture.sh RUN_DIR NAME
set -euo pipefail
die() { echo "make-fixture: error: $*" >&2; exit 2; }
[ $# = 2 ] || die "usage: make-fixture.sh RUN_DIR NAME"
src=${1%/} name=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fixtures=$(dirname "$(dirname "$here")")/fixtures
case "$name" in *[!A-Za-z0-9._-]* | .*) die "fixture name '$name' may only use A-Z a-z 0-9 . _ -" ;; esac
[ -f "$src/truth.json" ] || die "$src is not a lab run (no truth.json)"
for r in initiator target; do [ -s "$src/$r/trace.dat" ] || die "$src/$r/trace.dat is missing"; done
hosts=()
for d in "$src"/*/; do
	h=$(basename "$d")
	[ -s "$d/trace.dat" ] && hosts+=("$h")
done
dst="$fixtures/$name"
[ ! -e "$dst" ] || die "$dst already exists; fix: pick another NAME or remove it first"
tmp="$fixtures/.$name.tmp"
rm -rf "$tmp"
mkdir -p "$tmp/lab"
cp "$src/truth.json" "$src/scenario.sh" "$tmp/"
cp "$src/lab/lab.json" "$tmp/lab/"
for r in "${hosts[@]}"; do
	mkdir -p "$tmp/$r"
	cp "$src/$r/trace.dat" "$src/$r/host.json" "$tmp/$r/"
	cp "$src/$r"/fio-*.json "$tmp/$r/" 2>/dev/null || true
	cp "$src/$r"/iolog-*.txt "$tmp/$r/" 2>/dev/null || true
	cp "$src/$r"/iolog-*_clat.*.log "$tmp/$r/" 2>/dev/null || true
	cp "$src/$r"/iperf3.txt "$tmp/$r/" 2>/dev/null || true
done
kb=$(du -sk "$tmp" | cut -f1)
if [ "$kb" -gt 3072 ]; then rm -rf "$tmp"; die "$src is ${kb} KiB, over the 3 MiB fixture limit; fix: a shorter runtime= or lower qd="; fi
mv "$tmp" "$dst"
echo "make-fixture: $dst (${kb} KiB)"
