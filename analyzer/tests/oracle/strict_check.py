#!/usr/bin/env python3
"""Was `ntscope-analyzer convert --strict`'s exit status earned?

Usage: strict_check.py OUT_DIR EXIT_STATUS

OUT_DIR is what the converter wrote (its metadata.json). Exit 0 (the status was
right) when the converter exited 0, or exited 1 and the only losses metadata.json
records are events the kernel itself lost before recording (ring-buffer overruns,
pages flagged "missed events"): those the differential test cannot see. Any other
loss on a trace libtracecmd reads whole (a skipped type with records, unknown ids,
short records, damaged pages, a skipped instance) is the converter's, and exit 1
with what it was.
"""
import json
import os
import sys


def converter_losses(md):
    """What metadata.json says the converter itself lost, one line each."""
    out = []
    for t in md.get("skipped_event_types", []):
        if t.get("records", 0) > 0:
            out.append(f"{t['records']} records of {t['system']}:{t['event']} skipped: {t['reason']}")
    for b in md.get("skipped_buffers", []):
        if b.get("bytes", 0) > 0:
            out.append(f"instance {b['name']!r} skipped: {b['reason']}")
    for ident, n in (md.get("unknown_event_ids") or {}).items():
        out.append(f"{n} records of unknown event id {ident}")
    if md.get("short_records", 0):
        out.append(f"{md['short_records']} short records")
    for c in md.get("cpus", []):
        if c.get("damaged_pages") or c.get("missing_bytes", 0):
            out.append(f"cpu {c['cpu']}: damaged pages or missing bytes")
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    out_dir, status = argv[1], int(argv[2])
    with open(os.path.join(out_dir, "metadata.json")) as f:
        md = json.load(f)
    losses = converter_losses(md)
    kernel_lost = sum(v.get("lost_events", 0) + v.get("pages_with_missed_events", 0)
                      for v in (md.get("lost_events_per_cpu") or {}).values())
    if status == 0 and not losses and not kernel_lost:
        return 0
    if status == 1 and not losses and kernel_lost:
        print(f"exit 1 for {kernel_lost} events/pages the kernel lost before recording: right")
        return 0
    print(f"exit {status}, but:" if losses else f"exit {status} with {kernel_lost} events the kernel lost")
    for line in losses:
        print("  " + line)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
