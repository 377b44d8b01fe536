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
(`trace-cmd dump --kallsyms`). A field name an event uses twice (regmap's `type`)
cannot be told apart in report -R's line and is not compared; ftrace:bprint's and
ftrace:raw_data's binary `buf` are not printed by it, nor bputs's `str` (it prints
the string there). ftrace:print's `buf` is the
rest of its line (lines that do not start an event continue the one before).
The `text` of ftrace:print, bprint and bputs is compared with what plain
`trace-cmd report` prints after the event's ip symbol. ftrace:kernel_stack's and
user_stack's `caller` (declared `caller[8]`, written with as many frames as the
stack has: report -R prints the declared 64 bytes whatever the record holds) is
compared with the frames plain `trace-cmd report` prints, `=> symbol (address)`
each (`=> address` without a symbol). Exit 0 when all agree, 1 otherwise.
"""
import bisect
import re
import subprocess
import sys

# Lines of an instance buffer start with "<instance>:" followed by blanks.
EVENT_RE = re.compile(r"^(?:(\S+):(?=\s))?\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+(\S+):\s*(.*)$")
# report -R pads some integers ("a_s16= 0") and prints empty strings as "x= y=...".
FIELD_RE = re.compile(r"(\w+)= ?(ARRAY\[[^\]]*\]|[^\s=]*)(?=\s|$)")


MESSAGE_EVENTS = ("print", "bprint", "bputs")
# Stacks: their frames as plain report prints them, one "=> symbol (address)" line each, or
# "=> address" for an address no symbol of the trace holds (a module's).
STACK_EVENTS = ("kernel_stack", "user_stack")
FRAME_RE = re.compile(r"^=> (?:.*\(([0-9a-f]+)\)|([0-9a-f]+))$", re.M)
# Binary fields report -R does not print.
NOT_PRINTED = {("bprint", "buf"), ("raw_data", "buf")}
# Pointers report -R prints as the printk string they point at.
POINTER_STRINGS = {("bputs", "str")}


def unescape(value):
    """The oracle's escaped value (\\xNN) as text, bytes that are not UTF-8 as the
    report's text has them (surrogate escapes)."""
    raw = re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]), value.encode("ascii"))
    return raw.decode("utf-8", "surrogateescape")


def lossy(text):
    """The report's text (undecodable bytes as surrogate escapes) with each ill-formed
    UTF-8 sequence replaced by U+FFFD, as the oracle prints strings."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def report_events(args):
    """(line match, text) of each event line of `trace-cmd report ARGS`; a line that does
    not start an event continues the one before (a message with newlines)."""
    out = subprocess.run(["trace-cmd", "report", *args], capture_output=True, text=True,
                         errors="surrogateescape", check=True).stdout.splitlines()
    events = []
    for line in out:
        m = EVENT_RE.match(line)
        if m:
            events.append([m, m.group(8)])
        elif events:
            events[-1][1] += "\n" + line
    return events


def byte_order(trace):
    """The trace's byte order, from its header (magic, version string, then 0 little / 1 big)."""
    with open(trace, "rb") as f:
        head = f.read(64)
    return "big" if head[head.index(b"\0", 10) + 1] == 1 else "little"


