#!/usr/bin/env python3
"""Tracing overhead table from lab runs of the `overhead` scenario (capture/lab/overhead.sh).

Usage: overhead_report.py [--host-md5-seconds S] RUN_DIR... [--micro RUN_DIR...]

Per run (one kernel flavor): initiator/overhead-cpu.txt and target/overhead-cpu.txt (busy
and total jiffies and uptime before and after each fio run), initiator/fio-<tag>.json,
<role>-<tag>/trace.dat + host.json (events counted with `trace-cmd report`),
<role>/capture-<tag>.log (trace-cmd's "N bytes in size (M uncompressed)" per CPU) and
<role>/calibration.txt (guest seconds of a busybox md5sum) and target/micro.txt (the
block-only microbenchmark: fastest repetition per mode). Prints a Markdown report:
per flavor and mode the median and range over the repetitions of IOPS, latency, CPU per
I/O on each VM, events and bytes per I/O; then the cost per event and what it means at
100 k and 1 M IOPS. USER_HZ is 100 (jiffies of 10 ms)."""
import argparse
import collections
import json
import os
import re
import statistics
import subprocess
import sys

JIFFY_US = 10_000
EVENT_RE = re.compile(r"\s\d+\.\d+:\s+([a-z0-9_]+):")
RAW_RE = re.compile(r"(\d+) bytes in size \((\d+) uncompressed\)")
MODES = ("off", "full", "full-noacks", "full-notenants", "sampled", "sampled-noblock", "probes", "probes-sampled", "probes-sampled-noblock")
PROBE_GROUPS = ("ntscope_nvme_tcp", "ntscope_nvmet_tcp")


def read_cpu(path):
    """tag -> (busy_jiffies, total_jiffies, seconds) over the fio run."""
    out = {}
    if not os.path.isfile(path):
        return out
    for line in open(path):
        p = line.split()
        if len(p) != 7:
            continue
        tag, b0, t0, u0, b1, t1, u1 = p[0], *map(float, p[1:])
        out[tag] = (b1 - b0, t1 - t0, u1 - u0)
    return out


def count_events(trace):
    """event name -> count, read with trace-cmd report (the reference reader)."""
    r = subprocess.run(["trace-cmd", "report", "-i", trace], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"overhead_report: trace-cmd report -i {trace} failed: {r.stderr.strip()[:200]}")
    c = collections.Counter()
    for line in r.stdout.splitlines():
        m = EVENT_RE.search(line)
        if m:
            c[m.group(1)] += 1
    return c


def fio_stats(path):
    j = json.load(open(path))
    ios = sum(job["read"]["total_ios"] + job["write"]["total_ios"] for job in j["jobs"])
    rd = j["jobs"][0]["read"]
    pct = rd["clat_ns"].get("percentile", {})
    return {"ios": ios, "iops": sum(job["read"]["iops"] for job in j["jobs"]),
            "lat_us": rd["lat_ns"]["mean"] / 1000, "p50_us": pct.get("50.000000", 0) / 1000,
            "p99_us": pct.get("99.000000", 0) / 1000}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def rng(xs):
    xs = [x for x in xs if x is not None]
    return (min(xs), max(xs)) if xs else (None, None)


def f(x, nd=0):
    if x is None:
        return "-"
    return f"{x:,.{nd}f}"


