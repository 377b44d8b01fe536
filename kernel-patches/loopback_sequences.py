#!/usr/bin/env python3
"""Check the nvme_tcp / nvmet_tcp event sequences of loopback_check.sh.

Input: the text of /sys/kernel/tracing/trace from the VM, with trace_marker
lines "ntscope_mark <io>" before each I/O. For each I/O, the I/O-queue
(qid != 0) events of each side must follow the sequence EVENTS.md promises
("+" = one or more consecutive chunk events), carry one command id that is
the same on both sides, agree on qid/cntlid, and their data chunks must add
up to the transfer size. Exit 1 on any mismatch, naming the I/O and the side.
"""
import re
import sys

# Mirrors "Expected event sequences" in EVENTS.md.
EXPECTED = {
    "read4k": (4096, {
        "nvme_tcp": "queue_rq queue_request try_send try_send_cmd_pdu done_send_req "
                    "handle_c2h_data recv_data+ process_nvme_cqe",
        "nvmet_tcp": "try_recv_pdu done_recv_pdu exec_read_req queue_response "
                     "setup_c2h_data_pdu try_send_data_pdu try_send_data+ "
                     "setup_response_pdu try_send_response",
    }),
    "write4k": (4096, {
        "nvme_tcp": "queue_rq queue_request try_send try_send_cmd_pdu try_send_data+ "
                    "done_send_req process_nvme_cqe",
        "nvmet_tcp": "try_recv_pdu done_recv_pdu try_recv_data+ exec_write_req "
                     "queue_response setup_response_pdu try_send_response",
    }),
    "write128k": (131072, {
        "nvme_tcp": "queue_rq queue_request try_send try_send_cmd_pdu done_send_req "
                    "handle_r2t queue_request try_send try_send_data_pdu try_send_data+ "
                    "done_send_req process_nvme_cqe",
        "nvmet_tcp": "try_recv_pdu done_recv_pdu queue_response setup_r2t_pdu try_send_r2t "
                     "try_recv_pdu done_recv_pdu handle_h2c_data_pdu try_recv_data+ "
                     "exec_write_req queue_response setup_response_pdu try_send_response",
    }),
}
# Events that move one chunk of data (their "len" fields add up to the size).
CHUNK_EVENTS = {"nvme_tcp": {"recv_data", "try_send_data"},
                "nvmet_tcp": {"try_send_data", "try_recv_data"}}

LINE = re.compile(r"^\s*\S.*?\s+\[\d+\]\s+\S+\s+([\d.]+): (\w+): (.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")


def parse(path):
    segments, current = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            _, name, rest = m.groups()
            if name == "tracing_mark_write":
                mark = re.search(r"ntscope_mark (\w+)", rest)
                current = mark.group(1) if mark else None
                segments.setdefault(current, [])
                continue
            system = "nvmet_tcp" if name.startswith("nvmet_tcp_") else \
                "nvme_tcp" if name.startswith("nvme_tcp_") else None
            if system is None or current is None:
                continue
            fields = {k: v for k, v in FIELD.findall(rest)}
            segments[current].append((system, name[len(system) + 1:], fields))
    return segments


def num(v):
    return int(v, 0)


def collapse(names, chunk_events):
    out = []
    for n in names:
        token = n + "+" if n in chunk_events else n
        if not (out and out[-1] == token and n in chunk_events):
            out.append(token)
    return out


def check_io(io, events, size, expected):
    errors, cids = [], {}
    for system, want in expected.items():
        evs = [(n, f) for s, n, f in events if s == system and num(f.get("qid", "0")) != 0]
        got = collapse([n for n, _ in evs], CHUNK_EVENTS[system])
        if got != want.split():
            errors.append(f"{io} {system}: sequence\n    got:  {' '.join(got)}\n    want: {want}")
        ids = {(num(f["cntlid"]), num(f["qid"]), num(f["cid"])) for n, f in evs
               if num(f["cid"]) != 0xffff}
        if len(ids) != 1:
            errors.append(f"{io} {system}: expected one (cntlid, qid, cid), got {sorted(ids)}")
        cids[system] = ids
        moved = sum(num(f["len"]) for n, f in evs if n in CHUNK_EVENTS[system])
        if moved != size:
            errors.append(f"{io} {system}: data chunks add up to {moved} bytes, want {size}")
        lens = {num(f["data_len"]) for n, f in evs if system == "nvme_tcp"}
        if system == "nvme_tcp" and lens != {size}:
            errors.append(f"{io} {system}: data_len values {sorted(lens)}, want {size}")
    if not errors and cids["nvme_tcp"] != cids["nvmet_tcp"]:
        errors.append(f"{io}: host (cntlid, qid, cid) {cids['nvme_tcp']} != target {cids['nvmet_tcp']}")
    return errors


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: loopback_sequences.py TRACE_TXT")
    segments = parse(sys.argv[1])
    errors = []
    for io, (size, expected) in EXPECTED.items():
        if io not in segments:
            errors.append(f"{io}: no 'ntscope_mark {io}' marker in {sys.argv[1]}")
            continue
        errs = check_io(io, segments[io], size, expected)
        errors += errs
        if not errs:
            key = next(iter({(f['cntlid'], f['qid'], f['cid']) for s, n, f in segments[io]
                             if s == "nvme_tcp" and num(f['qid']) != 0}))
            n = sum(1 for s, _, f in segments[io] if num(f.get("qid", "0")) != 0)
            print(f"loopback_check: {io}: {n} events, host and target sequences as EVENTS.md, "
                  f"cntlid={key[0]} qid={key[1]} cid={key[2]} on both sides")
    for e in errors:
        print("loopback_check: " + e, file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
