#!/usr/bin/env python3
"""Check that a lab run holds the events it must, with sane counts.

Usage: check_run.py RUN_DIR [--tolerance-abs N] [--tolerance-rel F]

Reads RUN_DIR/{initiator,target}/trace.dat with `trace-cmd report` (the reference
reader), RUN_DIR/*/host.json, RUN_DIR/initiator/fio-*.json and RUN_DIR/truth.json.
Prints one line per check ("ok   ..." / "FAIL ...") and exits 1 if any check failed.
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys

EVENT_RE = re.compile(r"\s(\d+\.\d+):\s+([a-z0-9_]+):\s+(.*)$")
QID_RE = re.compile(r"\bqid=(\d+)")
CID_RE = re.compile(r"\bcid=(0x[0-9a-f]+|\d+)")
OPCODE_RE = re.compile(r"\bopcode=(0x[0-9a-f]+|\d+)")
CDW10_RE = re.compile(r"\bcdw10=(ARRAY\[[^]]*\])")
BLK_RE = re.compile(r"^(\d+,\d+) \S+ .*?(\d+) \+ \d+")
CMD_EVENTS = ("nvme_setup_cmd", "nvme_complete_rq", "nvmet_req_init", "nvmet_req_complete")


def intval(text):
    return int(text, 16) if text.startswith("0x") else int(text)


def read_events(trace):
    """Counts per event name and, for nvme/nvmet command events, per qid. Also fills
    CIDS[trace] (event -> command ids) and KEYS[trace] (I/O submits: (qid, cid, opcode,
    cdw10) -> count) for the sampling checks."""
    out = subprocess.run(["trace-cmd", "report", "-i", trace], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"check_run: trace-cmd report -i {trace} failed: {out.stderr.strip()}")
    counts = collections.Counter()
    per_qid = collections.defaultdict(collections.Counter)
    lost = 0
    spans = collections.defaultdict(list)  # event -> [(ts_ns, key)] for latency checks
    cids = CIDS[trace] = collections.defaultdict(list)
    keys = KEYS[trace] = collections.Counter()
    for line in out.stdout.splitlines():
        if "events lost" in line.lower() or "lost events" in line.lower():
            lost += 1
        m = EVENT_RE.search(line)
        if not m:
            continue
        name = m.group(2)
        counts[name] += 1
        ts = round(float(m.group(1)) * 1e9)
        cm = CID_RE.search(m.group(3))
        if cm:
            cids[name].append(intval(cm.group(1)))
        if name in ("nvme_setup_cmd", "nvmet_req_init"):
            q, op, cdw = QID_RE.search(m.group(3)), OPCODE_RE.search(m.group(3)), CDW10_RE.search(m.group(3))
            if q and cm and int(q.group(1)) > 0 and op and cdw:
                keys[(int(q.group(1)), intval(cm.group(1)), intval(op.group(1)), cdw.group(1))] += 1
        if name in CMD_EVENTS:
            q = QID_RE.search(m.group(3))
            cid = CID_RE.search(m.group(3))
            if q:
                per_qid[name][int(q.group(1))] += 1
                if int(q.group(1)) > 0 and cid:
                    spans[name].append((ts, (int(q.group(1)), intval(cid.group(1)))))
        elif name in ("block_rq_issue", "block_rq_complete"):
            b = BLK_RE.search(m.group(3))
            if b:
                spans[name].append((ts, (b.group(1), int(b.group(2)))))
    return counts, per_qid, spans


CIDS, KEYS = {}, {}


def mean_latency_us(spans, start, end):
    """Mean start->end time (us) pairing events with the same key in order; None if no pair."""
    open_ = collections.defaultdict(collections.deque)
    total, n = 0, 0
    for ts, key, kind in sorted([(t, k, 0) for t, k in spans[start]] + [(t, k, 1) for t, k in spans[end]]):
        if kind == 0:
            open_[key].append(ts)
        elif open_[key]:
            total += ts - open_[key].popleft()
            n += 1
    return (total / n / 1000.0, n) if n else (None, 0)


def netem_delay_us(netem):
    m = re.search(r"delay\s+([\d.]+)\s*(us|ms|s)", netem or "")
    if not m:
        return None
    return float(m.group(1)) * {"us": 1, "ms": 1000, "s": 1e6}[m.group(2)]


class Checker:
    def __init__(self):
        self.failed = 0
        self.passed = 0

    def check(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        return ok


def close(a, b, abs_tol, rel_tol):
    return abs(a - b) <= max(abs_tol, rel_tol * max(a, b))


def io_count(per_qid, name):
    return sum(n for q, n in per_qid[name].items() if q > 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir")
    ap.add_argument("--tolerance-abs", type=int, default=4, help="allowed count difference (commands in flight at start/stop)")
    ap.add_argument("--tolerance-rel", type=float, default=0.02)
    a = ap.parse_args()
    d = a.run_dir.rstrip("/")
    c = Checker()
    name = os.path.basename(d)

    truth = {}
    if c.check(os.path.isfile(f"{d}/truth.json"), f"{name}: truth.json exists"):
        truth = json.load(open(f"{d}/truth.json"))
        c.check("cause" in truth and "scenario" in truth, f"{name}: truth.json has scenario and cause ({truth.get('scenario')}, {truth.get('cause')})")
    c.check(os.path.isfile(f"{d}/scenario.sh"), f"{name}: scenario.sh exists")

    ev = {}
    hosts = {}
    capture_opts = truth.get("capture") or {}  # capture keys the scenario set (filters, clock)
    filtered = any("qid" in o or "dev" in o for o in capture_opts.values())
    lossy = any(o.get("expect_lost_events") for o in capture_opts.values())
    sample_n = {r: int((capture_opts.get(r) or {}).get("sample", 1)) for r in ("initiator", "target")}
    sampled = max(sample_n.values()) > 1
    for role in ("initiator", "target"):
        t = f"{d}/{role}/trace.dat"
        if not c.check(os.path.isfile(t) and os.path.getsize(t) > 0, f"{name}: {role}/trace.dat exists"):
            return finish(c)
        hj = f"{d}/{role}/host.json"
        if c.check(os.path.isfile(hj), f"{name}: {role}/host.json exists"):
            h = json.load(open(hj))
            hosts[role] = h
            c.check(h.get("role") == role, f"{name}: {role}/host.json role is {h.get('role')!r}")
            want = capture_opts.get(role, {})
            synced = ((truth.get("lab") or {}).get("params") or {}).get("clock_sync") == "chrony"
            clock = want.get("clock", "tai" if synced else "mono")
            c.check(h.get("trace_clock") == clock, f"{name}: {role} trace clock {h.get('trace_clock')!r} (want {clock!r})")
            if synced:  # the sync's error bound reached host.json
                err = h.get("clock_max_error_ns")
                c.check(isinstance(err, int) and 0 < err < 5_000_000,
                        f"{name}: {role} host.json clock_max_error_ns {err} (chrony bound, 0 < x < 5 ms)")
            if "qid" in want:
                c.check((h.get("filters") or {}).get("qid") == want["qid"], f"{name}: {role} host.json filters.qid = {want['qid']}")
            if "buffer_kb" in want:
                c.check(h.get("buffer_kb_per_cpu") == want["buffer_kb"], f"{name}: {role} buffer_kb_per_cpu {h.get('buffer_kb_per_cpu')} = {want['buffer_kb']}")
            # the capture's own checks passed in this VM (real tracefs), with the right flavor
            pf = f"{d}/{role}/preflight.txt"
            flavor = "patched" if h.get("patched_events") else "stock"
            last = open(pf).read().strip().splitlines()[-1:] if os.path.isfile(pf) else ["(no preflight.txt)"]
            c.check(last[0].startswith(f"result: pass ({flavor}"),
                    f"{name}: {role} preflight (ntscope-capture check=1 in the VM): {last[0]!r} (want a pass, {flavor})")
            c.check((h.get("filters") or {}).get("applied") is True,
                    f"{name}: {role} the kernel applied the capture's filters (host.json filters.applied {(h.get('filters') or {}).get('applied')}, errors {(h.get('filters') or {}).get('errors')})")
            sm = h.get("sample") or {}
            c.check(sm.get("n") == sample_n[role], f"{name}: {role} host.json sample.n {sm.get('n')} = {sample_n[role]}")
            lost = h.get("lost_events", {})
            if want.get("expect_lost_events"):
                c.check(lost.get("overrun", 0) + lost.get("dropped", 0) > 0,
                        f"{name}: {role} host.json counts the lost events the scenario provokes (overrun {lost.get('overrun')}, dropped {lost.get('dropped')})")
            else:
                c.check(lost.get("overrun", 1) == 0 and lost.get("dropped", 1) == 0,
                        f"{name}: {role} lost no events (overrun {lost.get('overrun')}, dropped {lost.get('dropped')})")
        ev[role] = read_events(t)

    ic, iq = ev["initiator"][:2]
    tc, tq = ev["target"][:2]
    tol = (a.tolerance_abs, a.tolerance_rel)
    # Initiator: stock nvme + block events, balanced.
    c.check(ic["nvme_setup_cmd"] > 0, f"{name}: initiator nvme_setup_cmd present ({ic['nvme_setup_cmd']})")
    if lossy:  # events were lost on purpose: counts cannot balance
        c.check(tc["nvmet_req_init"] > 0, f"{name}: target nvmet_req_init present ({tc['nvmet_req_init']})")
        return finish(c)
    if sampled:  # completions are all recorded (see ntscope-capture: the 6.1 R2T cid), submits 1 in N
        n = sample_n["initiator"]
        c.check(close(ic["nvme_setup_cmd"] * n, ic["nvme_complete_rq"], 8 * n, 0.25),
                f"{name}: initiator nvme_setup_cmd {ic['nvme_setup_cmd']} x {n} ~ nvme_complete_rq {ic['nvme_complete_rq']} (completions unfiltered)")
    else:
        c.check(close(ic["nvme_setup_cmd"], ic["nvme_complete_rq"], *tol),
                f"{name}: initiator nvme_setup_cmd {ic['nvme_setup_cmd']} ~ nvme_complete_rq {ic['nvme_complete_rq']}")
    c.check(ic["block_rq_issue"] > 0 and close(ic["block_rq_issue"], ic["block_rq_complete"], *tol),
            f"{name}: initiator block_rq_issue {ic['block_rq_issue']} ~ block_rq_complete {ic['block_rq_complete']}")
    c.check(ic["block_bio_queue"] > 0, f"{name}: initiator block_bio_queue present ({ic['block_bio_queue']})")
    # Target: nvmet events balanced, and the backing device's block events.
    c.check(tc["nvmet_req_init"] > 0, f"{name}: target nvmet_req_init present ({tc['nvmet_req_init']})")
    c.check(close(tc["nvmet_req_init"], tc["nvmet_req_complete"], *tol),
            f"{name}: target nvmet_req_init {tc['nvmet_req_init']} ~ nvmet_req_complete {tc['nvmet_req_complete']}")
    c.check(tc["block_rq_issue"] > 0, f"{name}: target block_rq_issue (backing device) present ({tc['block_rq_issue']})")
    # Both sides saw the same I/O commands. The target records from before the connect,
    # so it also has the connect-time partition scan reads: allow a few dozen extra.
    hi, ti = io_count(iq, "nvme_setup_cmd"), io_count(tq, "nvmet_req_init")
    for role, per in (("initiator", iq), ("target", tq)):
        q = capture_opts.get(role, {}).get("qid")
        if q is not None:
            seen = sorted(set(per["nvme_setup_cmd"]) | set(per["nvmet_req_init"]))
            c.check(seen == [q], f"{name}: {role} qid filter kept only queue {q} (seen {seen})")
    # A scenario that writes before the initiator records (mkfs, fio's layout: truth.json
    # "setup_io_before_recording") gives the target any number more: only a lower bound.
    setup_io = truth.get("setup_io_before_recording")
    if not filtered and setup_io:
        c.check(hi > 0 and ti >= hi - a.tolerance_abs,
                f"{name}: I/O-queue commands: target nvmet_req_init {ti} >= initiator nvme_setup_cmd {hi} (+ {setup_io})")
    elif not filtered:
        c.check(hi > 0 and hi - a.tolerance_abs <= ti <= hi + 64 + a.tolerance_rel * hi,
                f"{name}: I/O-queue commands: target nvmet_req_init {ti} ~ initiator nvme_setup_cmd {hi} (+ connect-time reads)")

    # fio's own count of I/Os ~ the initiator's I/O commands.
    fio_ios = 0
    fio_files = sorted(glob.glob(f"{d}/initiator/fio-*.json"))
    for f in fio_files:
        try:
            j = json.load(open(f))
        except ValueError as e:
            c.check(False, f"{name}: {f} is valid JSON ({e})")
            continue
        for job in j.get("jobs", []):
            fio_ios += job["read"]["total_ios"] + job["write"]["total_ios"]
    if c.check(bool(fio_files), f"{name}: fio results present ({len(fio_files)} file(s))"):
        if sampled:
            check_sample(c, name, d, hosts, ev, sample_n, fio_ios, hi)
        elif filtered:  # a queue was filtered out: fio did more I/O than was traced
            c.check(hi > 0 and fio_ios > hi, f"{name}: fio I/Os {fio_ios} > traced (filtered) initiator commands {hi}")
        else:
            c.check(fio_ios > 0 and close(fio_ios, hi, 8, 0.05),
                    f"{name}: fio I/Os {fio_ios} ~ initiator I/O-queue nvme_setup_cmd {hi}")

    # Patched kernels: the new transport events must be there too.
    for role, sysname in (("initiator", "nvme_tcp"), ("target", "nvmet_tcp")):
        h = hosts.get(role, {})
        if h.get("patched_events"):
            names = [e for e in h.get("events", []) if e.startswith(sysname + ":")]
            n = sum(ev[role][0][e.split(":", 1)[1]] for e in names)
            c.check(n > 0, f"{name}: {role} {sysname} events recorded ({n} over {len(names)} event types)")

    # Probes (capture key probes=, lab key probes=): placed, hit, none missed, none left behind.
    lab = truth.get("lab") or {}
    for role, group in (("initiator", "ntscope_nvme_tcp"), ("target", "ntscope_nvmet_tcp")):
        h = hosts.get(role, {})
        asked = ((truth.get("capture") or {}).get(role) or {}).get("probes") or lab.get("probes")
        p = h.get("probes") or {}
        if asked == "on" or p.get("active"):
            placed = {x["event"]: x for x in p.get("placed", [])}
            milestones = sorted({m for x in placed.values() for m in x["milestones"]})
            c.check(p.get("active") is True and len(placed) >= 3,
                    f"{name}: {role} probes placed: {', '.join(placed) or 'none'} ({', '.join(milestones)})")
            hits = {e: x.get("hits") for e, x in placed.items()}
            recorded = sum(ev[role][0][e] for e in placed)
            c.check(recorded > 0, f"{name}: {role} probe events recorded ({recorded}; kernel hits {hits})")
            c.check(p.get("misses") == 0 and (h.get("lost_events") or {}).get("probe_misses") == 0,
                    f"{name}: {role} no probe hit missed (kprobe_profile: {p.get('misses')})")
        left = f"{d}/{role}/probes-left.txt"
        if os.path.isfile(left):
            lines = [x for x in open(left).read().splitlines() if x.strip()]
            c.check(not lines, f"{name}: {role} no probe left in kprobe_events after the capture ({len(lines)}: {lines[:2]})")
    cleanup = f"{d}/initiator/probe-cleanup.txt"
    if os.path.isfile(cleanup):
        for line in open(cleanup).read().splitlines():
            c.check(line.startswith("ok "), f"{name}: probe cleanup: {line}")

    # Write path (patched kernels): R2T per large write, none for in-capsule writes.
    wp = truth.get("write_path")
    fio_writes = 0
    for f in fio_files:
        try:
            fio_writes += sum(j["write"]["total_ios"] for j in json.load(open(f)).get("jobs", []))
        except ValueError:
            pass
    if wp and hosts.get("initiator", {}).get("patched_events") and hosts.get("target", {}).get("patched_events"):
        r2t_host, r2t_tgt = ev["initiator"][0]["nvme_tcp_handle_r2t"], ev["target"][0]["nvmet_tcp_setup_r2t_pdu"]
        if wp.get("in_capsule"):
            c.check(r2t_host == 0 and r2t_tgt == 0 and fio_writes > 0,
                    f"{name}: in-capsule writes: no R2T (initiator handle_r2t {r2t_host}, target setup_r2t_pdu {r2t_tgt}, fio writes {fio_writes})")
        else:
            c.check(fio_writes > 0 and r2t_host >= fio_writes - a.tolerance_abs and r2t_tgt >= fio_writes - a.tolerance_abs,
                    f"{name}: R2T writes: initiator handle_r2t {r2t_host}, target setup_r2t_pdu {r2t_tgt} >= fio writes {fio_writes}")

    # The injected knob is visible where it can be checked from counts alone.
    inj = truth.get("injected") or {}
    nq = inj.get("nvme_connect_nr_io_queues")
    used = sorted(q for q, n in iq["nvme_setup_cmd"].items() if q > 0 and n > 0)
    ctrls = hosts.get("initiator", {}).get("nvme_controllers") or []
    if nq:
        c.check(len(used) <= nq, f"{name}: initiator used {len(used)} I/O queue(s) {used} with nvme connect -i {nq}")
    if ctrls:
        c.check(all(isinstance(x.get("cntlid"), int) for x in ctrls),
                f"{name}: initiator host.json has the cntlid of each controller ({[x.get('cntlid') for x in ctrls]})")
    cpus = {w.get("cpu") for w in truth.get("workload") or [] if w.get("cpu") is not None}
    if truth.get("scenario") in ("interference-c1", "few-queues") and not nq and len(cpus) >= 2:
        c.check(len(used) >= 2, f"{name}: default connect spread I/O from CPUs {sorted(cpus)} over {len(used)} queues {used}")

    # The injected latency shows up where it was injected (raw timestamps, no analysis).
    isp, tsp = ev["initiator"][2], ev["target"][2]
    host_us, n_host = mean_latency_us(isp, "nvme_setup_cmd", "nvme_complete_rq")
    tgt_us, _ = mean_latency_us(tsp, "nvmet_req_init", "nvmet_req_complete")
    dev_us, n_dev = mean_latency_us(tsp, "block_rq_issue", "block_rq_complete")
    if host_us is not None and tgt_us is not None and dev_us is not None:
        # (R2T writes: 6.1's nvme_complete_rq shows a clobbered cid, so few pairs match)
        print(f"info {name}: mean us: initiator setup->complete {host_us:.0f} (n={n_host}), "
              f"target init->complete {tgt_us:.0f}, target device issue->complete {dev_us:.0f} (n={n_dev})")
    nsec = inj.get("null_blk_completion_nsec")
    if truth.get("cause") == "slow_device" and nsec:
        c.check(dev_us is not None and dev_us >= 0.8 * nsec / 1000,
                f"{name}: target device time {dev_us or 0:.0f} us >= 0.8 x injected {nsec / 1000:.0f} us")
    delay = netem_delay_us(inj.get("netem"))
    if delay and host_us is not None and tgt_us is not None:
        c.check(host_us - tgt_us >= 0.8 * delay,
                f"{name}: initiator minus target time {host_us - tgt_us:.0f} us >= 0.8 x netem delay {delay:.0f} us")
    if truth.get("cause") == "busy_device":
        busy = f"{d}/target/fio-local.json"
        ok = os.path.isfile(busy) and sum(j["read"]["total_ios"] + j["write"]["total_ios"]
                                                 for j in json.load(open(busy))["jobs"]) > 0
        c.check(ok, f"{name}: the target's local fio ran ({busy})")
    return finish(c)


def check_sample(c, name, d, hosts, ev, sample_n, fio_ios, hi):
    """A sampled capture: both hosts kept the same 1 in N commands (same rule, every kept
    command id follows it, the same commands on both sides), about 1/N of fio's I/Os, on
    tags of every kind (the rule tests the generation counter, not the tag), all block
    requests and initiator completions, and host.json's I/O counters saw fio's I/Os."""
    n = sample_n["initiator"]
    c.check(sample_n["initiator"] == sample_n["target"], f"{name}: same sample on both hosts ({sample_n})")
    # the counter bits 12-15 (every Nth use of each tag); above 16 also the tag's low bits
    mask = (n - 1) << 12 if n <= 16 else 0xf000 | (n // 16 - 1)
    for role in ("initiator", "target"):
        t = f"{d}/{role}/trace.dat"
        sm = hosts.get(role, {}).get("sample") or {}
        c.check(sm.get("mask") == mask and sm.get("rule") == f"cid & {mask:#x} == 0"
                and sm.get("kernel_filter") == f"!(cid & {mask})",
                f"{name}: {role} host.json sample mask {sm.get('mask')}, rule {sm.get('rule')!r}, "
                f"kernel filter {sm.get('kernel_filter')!r} (want {mask:#x})")
        filtered = [e.split(":", 1)[1] for e in sm.get("filtered_events") or []]
        kept = sum(len(CIDS[t][e]) for e in filtered)
        bad = {e: sum(1 for x in CIDS[t][e] if x & mask) for e in filtered}
        bad = {e: k for e, k in bad.items() if k}
        c.check(kept > 0 and not bad,
                f"{name}: {role} every one of {kept} kept events of the {len(filtered)} filtered types has cid & {mask} == 0 (violations: {bad or 'none'})")
        dropped = [e.split(":", 1)[1] for e in sm.get("not_recorded") or []]
        c.check(all(ev[role][0][e] == 0 for e in dropped), f"{name}: {role} events left out by the sample are absent ({dropped})")
    ik, tk = KEYS[f"{d}/initiator/trace.dat"], KEYS[f"{d}/target/trace.dat"]
    common = sum((ik & tk).values())
    ni, nt = sum(ik.values()), sum(tk.values())
    c.check(ni > 0 and common >= 0.98 * ni and common >= 0.9 * nt,
            f"{name}: the same commands on both hosts: {common} of the initiator's {ni} and the target's {nt} sampled I/O "
            "submits share (qid, cid, opcode, cdw10)")
    # A tag rule (before 0.2) kept only tags that are multiples of N, a share that follows how
    # blk-mq walks its tags; the counter rule keeps commands on every tag in use.
    tags = collections.Counter(x & 0xfff for x in CIDS[f"{d}/initiator/trace.dat"]["nvme_setup_cmd"])
    off = sorted(x for x in tags if x % n)
    c.check(len(tags) >= 3 and off,
            f"{name}: the sample holds {sum(tags.values())} submits on {len(tags)} tags, {len(off)} of them "
            f"not a multiple of {n} ({off[:8]}): sampled by the counter, not by the tag")
    frac = hi / fio_ios if fio_ios else 0
    c.check(fio_ios > 0 and 0.75 / n <= frac <= 1.25 / n,
            f"{name}: sampled fraction: {hi} of fio's {fio_ios} I/Os = 1/{1 / frac if frac else 0:.2f} (want 1/{n} +- 25%)")
    ic = ev["initiator"][0]
    c.check(close(ic["block_rq_issue"], fio_ios, 8, 0.05),
            f"{name}: initiator block_rq_issue {ic['block_rq_issue']} ~ fio I/Os {fio_ios} (block events unfiltered)")
    ios = 0
    for x in hosts.get("initiator", {}).get("io_counters") or []:
        if x["dev"] == "nvme0n1":
            ios = sum(x["end"][k] - x["start"][k] for k in ("reads", "writes"))
    c.check(close(ios, fio_ios, 8, 0.02),
            f"{name}: host.json io_counters nvme0n1 reads+writes during the recording {ios} ~ fio I/Os {fio_ios} (the scale's denominator)")
    if ios and hi:
        print(f"info {name}: scale = io_counters / sampled commands = {ios} / {hi} = {ios / hi:.2f} (N = {n})")


def finish(c):
    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
