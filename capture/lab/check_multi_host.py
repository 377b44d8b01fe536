#!/usr/bin/env python3
"""Live check of a three-VM lab run (two-initiators, two-targets) after `just analyze RUN`:
every (initiator, target) pair the lab connected has its own clock offset that every
candidate command pair agrees with, (almost) every I/O is matched, no stage is negative, and
each initiator's I/O count (and each disk's, when every fio job used one disk) equals fio's.

Usage: check_multi_host.py RUN_DIR     (needs RUN_DIR/report/{report.json,io.parquet,io_stages.parquet})
Reads RUN_DIR/truth.json (lab.hosts: who connects to whom) and RUN_DIR/<host>/fio-*.json.
Prints one line per check ("ok   ..." / "FAIL ...") and exits 1 if any check failed."""
import glob
import json
import os
import sys

import pyarrow.compute as pc
import pyarrow.parquet as pq
from run_checks import Checks


def fio_ios(files):
    """(all I/Os, {disk: I/Os}) from fio's JSON output; the per-disk counts are None when a
    job's file is not one disk (a job --filename adds to a global one in fio)."""
    total, disks = 0, {}
    for f in files:
        j = json.load(open(f))
        glob_fn = (j.get("global options") or {}).get("filename")
        for job in j.get("jobs", []):
            n = job["read"]["total_ios"] + job["write"]["total_ios"]
            total += n
            own = (job.get("job options") or {}).get("filename")
            fn = own or glob_fn
            if disks is None or (own and glob_fn and own != glob_fn) or not fn or ":" in fn:
                disks = None
                continue
            disks[os.path.basename(fn)] = disks.get(os.path.basename(fn), 0) + n
    return total, disks


def main():
    check = Checks("check_multi_host.py")
    d = check.run_dir

    truth = json.load(open(os.path.join(d, "truth.json")))
    doc = json.load(open(os.path.join(d, "report", "report.json")))
    lab_hosts = (truth.get("lab") or {}).get("hosts") or {}
    want = sorted((h, c["target"]) for h, v in lab_hosts.items() for c in v.get("connects_to") or [])
    pairs = {(p["initiator_host"], p["target_host"]): p for p in doc["clock_pairs"]}
    check(sorted(pairs) == want, f"one clock offset per connected host pair: {sorted(pairs)} (lab: {want})")
    for k, p in sorted(pairs.items()):
        check(p["pairs_agreeing"] >= 0.99 * p["pairs"] and p["pairs"] > 100,
              f"{k[0]}->{k[1]}: {p['pairs_agreeing']} of {p['pairs']} candidate pairs agree with offset "
              f"{p['offset_ns']} +- {p['uncertainty_ns']} ns")
    stats = {s["name"]: s["value"] for s in doc["pipeline_stats"]}
    errors = [n for n in stats if n.startswith("input_error:")]
    check(not errors, f"no input errors ({errors})")
    check(stats.get("matched_pct", 0) >= 99, f"matched {stats.get('matched_pct')}% of initiator I/O commands (>= 99)")
    stages = pq.read_table(os.path.join(d, "report", "io_stages.parquet"), columns=["dur"])
    neg = pc.sum(pc.less(stages["dur"], 0)).as_py() or 0
    check(neg == 0, f"no negative stage ({neg} of {stages.num_rows})")
    io = pq.read_table(os.path.join(d, "report", "io.parquet"), columns=["device_key"]).to_pydict()["device_key"]
    for host in sorted(h for h, v in lab_hosts.items() if v.get("role") == "initiator"):
        total, disks = fio_ios(glob.glob(os.path.join(d, host, "fio-*.json")))
        got = sum(k.startswith(host + "/") for k in io)
        check(total > 0 and abs(got - total) <= max(8, 0.05 * total),
              f"{host}: {got} I/Os in the report ~ fio's {total}")
        for disk, n in sorted((disks or {}).items()):
            got = io.count(f"{host}/{disk}")
            check(abs(got - n) <= max(8, 0.05 * n), f"{host}/{disk}: {got} I/Os in the report ~ fio's {n}")
    return check.exit_status("check_multi_host: pass", "check_multi_host: {failed} failed")


if __name__ == "__main__":
    sys.exit(main())
