#!/usr/bin/env bash
# Shows that check.sh can fail: runs it on broken copies of kernel-patches/
# (6.1 only, using the cached check tree) and expects each to fail with the
# right message. Exit 0 when every broken copy was caught.
set -euo pipefail
KP_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fail=0

# expect_failure NAME PATTERN MUTATION...: copy, mutate, run, check.
expect_failure() {
    local name=$1 pattern=$2; shift 2
    local tmp; tmp=$(mktemp -d)
    cp -r "$KP_DIR" "$tmp/kp"
    (cd "$tmp/kp" && eval "$@")
    if bash "$tmp/kp/check.sh" 6.1 > "$tmp/out" 2>&1; then
        echo "selftest: $name: check.sh passed but should have failed" >&2; fail=1
    elif ! grep -qE "$pattern" "$tmp/out"; then
        echo "selftest: $name: check.sh failed without the expected message /$pattern/:" >&2
        tail -5 "$tmp/out" >&2; fail=1
    else
        echo "selftest: $name: caught ($(grep -E "$pattern" "$tmp/out" | head -1))"
    fi
    rm -rf "$tmp"
}

expect_failure "event missing from EVENTS.md" \
    'in patches \(6\.1\) but not in EVENTS\.md: nvmet_tcp_try_recv_data' \
    "sed -i '/^### nvmet_tcp_try_recv_data\$/d' EVENTS.md"
expect_failure "EVENTS.md documents an event the patches lack" \
    'in EVENTS\.md but not in patches \(6\.1\): nvme_tcp_bogus' \
    "printf '\n### nvme_tcp_bogus\n' >> EVENTS.md"
expect_failure "patch does not apply" \
    'does not apply' \
    "sed -i '0,/^ static inline void nvme_tcp_queue_request/s//-static inline void nvme_tcp_queue_request_changed/' 6.1/0001-*.patch"
expect_failure "patch does not compile" \
    'do not compile' \
    "sed -i 's/^+\ttrace_nvme_tcp_queue_rq(queue, req);/+\ttrace_nvme_tcp_queue_rq(queue, req, 1);/' 6.1/0001-*.patch"

[ "$fail" = 0 ] && echo "selftest: OK" || { echo "selftest: FAILED" >&2; exit 1; }
