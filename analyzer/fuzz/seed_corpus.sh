#!/usr/bin/env bash
# Seeds the fuzz corpus with small real and synthetic traces (not committed).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${NTSCOPE_BIN:-${CARGO_TARGET_DIR:-$(bash "$here/../../tools/checkout-cache.sh")/target}/release/ntscope-analyzer}
mkdir -p "$here/corpus/decode"
for v in "6 none" "7 none" "7 zstd" "7 zlib"; do
    set -- $v
    "$bin" synth known --version "$1" --codec "$2" --cpus 2 --events 40 --instance --out "$here/corpus/decode/known-v$1-$2"
done
# ftrace print / bprint / bputs with kallsyms and printk formats, odd names, byte arrays;
# big-endian and 32-bit layouts.
for v in "7 none little 8" "6 none big 4"; do
    set -- $v
    "$bin" synth classes --version "$1" --codec "$2" --endian "$3" --long-size "$4" --out "$here/corpus/decode/classes-v$1-$3-$4"
done