def load_run(d):
    lab = json.load(open(f"{d}/lab/lab.json"))
    ini_cpu, tgt_cpu = read_cpu(f"{d}/initiator/overhead-cpu.txt"), read_cpu(f"{d}/target/overhead-cpu.txt")
    calib = []  # (MiB, guest seconds) of every calibration run of both VMs
    for role in ("initiator", "target"):
        if os.path.isfile(f"{d}/{role}/calibration.txt"):
            calib += [(int(a), float(b)) for a, b in
                      re.findall(r"md5sum_mib=(\d+) seconds=([\d.]+)", open(f"{d}/{role}/calibration.txt").read())]
    rows = []
    for tag in sorted(ini_cpu):
        rep, mode = tag.split("-", 1)
        fio = fio_stats(f"{d}/initiator/fio-{tag}.json")
        row = {"flavor": lab["flavor"], "kernel": lab["kernel"], "rep": rep, "mode": mode, **fio}
        for role, cpu in (("ini", ini_cpu.get(tag)), ("tgt", tgt_cpu.get(tag))):
            if cpu and fio["ios"]:
                busy, total, secs = cpu
                row[f"{role}_cpu_us_per_io"] = busy * JIFFY_US / fio["ios"]
                row[f"{role}_cpu_pct"] = 100.0 * busy / total if total else None
            host = "initiator" if role == "ini" else "target"
            hd = f"{d}/{host}-{tag}"
            if mode != "off" and os.path.isfile(f"{hd}/trace.dat"):
                ev = count_events(f"{hd}/trace.dat")
                row[f"{role}_events"] = ev
                row[f"{role}_events_per_io"] = sum(ev.values()) / fio["ios"]
                # event data only (trace-cmd's per-CPU "N bytes in size (M uncompressed)"): the
                # file's fixed part (formats, kallsyms) does not grow with the I/O rate
                log = f"{d}/{host}/capture-{tag}.log"
                sizes = RAW_RE.findall(open(log).read()) if os.path.isfile(log) else []
                comp, raw = sum(int(x) for x, _ in sizes), sum(int(y) for _, y in sizes)
                row[f"{role}_bytes_per_io"] = comp / fio["ios"] if comp else None
                row[f"{role}_raw_bytes_per_event"] = raw / sum(ev.values()) if raw and sum(ev.values()) else None
                hj = json.load(open(f"{hd}/host.json"))
                row[f"{role}_enabled"] = {e.split(":", 1)[1] for e in hj.get("events", [])}
                # the capture's probes: recorded hits are events of their group; every hit the
                # kernel counted (kprobe_profile) ran the probe, recorded or filtered out
                probes = {e.split(":", 1)[1] for e in hj.get("events", []) if e.split(":", 1)[0] in PROBE_GROUPS}
                if probes:
                    rec = sum(n for e, n in ev.items() if e in probes)
                    hits = sum(x.get("hits") or 0 for x in (hj.get("probes") or {}).get("placed", []))
                    row[f"{role}_probe_events_per_io"] = rec / fio["ios"]
                    row[f"{role}_probe_filtered_per_io"] = max(hits - rec, 0) / fio["ios"]
        rows.append(row)
    return rows, calib


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--host-md5-seconds", type=float, help="this host's (fastest) seconds for the same busybox md5sum")
    ap.add_argument("--host-md5-mib", type=int, default=32, help="MiB the host's md5sum hashed (default 32)")
    ap.add_argument("--micro", nargs="*", default=[], help="runs to take only the microbenchmark and calibration from")
    a = ap.parse_args()
    rows, calibs = [], []
    for d in a.runs:
        r, c = load_run(d.rstrip("/"))
        rows += r
        calibs += c
    for d in a.micro:
        calibs += load_run(d.rstrip("/"))[1]
    if not rows:
        raise SystemExit("overhead_report: no measurements found (initiator/overhead-cpu.txt) in " + " ".join(a.runs))
    slow = None
    if calibs and a.host_md5_seconds:
        # the guests' median (the same contention as the per-event medians) over the host's fastest
        slow = med([s / m for m, s in calibs]) / (a.host_md5_seconds / a.host_md5_mib)
    by = collections.defaultdict(list)
    for r in rows:
        by[(r["kernel"], r["flavor"], r["mode"])].append(r)
    reps = max(len(v) for v in by.values())
    print(f"### Measured (median of {reps} repetitions, [min-max]; 4 KiB randread qd 8, TCG)\n")
    print("| kernel | mode | IOPS | mean lat us | p99 us | initiator CPU us/IO | target CPU us/IO | events/IO ini + tgt | trace.dat event bytes/IO ini + tgt |")
    print("|---|---|---|---|---|---|---|---|---|")
    keys = sorted(by, key=lambda k: (k[0], k[1], MODES.index(k[2]) if k[2] in MODES else 9))
    for k in keys:
        v = by[k]

        def cell(key, nd=0):
            lo, hi = rng([x.get(key) for x in v])
            return f"{f(med([x.get(key) for x in v]), nd)} [{f(lo, nd)}-{f(hi, nd)}]"
        ev = f"{f(med([x.get('ini_events_per_io') for x in v]), 1)} + {f(med([x.get('tgt_events_per_io') for x in v]), 1)}"
        by_ = f"{f(med([x.get('ini_bytes_per_io') for x in v]))} + {f(med([x.get('tgt_bytes_per_io') for x in v]))}"
        print(f"| {k[0]}-{k[1]} | {k[2]} | {cell('iops')} | {cell('lat_us')} | {cell('p99_us')} | "
              f"{cell('ini_cpu_us_per_io')} | {cell('tgt_cpu_us_per_io')} | {ev} | {by_} |")

    # ---- cost per event: the target's block-only microbenchmark (CPU-bound, no network).
    # The host's other load inflates whole stretches of time: each mode is compared with the
    # `off` run of the same repetition (seconds apart), and the median and quartiles of those
    # paired differences over every repetition of that kernel are reported.
    print("\n### Cost per event (target VM: synchronous 4 KiB null_blk reads on one CPU, block events only)\n")
    print("| kernel | reps | us per read, off (median) | block events/read | us per event (TCG), median [quartiles]: "
          "inline (no reader) | recorded (trace-cmd) | filtered out | native estimate ns: inline, recorded, filtered-out |")
    print("|---|---|---|---|---|---|---|---|")
    paired = collections.defaultdict(lambda: collections.defaultdict(list))
    probe_paired = collections.defaultdict(lambda: collections.defaultdict(list))
    offs, evs = collections.defaultdict(list), collections.defaultdict(list)
    for d in a.micro + a.runs:
        d = d.rstrip("/")
        path = f"{d}/target/micro.txt"
        if not os.path.isfile(path):
            continue
        lab = json.load(open(f"{d}/lab/lab.json"))
        kf = (lab["kernel"], lab["flavor"])
        reps = collections.defaultdict(dict)
        for line in open(path):
            p = line.split()
            if len(p) >= 5 and float(p[2]):
                reps[p[0]][p[1]] = (float(p[3]) * 1e6 / float(p[2]), float(p[4]) / float(p[2]))
        for r in reps.values():
            if "off" not in r:
                continue
            offs[kf].append(r["off"][0])
            for mode in ("inline", "recorded"):
                if mode in r:
                    evs[kf].append(r[mode][1])
            e = med([r[m][1] for m in ("inline", "recorded") if m in r]) or 4.0
            for mode in ("inline", "recorded", "filtered"):
                if mode in r:
                    paired[kf][mode].append((r[mode][0] - r["off"][0]) / e)
            # one probe hit per read (blk_mq_start_request), recorded or filtered out
            for mode in ("probe-recorded", "probe-filtered"):
                if mode in r:
                    probe_paired[kf][mode].append(r[mode][0] - r["off"][0])
    costs = {}

    def quart(xs):
        if len(xs) < 4:
            return (min(xs), max(xs))
        q = statistics.quantiles(xs, n=4)
        return (q[0], q[2])
    # the event path is the same kernel code in both flavors (block events, ftrace core): all
    # repetitions are pooled into one estimate ("all"), the flavors' own rows shown above it
    for kf in list(paired):
        for mode, v in paired[kf].items():
            paired[("all", "flavors")][mode] += v
        offs[("all", "flavors")] += offs[kf]
        evs[("all", "flavors")] += evs[kf]
    for kf in sorted(paired, key=lambda k: (k[0] == "all", k)):
        c = {m: med(v) for m, v in paired[kf].items()}
        if None in (c.get("inline"), c.get("recorded"), c.get("filtered")):
            continue
        costs[kf] = (c["inline"], c["recorded"], max(c["filtered"], 0.0))
        cells = []
        for mode in ("inline", "recorded", "filtered"):
            lo, hi = quart(paired[kf][mode])
            cells.append(f"{f(c[mode], 1)} [{f(lo, 1)}, {f(hi, 1)}]")
        nat = ", ".join(f(x * 1000 / slow) for x in costs[kf]) if slow else "-"
        print(f"| {kf[0]}-{kf[1]} | {len(offs[kf])} | {f(med(offs[kf]), 1)} | {f(med(evs[kf]), 2)} | "
              + " | ".join(cells) + f" | {nat} |")
    probe_costs = None
    if probe_paired:
        print("\n### Cost per probe hit (the same microbenchmark: a probe on blk_mq_start_request, once per read, "
              "reading what the capture's queue_rq probe reads: 5 dereferences)\n")
        print("| kernel | reps | us per probe hit (TCG), median [quartiles]: recorded (trace-cmd) | filtered out | "
              "native estimate ns: recorded, filtered-out |")
        print("|---|---|---|---|---|")
        pooled = collections.defaultdict(list)
        for kf in sorted(probe_paired):
            for mode, v in probe_paired[kf].items():
                pooled[mode] += v
            c = {m: med(v) for m, v in probe_paired[kf].items()}
            if None in (c.get("probe-recorded"), c.get("probe-filtered")):
                continue
            cells = []
            for mode in ("probe-recorded", "probe-filtered"):
                lo, hi = quart(probe_paired[kf][mode])
                cells.append(f"{f(c[mode], 1)} [{f(lo, 1)}, {f(hi, 1)}]")
            nat = f"{f(c['probe-recorded'] * 1000 / slow)}, {f(max(c['probe-filtered'], 0) * 1000 / slow)}" if slow else "-"
            print(f"| {kf[0]}-{kf[1]} | {len(probe_paired[kf]['probe-recorded'])} | " + " | ".join(cells) + f" | {nat} |")
        if pooled.get("probe-recorded") and pooled.get("probe-filtered"):
            probe_costs = (med(pooled["probe-recorded"]), max(med(pooled["probe-filtered"]), 0.0))
    if slow:
        gs = [s_ / m_ for m_, s_ in calibs]
        print(f"\nTCG slowdown: a busybox md5sum takes {med(gs) * 1000:.0f} ms per MiB in the guests (median of "
              f"{len(gs)} runs spread over the measurement, range {min(gs) * 1000:.0f}-{max(gs) * 1000:.0f}) and "
              f"{a.host_md5_seconds / a.host_md5_mib * 1000:.1f} ms on this host (fastest of 5): x{slow:.0f}. Native "
              "estimates divide the TCG medians by it: both guest figures carry the same contention, the host figure "
              "none. Rough: emulated kernel code is not emulated md5, so read them as +- a factor of 2.")

    # ---- what it means at real rates: events per I/O (exact, from the NVMe/TCP traces) x cost
    print("\n### At real rates (events per I/O from the NVMe/TCP runs x the pooled native cost per event)\n")
    print("| kernel | mode | side | recorded + filtered-out events/IO (probe hits included) | events recorded/s at 1 M IOPS | "
          "trace.dat MB/s at 1 M IOPS | ring buffer MB/s at 1 M IOPS | CPU cores at 100 k IOPS: in-line, with reader | at 1 M IOPS |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in keys:
        kern, flavor, mode = k
        if mode == "off" or ("all", "flavors") not in costs or not slow:
            continue
        c_inl, c_rec, c_filt = costs[("all", "flavors")]
        full = by.get((kern, flavor, "full"), [])
        for side, name in (("ini", "initiator"), ("tgt", "target")):
            v = by[k]
            rec = med([x.get(f"{side}_events_per_io") for x in v])
            if rec is None:
                continue
            # the capture's probes: recorded hits among rec, hits filtered out in the kernel apart
            p_rec = med([x.get(f"{side}_probe_events_per_io") for x in v]) or 0.0
            p_filt = med([x.get(f"{side}_probe_filtered_per_io") for x in v]) or 0.0
            filt = 0.0
            if mode != "full" and full and full[0].get(f"{side}_events") and v[0].get(f"{side}_enabled"):
                en = v[0][f"{side}_enabled"]
                fired = med([sum(n for e, n in x[f"{side}_events"].items() if e in en) / x["ios"] for x in full])
                filt = max(fired - (rec - p_rec), 0.0)
            raw = med([x.get(f"{side}_raw_bytes_per_event") for x in v])
            bpio = med([x.get(f"{side}_bytes_per_io") for x in v])
            # in-line (I/O path) and with trace-cmd's readers (recorded); the probes' hits at the
            # probe's own cost (recorded or filtered out), the rest at an event's
            pc_rec, pc_filt = probe_costs if probe_costs else (c_rec, c_filt)
            inl = ((rec - p_rec) * c_inl + filt * c_filt + p_rec * pc_rec + p_filt * pc_filt) / slow
            tot = ((rec - p_rec) * c_rec + filt * c_filt + p_rec * pc_rec + p_filt * pc_filt) / slow
            filt += p_filt
            print(f"| {kern}-{flavor} | {mode} | {name} | {f(rec, 2)} + {f(filt, 2)} | {f(rec, 2)} M | "
                  f"{f(bpio, 0)} | {f(rec * raw if raw else None, 0)} | "
                  f"{inl * 0.1:.2f}, {tot * 0.1:.2f} | {inl:.1f}, {tot:.1f} |")
    raws = [x.get(f"{s}_raw_bytes_per_event") for x in rows for s in ("ini", "tgt")]
    print(f"\nRing-buffer bytes per recorded event (trace-cmd's uncompressed size): median {f(med(raws), 1)}. "
          "MB/s at 1 M IOPS = bytes per I/O (MB = 10^6 B). Cores = I/O per s x (recorded events x cost + filtered-out "
          "events x cost) per I/O, native estimates; the first figure is the in-line cost (no reader), the second adds "
          "trace-cmd's readers as measured on a 2-vCPU guest.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
