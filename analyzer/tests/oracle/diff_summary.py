#!/usr/bin/env python3
"""Summarise how two canonical dumps differ, per buffer/event.

Usage: diff_summary.py ONLY_IN_ORACLE ONLY_IN_CONVERTER

Inputs are the lines found on one side only (`comm -23` / `comm -13` of the
sorted dumps). For each buffer/event with differences it prints how many
lines each side has alone, then pairs lines of the same event by
(buffer, cpu, ts) and names the first differing columns/fields, so a
converter bug reads as "sector: oracle=7904 converter=7905".
"""
import sys

HEAD = ("buffer", "cpu", "ts", "pid", "comm", "event")
MAX_PAIRS = 3


def load(path):
    by_event = {}
    with open(path, encoding="ascii", errors="replace") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 6:
                continue
            key = (cols[0] + "/" if cols[0] else "") + cols[5]
            by_event.setdefault(key, []).append(cols)
    return by_event


def differences(a, b):
    """Column/field names whose values differ between two split lines."""
    out = []
    for i, name in enumerate(HEAD):
        if a[i] != b[i]:
            out.append(f"{name}: oracle={a[i]} converter={b[i]}")
    fa = dict(p.split("=", 1) if "=" in p else (p, "") for p in a[6:])
    fb = dict(p.split("=", 1) if "=" in p else (p, "") for p in b[6:])
    order_a = [p.split("=", 1)[0] for p in a[6:]]
    order_b = [p.split("=", 1)[0] for p in b[6:]]
    for name in order_a:
        if name not in fb:
            out.append(f"{name}: only in the oracle (={fa[name]})")
        elif fa[name] != fb[name]:
            out.append(f"{name}: oracle={fa[name]} converter={fb[name]}")
    for name in order_b:
        if name not in fa:
            out.append(f"{name}: only in the converter (={fb[name]})")
    if not out and order_a != order_b:
        out.append(f"field order: oracle {','.join(order_a)} / converter {','.join(order_b)}")
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    only_o, only_c = load(argv[1]), load(argv[2])
    for event in sorted(set(only_o) | set(only_c)):
        lo, lc = only_o.get(event, []), only_c.get(event, [])
        print(f"    {event}: {len(lo)} lines only in the oracle, {len(lc)} only in the converter")
        by_key = {}
        for cols in lc:
            by_key.setdefault((cols[0], cols[1], cols[2]), cols)
        shown = 0
        for cols in lo:
            other = by_key.get((cols[0], cols[1], cols[2]))
            if other is None:
                continue
            print(f"      cpu {cols[1]} ts {cols[2]}: " + "; ".join(differences(cols, other)))
            shown += 1
            if shown == MAX_PAIRS:
                break
        if shown == 0:
            if lo:
                print("      e.g. only in the oracle:    " + "\t".join(lo[0])[:300])
            if lc:
                print("      e.g. only in the converter: " + "\t".join(lc[0])[:300])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