def kallsyms(trace):
    """(sorted addresses, address -> symbol names), from the kallsyms section trace-cmd
    saved in the trace."""
    out = subprocess.run(["trace-cmd", "dump", "--kallsyms", "-i", trace], capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and re.fullmatch(r"[0-9a-f]{8,16}", parts[0]):
            syms.setdefault(int(parts[0], 16), set()).add(parts[2])
    return sorted(syms), syms


def symbol_names(table, address):
    """The names of the symbols at the highest address at or below ADDRESS (report -R
    prints a pointer inside a function as the function's name)."""
    addresses, syms = table
    i = bisect.bisect_right(addresses, address)
    return syms[addresses[i - 1]] if i else set()


def bare_hex_fields(trace):
    """{(event, field)} that report -R prints as hex digits without 0x: it formats each value by
    its event's print fmt, and there the field's conversion is %x, %lx, %llx or %Lx without the #
    flag or a literal 0x before it (tcp_probe's sock_cookie=%llx: 4097 prints as 1001)."""
    out = subprocess.run(["trace-cmd", "dump", "--events", "-i", trace], capture_output=True, text=True).stdout
    found, event = set(), None
    for line in out.splitlines():
        if line.startswith("name: "):
            event = line[6:].strip()
        elif line.startswith("print fmt:") and event:
            for name in re.findall(r"(\w+)=%[-0-9.]*(?:hh|h|ll|l|L|z)?x", line):
                found.add((event, name))
    return found


def main(argv):
    if len(argv) != 3:
        print("usage: check_report_fields.py TRACECMD_DUMP TRACE.dat", file=sys.stderr)
        return 2
    dump, trace = argv[1:]
    oracle = subprocess.run([dump, trace], capture_output=True, text=True, check=True).stdout.splitlines()
    raw = {}
    nraw = 0
    for m, rest in report_events(["-R", "-i", trace]):
        buf, comm, pid, cpu, sec, usec, event, _ = m.groups()
        key = (buf or "", int(cpu), int(sec) * 1_000_000 + int(usec), event)
        text = None
        if event == "print" and " buf=" in rest:
            rest, text = rest.split(" buf=", 1)
        pairs = FIELD_RE.findall(rest)
        names = [n for n, _ in pairs]
        fields = {n: v for n, v in pairs if names.count(n) == 1 and (event, n) not in NOT_PRINTED}
        if text is not None:
            fields["buf"] = ("TEXT", text)
        raw.setdefault(key, []).append((comm.strip(), int(pid), fields))
        nraw += 1
    # The message events' text as plain `trace-cmd report` prints it.
    texts = {}
    for m, rest in report_events(["-i", trace]):
        buf, _, _, cpu, sec, usec, event, _ = m.groups()
        if event in MESSAGE_EVENTS:
            key = (buf or "", int(cpu), int(sec) * 1_000_000 + int(usec), event)
            texts.setdefault(key, []).append(rest.split(": ", 1)[1] if ": " in rest else rest)
        elif event in STACK_EVENTS:
            key = (buf or "", int(cpu), int(sec) * 1_000_000 + int(usec), event)
            texts.setdefault(key, []).append([int(a or b, 16) for a, b in FRAME_RE.findall(rest)])

    bad = checked = 0
    symbols = {}
    bare_hex = bare_hex_fields(trace)
    order = byte_order(trace)

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
        if event.split(":", 1)[1] in MESSAGE_EVENTS and event.startswith("ftrace:"):
            key = (cols[0], cpu, (ts + 500) // 1000, event.split(":", 1)[1])
            shown = (texts.get(key) or [None]).pop(0) if texts.get(key) else None
            ov = fields.get("text")
            checked += 1
            if ov is None or shown is None:
                mismatch(f"{event} ts {ts}: text oracle={ov} report={shown}")
            elif ov != "<null>" and unescape(ov) != lossy(shown):
                mismatch(f"{event} ts {ts}: text oracle={unescape(ov)!r} report={shown!r}")
        if event.split(":", 1)[1] in STACK_EVENTS and event.startswith("ftrace:"):
            key = (cols[0], cpu, (ts + 500) // 1000, event.split(":", 1)[1])
            shown = texts[key].pop(0) if texts.get(key) else None
            ov = fields.get("caller")
            frames = [int(x) for x in ov[1:-1].split(",") if x] if ov and ov.startswith("[") else None
            checked += 1
            if frames is None or shown is None or frames != shown:
                mismatch(f"{event} ts {ts}: frames oracle={frames} report={shown}")
            rfields.pop("caller", None)
        if rpid != pid:
            mismatch(f"{event} ts {ts}: pid oracle={pid} report={rpid}")
        if comm != "<...>" and rcomm != comm:
            mismatch(f"{event} ts {ts}: comm oracle={comm} report={rcomm}")
        for name, rv in rfields.items():
            ov = fields.get(name)
            checked += 1
            if ov is None:
                mismatch(f"{event}: field {name} missing in the oracle")
            elif isinstance(rv, tuple):
                # ftrace:print's buf: the line's rest, one trailing newline dropped.
                text = unescape(ov)
                if (text[:-1] if text.endswith("\n") else text) != lossy(rv[1]):
                    mismatch(f"{event} ts {ts}: {name} oracle={text!r} report={rv[1]!r}")
            elif (event.split(":", 1)[1], name) in POINTER_STRINGS:
                pass  # report -R prints the string the pointer points at (or its hex)
            elif ov.startswith("[") and re.fullmatch(r"(0x)?[0-9a-f]+", rv):
                pass  # a field of size 0 (the rest of the record): report -R reads no bytes
            elif rv.startswith("ARRAY["):
                # report -R prints the array's bytes; compare the oracle's elements as
                # bytes (in the trace's byte order) of the element size the count implies.
                rbytes = [int(x, 16) for x in rv[6:-1].split(", ") if x]
                elems = [int(x) for x in ov[1:-1].split(",") if x] if ov.startswith("[") else None
                if elems is None:
                    # a char array of bytes that are not all printable: the text up to
                    # the first NUL, as the oracle prints strings
                    text = bytes(rbytes).split(b"\0", 1)[0].decode("utf-8", "replace")
                    if text != unescape(ov):
                        mismatch(f"{event} ts {ts}: {name} oracle={ov} report={rv}")
                    continue
                size = len(rbytes) // len(elems) if elems else 1
                obytes = [b for e in elems for b in (e % (1 << (8 * size))).to_bytes(size, order)]
                if obytes != rbytes:
                    mismatch(f"{event} ts {ts}: {name} oracle={ov} report={rv}")
            elif rv.startswith("0x"):
                if int(rv, 16) != int(ov):
                    mismatch(f"{event} ts {ts}: {name} oracle={ov} report={rv}")
            elif ov.startswith("["):
                pass  # a u8/s8 array that report -R printed as a string
            elif re.fullmatch(r"[0-9a-f]*[a-f][0-9a-f]*", rv) and re.fullmatch(r"\d+", ov) and int(rv, 16) == int(ov) % 2**64:
                pass  # a %lx field printed without 0x (a kprobe event's __probe_ip)
            elif rv != ov and re.fullmatch(r"[0-9]+", rv) and re.fullmatch(r"\d+", ov) and \
                    (event.rsplit(":", 1)[-1], name) in bare_hex and int(rv, 16) == int(ov) % 2**64:
                pass  # the same, all its digits decimal ones (sock_cookie 0x1001)
            elif rv != ov and re.fullmatch(r"[A-Za-z_][\w.]*", rv) and re.fullmatch(r"\d+", ov):
                # a pointer report -R printed as its symbol
                if "kallsyms" not in symbols:
                    symbols["kallsyms"] = kallsyms(trace)
                if rv not in symbol_names(symbols["kallsyms"], int(ov)):
                    mismatch(f"{event} ts {ts}: {name} oracle={ov} ({hex(int(ov))}) report={rv}")
            elif re.fullmatch(r"-?\d+", rv) and re.fullmatch(r"-?\d+", ov):
                # report -R zero-pads some fields (target_cpu=005) and prints some signed
                # 64-bit ones unsigned: the same 64 bits
                if int(rv) % 2**64 != int(ov) % 2**64:
                    mismatch(f"{event} ts {ts}: {name} oracle={ov} report={rv}")
            elif " " in unescape(ov) and unescape(ov).startswith(rv):
                pass  # a string with a space: report -R's line does not say where it ends
            elif rv != ov:
                mismatch(f"{event} ts {ts}: {name} oracle={ov} report={rv}")
    if len(oracle) != nraw:
        mismatch(f"event count: oracle {len(oracle)}, report -R {nraw}")
    print(f"{trace}: {len(oracle)} events, {checked} field values compared with trace-cmd report -R, "
          f"{bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
