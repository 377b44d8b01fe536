#!/usr/bin/env python3
"""Cross-check tracecmd_dump against `trace-cmd report -R`, field by field.

Usage: check_report_fields.py TRACECMD_DUMP TRACE.dat

`trace-cmd report -R` prints each event's fields raw ("name=value"), through
libtraceevent's printing code rather than the oracle's. Every value it prints
must equal the oracle's value of the same event (matched by cpu, timestamp
rounded to the microsecond, event name, in order). Known difference: u8/s8
arrays, which report -R prints as a string when the bytes are printable (or
empty when the first is 0) and the oracle as a list; those are compared only
when report -R prints ARRAY[..]. Pointer fields printed as a symbol (workqueue's
function=nvme_tcp_io_work) are compared through the trace's own kallsyms
(`trace-cmd dump --kallsyms`). Exit 0 when all agree, 1 otherwise.
"""
import re
import subprocess
import sys

# Lines of an instance buffer start with "<instance>:" followed by blanks.
EVENT_RE = re.compile(r"^(?:(\S+):(?=\s))?\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+(\S+):\s*(.*)$")
# report -R pads some integers ("a_s16= 0") and prints empty strings as "x= y=...".
FIELD_RE = re.compile(r"(\w+)= ?(ARRAY\[[^\]]*\]|[^\s=]*)(?=\s|$)")


def kallsyms(trace):
    """address -> symbol names, from the kallsyms section trace-cmd saved in the trace."""
    out = subprocess.run(["trace-cmd", "dump", "--kallsyms", "-i", trace], capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and re.fullmatch(r"[0-9a-f]{8,16}", parts[0]):
            syms.setdefault(int(parts[0], 16), set()).add(parts[2])
    return syms


def main(argv):
    if len(argv) != 3:
        print("usage: check_report_fields.py TRACECMD_DUMP TRACE.dat", file=sys.stderr)
        return 2
    dump, trace = argv[1:]
    oracle = subprocess.run([dump, trace], capture_output=True, text=True, check=True).stdout.splitlines()
    report = subprocess.run(["trace-cmd", "report", "-R", "-i", trace],
                            capture_output=True, text=True, check=True).stdout.splitlines()
    raw = {}
    nraw = 0
    for line in report:
        m = EVENT_RE.match(line)
        if not m:
            continue
        buf, comm, pid, cpu, sec, usec, event, rest = m.groups()
        key = (buf or "", int(cpu), int(sec) * 1_000_000 + int(usec), event)
        raw.setdefault(key, []).append((comm.strip(), int(pid), dict(FIELD_RE.findall(rest))))
        nraw += 1

    bad = checked = 0
    symbols = {}

    def mismatch(msg):
        nonlocal bad
        bad += 1
        if bad <= 10:
            print("MISMATCH " + msg)

    for line in oracle:
        cols = line.split("\t")
        cpu, ts, pid, comm, event = int(cols[1]), int(cols[2]), int(cols[3]), cols[4], cols[5]
        fields = dict(c.split("=", 1) for c in cols[6:])
        candidates = raw.get((cols[0], cpu, (ts + 500) // 1000, event.split(":", 1)[1]))
        if not candidates:
            mismatch(f"no report -R line for {line[:150]}")
            continue
        rcomm, rpid, rfields = candidates.pop(0)
        if rpid != pid:
            mismatch(f"{event} ts {ts}: pid oracle={pid} report={rpid}")
        if comm != "<...>" and rcomm != comm:
            mismatch(f"{event} ts {ts}: comm oracle={comm} report={rcomm}")
        for name, rv in rfields.items():
            ov = fields.get(name)
            checked += 1
            if ov is None:
                mismatch(f"{event}: field {name} missing in the oracle")
            elif rv.startswith("ARRAY["):
                # report -R prints the array's bytes; compare the oracle's elements as
                # little-endian bytes of the element size the byte count implies.
                rbytes = [int(x, 16) for x in rv[6:-1].split(", ") if x]
                elems = [int(x) for x in ov[1:-1].split(",") if x] if ov.startswith("[") else None
                if elems is None:
                    mismatch(f"{event} ts {ts}: {name} oracle={ov} report={rv}")
                    continue
                size = len(rbytes) // len(elems) if elems else 1
                obytes = [b for e in elems for b in (e % (1 << (8 * size))).to_bytes(size, "little")]
                if obytes != rbytes:
                    mismatch(f"{event} ts {ts}: {name} oracle={ov} report={rv}")
            elif rv.startswith("0x"):
                if int(rv, 16) != int(ov):
                    mismatch(f"{event} ts {ts}: {name} oracle={ov} report={rv}")
            elif ov.startswith("["):
                pass  # a u8/s8 array that report -R printed as a string
            elif rv != ov and re.fullmatch(r"[A-Za-z_][\w.]*", rv) and re.fullmatch(r"\d+", ov):
                # a pointer report -R printed as its symbol
                if "kallsyms" not in symbols:
                    symbols["kallsyms"] = kallsyms(trace)
                if rv not in symbols["kallsyms"].get(int(ov), set()):
                    mismatch(f"{event} ts {ts}: {name} oracle={ov} ({hex(int(ov))}) report={rv}")
            elif rv != ov:
                mismatch(f"{event} ts {ts}: {name} oracle={ov} report={rv}")
    if len(oracle) != nraw:
        mismatch(f"event count: oracle {len(oracle)}, report -R {nraw}")
    print(f"{trace}: {len(oracle)} events, {checked} field values compared with trace-cmd report -R, "
          f"{bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
