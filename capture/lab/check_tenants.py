#!/usr/bin/env python3
"""Live check of a tenants lab run (capture/scenarios/tenants.sh, tenant-files.sh) after
`just analyze RUN --tenants capture/scenarios/tenants.toml`: every I/O in its fio job's cgroup
(per-cgroup counts equal fio's per job, exactly), per-namespace counts equal fio's per device,
both namespaces on one target device, the cgroups' io.max as set, per-second rows that add up
to the counts, and the latency class missing its objective only in seconds the batch class
wrote in, with the batch class first on the shared target device.

Usage: check_tenants.py RUN_DIR     (needs RUN_DIR/report/{tenants.json,tenant_seconds.parquet})
Reads RUN_DIR/truth.json (workload: job -> cgroup, nsid), RUN_DIR/initiator/fio-*.json and
RUN_DIR/initiator/host.json. Prints one line per check ("ok   ..." / "FAIL ..."), exits 1 if any failed."""
import glob
import json
import os
import sys

import pyarrow.parquet as pq
from run_checks import Checks

DONE, FAILED = "all tenant checks passed", "FAILED {failed} check(s)"


def fio_counts(d, job):
    """fio's I/Os of a truth job: fio-<job>.json, or its bursts fio-<job><n>.json."""
    files = glob.glob(os.path.join(d, "initiator", f"fio-{job}.json")) or \
        glob.glob(os.path.join(d, "initiator", f"fio-{job}[0-9]*.json"))
    n = 0
    for f in files:
        for j in json.load(open(f)).get("jobs", []):
            n += j["read"]["total_ios"] + j["write"]["total_ios"]
    return n, len(files)


# per-second I/Os against fio's: fio logs each completion in whole milliseconds from the job's
# start, which the trace does not see. The two clocks are put together by the median of the
# differences between the n-th completions (one job, iodepth 1: the same order on both sides);
# an I/O that completed within that millisecond of a second's edge may land on either side of
# it, so a second may differ by one I/O (at most 1% or that one I/O).
RATE_TOLERANCE, RATE_SLACK_IOS = 0.01, 1


def fio_rate_check(d, job, cgroup):
    """(worst relative difference beyond the slack, [(second, tenant_seconds' I/Os, fio's)]) of
    the tenant that holds the job's cgroup: tenant_seconds.parquet's I/Os per second against
    fio's completions (iolog-<job>_clat.1.log, one line per I/O) binned in the run's seconds.
    None without the log."""
    logs = glob.glob(os.path.join(glob.escape(d), "initiator", f"iolog-{glob.escape(job)}_clat.*.log"))
    if not logs:
        return None
    fio_ms = sorted(int(line.split(",")[0]) for line in open(logs[0]) if line.strip())
    io = pq.read_table(os.path.join(d, "report", "io.parquet"),
                       columns=["cgroup", "tenant", "i:block_bio_queue", "i:nvme_setup_cmd",
                                "i:block_rq_complete"]).to_pylist()
    # tenant_seconds' origin: the run's first I/O (io_time_origin)
    t0 = min(r["i:block_bio_queue"] if r["i:block_bio_queue"] is not None else r["i:nvme_setup_cmd"] for r in io)
    mine = sorted(r["i:block_rq_complete"] for r in io if r["cgroup"] == cgroup and r["i:block_rq_complete"] is not None)
    tenants = {r["tenant"] for r in io if r["cgroup"] == cgroup}
    if len(mine) != len(fio_ms) or len(tenants) != 1:
        return 1.0, [("completions", len(mine), len(fio_ms)), ("tenants", sorted(tenants), 1)]
    diffs = sorted(ns - ms * 1_000_000 for ns, ms in zip(mine, fio_ms))
    start = diffs[len(diffs) // 2]   # fio's time zero on the trace's clock
    theirs = {}
    for ms in fio_ms:
        s = (ms * 1_000_000 + start - t0) // 1_000_000_000
        theirs[s] = theirs.get(s, 0) + 1
    (tenant,) = tenants
    ours = {r["second"]: r["ios"] for r in pq.read_table(os.path.join(d, "report", "tenant_seconds.parquet")).to_pylist()
            if r["tenant"] == tenant}
    pairs = [(s, ours.get(s, 0), theirs.get(s, 0)) for s in sorted(set(ours) | set(theirs))]
    worst = max((max(abs(a - b) - RATE_SLACK_IOS, 0) / max(b, 1) for _, a, b in pairs), default=1.0)
    return worst, pairs


def files_checks(d, truth, doc, check):
    """tenant-files: each direct file's I/Os and bytes equal fio's, the buffered file's bytes
    equal fio's writes, each file named by its path, and the buffered file's writeback counted
    for its writer's cgroup though another process submitted it."""
    by_file = {f["file"]: f for f in doc["files"]}
    io = pq.read_table(os.path.join(d, "report", "io.parquet"), columns=["cgroup", "file", "comm", "size_bytes"]).to_pylist()
    for job in truth["workload"]:
        j = json.load(open(os.path.join(d, "initiator", f"fio-{job['job']}.json")))["jobs"][0]
        ios = j["read"]["total_ios"] + j["write"]["total_ios"]
        nbytes = j["read"]["io_bytes"] + j["write"]["io_bytes"]
        f = by_file.get(job["file"])
        check(f is not None, f"file {job['file']} named by its path (files: {sorted(by_file)})")
        if f is None:
            continue
        if job["direct"]:
            check(f["ios"] == ios and f["bytes"] == nbytes,
                  f"{job['file']} (direct, {job['fs']}): {f['ios']} I/Os {f['bytes']} B, fio's {job['job']} {ios} I/Os {nbytes} B")
        else:
            check(f["bytes"] == nbytes, f"{job['file']} (buffered, {job['fs']}): {f['bytes']} B written back, fio wrote {nbytes} B")
        rows = [r for r in io if r["file"] == job["file"]]
        cgroups = sorted({r["cgroup"] for r in rows})
        comms = sorted({r["comm"] for r in rows})
        check(cgroups == [job["cgroup"]], f"{job['file']}: every I/O counts for {job['cgroup']} ({cgroups}; submitted by {comms})")
        if not job["direct"]:
            check(any(c != "fio" for c in comms), f"{job['file']}: written back by {comms}, not by fio itself: the owner counts")


def main():
    check = Checks("check_tenants.py")
    d = check.run_dir

    truth = json.load(open(os.path.join(d, "truth.json")))
    doc = json.load(open(os.path.join(d, "report", "tenants.json")))
    if truth["scenario"] == "tenant-files":
        files_checks(d, truth, doc, check)
        return check.exit_status(DONE, FAILED)
    by_cgroup = {c["cgroup"]: c for c in doc["cgroups"]}
    per_ns = {}
    for job in truth["workload"]:
        want, files = fio_counts(d, job["job"])
        got = by_cgroup.get(job["cgroup"], {}).get("ios")
        check(files > 0 and got == want, f"cgroup {job['cgroup']}: {got} I/Os, fio's {job['job']} did {want} ({files} file(s))")
        per_ns[job["nsid"]] = per_ns.get(job["nsid"], 0) + want
    rate = fio_rate_check(d, "latency", "/latency")
    if rate is not None:
        worst, pairs = rate
        check(worst <= RATE_TOLERANCE, f"latency: tenant_seconds' I/Os per second against fio's completions: beyond "
                                       f"{RATE_SLACK_IOS} I/O within {worst:.1%} (at most {RATE_TOLERANCE:.0%}; second, "
                                       f"ours, fio's: {pairs})")
    ns = {n["namespace"].rsplit("/ns", 1)[-1]: n for n in doc["namespaces"]}
    for nsid, want in sorted(per_ns.items()):
        got = ns.get(str(nsid), {}).get("ios")
        check(got == want, f"namespace {nsid}: {got} I/Os, fio's jobs on it did {want}")
    devices = {n["target_device"] for n in doc["namespaces"]}
    shared = (truth["injected"] or {}).get("shared_device", {})
    check(len(devices) == 1 and all(n["namespaces_on_device"] == len(shared.get("namespaces", [])) for n in doc["namespaces"]),
          f"namespaces {shared.get('namespaces')} on one target device: {sorted(devices)}")
    host = json.load(open(os.path.join(d, "initiator", "host.json")))
    io_max = {c["path"]: c["io_max"] for c in host["tenants"]["cgroups"]}
    for cg, setting in ((truth["injected"] or {}).get("io_max") or {}).items():
        check(setting in (io_max.get(f"/{cg}") or ""), f"host.json io.max of /{cg}: {io_max.get(f'/{cg}')!r} holds {setting}")
    secs = pq.read_table(os.path.join(d, "report", "tenant_seconds.parquet")).to_pylist()
    for t in doc["tenants"]:
        total = sum(r["ios"] for r in secs if r["tenant"] == t["tenant"])
        check(total == t["ios"], f"tenant {t['tenant']}: per-second I/Os add up to {total} (tenants.json {t['ios']})")
    classes = {c["class"]: c for c in doc["classes"]}
    lat = classes.get("latency", {"objectives": [], "blame": []})
    missed = sorted({s for o in lat["objectives"] for s in o["missed_seconds"]})
    batch_secs = {r["second"] for r in secs if r["class"] == "batch" and r["tenant"] == "bulk"}
    check(bool(missed) and set(missed) <= batch_secs,
          f"latency class missed its objective in seconds {missed}, all of them seconds the batch wrote in {sorted(batch_secs)}")
    firsts = {b["second"]: b["other"] for b in lat["blame"] if b["shared"] == "target_device" and b["blame_rank"] == 1}
    check(bool(missed) and all(firsts.get(s) == "batch" for s in missed),
          f"in each missed second the batch class moved the most bytes on the shared target device: {firsts}")
    return check.exit_status(DONE, FAILED)


if __name__ == "__main__":
    sys.exit(main())
