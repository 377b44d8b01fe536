#!/usr/bin/env python3
"""Live checks of the capture's probes (capture key probes=) against the patched events.

  check_probes.py agreement RUN [--min-pct 95] [--min-cover 99] [--rel 0.05] [--abs-us 30]
                    [--issue-abs-us 5] [--min-ios 50]
      RUN was recorded on a patched kernel with probes=on: every I/O is measured twice, its
      NVMe/TCP milestones from the patched events and from the probes (ntscope analyze
      --milestones tracepoint / probe). Per ntprof stage, at least MIN_COVER % of the I/Os the
      patched events measure must be measured by the probes too, and MIN_PCT % agree within
      max(REL x the patched duration, ABS_US). The share within the native bound max(5%, 5 us) is
      printed beside it: under the lab's emulation the tracepoint recorded first delays its
      probe by its own cost (2-10 us), which native hardware does in 0.1-0.3 us.
  check_probes.py means PATCHED[,PATCHED2...] PROBED[,PROBED2...] [--rel 0.10] [--abs-us 20]
                    [--spread-factor 2] [--stages a,b]
      The same scenario on the patched kernel and on a stock kernel with probes (repeats of each
      comma-separated): for every ntprof stage both measure, the means agree within
      max(REL x the patched mean, ABS_US, SPREAD_FACTOR x the larger difference between one
      side's own repeats): under the lab's emulation on a shared host, runs of one scenario on
      one kernel differ by far more than 10% in the network and queueing stages (a vCPU waits
      milliseconds for the host), so there a difference counts only beyond what the lab shows
      between its own repeats; the quiet stages are held to max(REL, ABS_US).

Prints one line per stage and a last line "ok ..." or "FAIL ..."; exit 0 when the check holds,
1 when not, 2 when a run cannot be read. The durations come from the analysis' own io_stages
view (sql/core/stages.sql); this script only compares them.
"""
import argparse
import os
import sys



def stage_durations(run, milestones):
    """{(io_id, stage): dur_ns} of the ntprof set, and the run's milestone sources per host."""
    from ntscope.common import runs
    from ntscope.sql import views
    runs.convert_missing(run, quiet=True)
    con = views.connect(run, milestones=milestones)
    sources = dict(con.execute("SELECT host, source FROM host_milestones").fetchall())
    durs = {(i, s): d for i, s, d in con.execute(
        "SELECT io_id, stage, dur FROM io_stages WHERE stage_set = 'ntprof' AND stage <> 'end_to_end'").fetchall()}
    order = [r[0] for r in con.execute(
        "SELECT stage FROM stage_definitions WHERE stage_set = 'ntprof' AND stage <> 'end_to_end' ORDER BY seq").fetchall()]
    con.close()
    return durs, sources, order


def agreement(a):
    tp, tp_src, order = stage_durations(a.run, "tracepoint")
    pr, pr_src, _ = stage_durations(a.run, "probe")
    if set(tp_src.values()) != {"tracepoint"} or set(pr_src.values()) != {"probe"}:
        print(f"FAIL {a.run} did not record both on every host: patched events {tp_src}, probes {pr_src} "
              "(record on a patched kernel with probes=on)")
        return 1
    bad = []
    for stage in order:
        ios = [k for k, d in tp.items() if k[1] == stage and d is not None]
        both = [k for k in ios if pr.get(k) is not None]

        def within(abs_us):
            return sum(1 for k in both if abs(pr[k] - tp[k]) <= max(a.rel * abs(tp[k]), abs_us * 1000))
        diffs = sorted(abs(pr[k] - tp[k]) for k in both)
        med = diffs[len(diffs) // 2] / 1000 if diffs else float("nan")
        p95 = diffs[int(len(diffs) * 0.95)] / 1000 if diffs else float("nan")
        n = len(ios)
        cover = 100.0 * len(both) / n if n else 0.0
        strict = 100.0 * within(a.issue_abs_us) / n if n else 0.0
        lab = 100.0 * within(a.abs_us) / n if n else 0.0
        ok = n >= a.min_ios and cover >= a.min_cover and lab >= a.min_pct
        print(f"{'ok  ' if ok else 'FAIL'} {stage}: {n} I/Os, {cover:.1f}% measured by the probes too; agree within "
              f"max({a.rel * 100:.0f}%, {a.abs_us:g} us): {lab:.1f}% (within max({a.rel * 100:.0f}%, "
              f"{a.issue_abs_us:g} us): {strict:.1f}%); |probe - patched| median {med:.1f} us, p95 {p95:.1f} us")
        if not ok:
            bad.append(stage)
    if bad:
        print(f"FAIL agreement {os.path.basename(a.run)}: {len(bad)} of {len(order)} stages below {a.min_pct:g}% "
              f"(or fewer than {a.min_ios} I/Os, or under {a.min_cover:g}% measured by the probes): {', '.join(bad)}")
        return 1
    print(f"ok agreement {os.path.basename(a.run)}: every ntprof stage of every I/O measured by the probes too, >= "
          f"{a.min_pct:g}% within max({a.rel * 100:.0f}%, {a.abs_us:g} us)")
    return 0


def means(a):
    """Stage means of repeats of one scenario, patched vs probed: a mean per run, a side's mean
    the mean of its runs, the sides compared within max(REL x patched mean, ABS_US,
    SPREAD_FACTOR x the larger run-to-run spread of either side's own repeats): the probes need
    not agree better than the lab agrees with itself."""
    sides = {}
    for side, runs, want in (("patched", a.patched, "tracepoint"), ("probed", a.probed, "probe")):
        per_run = []
        for run in runs.split(","):
            durs, src, order = stage_durations(run, "auto")
            if set(src.values()) != {want}:
                print(f"FAIL {run}: milestones {src} (want {want} on every host)")
                return 1
            per_run.append(durs)
        sides[side] = per_run
    wanted = a.stages.split(",") if a.stages else order

    def run_means(per_run, stage):
        out = []
        for durs in per_run:
            x = [d for (i, s), d in durs.items() if s == stage and d is not None]
            if x:
                out.append((sum(x) / len(x) / 1000, len(x)))
        return out
    bad = []
    for stage in wanted:
        pa, pr = run_means(sides["patched"], stage), run_means(sides["probed"], stage)
        if not pa or not pr:
            print(f"FAIL {stage}: measured by {'the patched runs only' if pa else 'the probed runs only' if pr else 'neither'}")
            bad.append(stage)
            continue
        ma, mb = sum(m for m, _ in pa) / len(pa), sum(m for m, _ in pr) / len(pr)
        spread = max(max(m for m, _ in pa) - min(m for m, _ in pa), max(m for m, _ in pr) - min(m for m, _ in pr))
        tol = max(a.rel * abs(ma), a.abs_us, a.spread_factor * spread)
        ok = abs(mb - ma) <= tol
        print(f"{'ok  ' if ok else 'FAIL'} {stage}: mean {ma:.1f} us patched ({', '.join(f'{m:.1f}' for m, _ in pa)}), "
              f"{mb:.1f} us probed ({', '.join(f'{m:.1f}' for m, _ in pr)}); |difference| {abs(mb - ma):.1f} us, "
              f"allowed {tol:.1f} us (max of {a.rel * 100:.0f}%, {a.abs_us:g} us, {a.spread_factor:g} x the repeats' spread {spread:.1f} us)")
        if not ok:
            bad.append(stage)
    name = f"{os.path.basename(a.patched.split(',')[0])} vs {os.path.basename(a.probed.split(',')[0])}"
    if bad:
        print(f"FAIL means {name}: {', '.join(bad)}")
        return 1
    print(f"ok means {name}: {len(wanted)} stages within max({a.rel * 100:.0f}%, {a.abs_us:g} us, {a.spread_factor:g} x the repeats' spread)")
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    ag = sub.add_parser("agreement")
    ag.add_argument("run")
    ag.add_argument("--min-pct", type=float, default=95.0)
    ag.add_argument("--min-cover", type=float, default=99.0)
    ag.add_argument("--rel", type=float, default=0.05)
    # natively the bound is max(5%, 5 us); under the lab's emulation a tracepoint and its probe
    # are 2-10 us apart at the median (the one recorded first delays the other by its own cost)
    # and up to 30 us at p95 on a loaded 2-core host (a vCPU descheduled between the two)
    ag.add_argument("--abs-us", type=float, default=30.0)
    ag.add_argument("--issue-abs-us", type=float, default=5.0)
    ag.add_argument("--min-ios", type=int, default=50)
    mn = sub.add_parser("means")
    mn.add_argument("patched")
    mn.add_argument("probed")
    mn.add_argument("--rel", type=float, default=0.10)
    mn.add_argument("--abs-us", type=float, default=20.0)
    mn.add_argument("--spread-factor", type=float, default=2.0)
    mn.add_argument("--stages", default=None)
    a = ap.parse_args(argv)
    try:
        return agreement(a) if a.cmd == "agreement" else means(a)
    except Exception as e:  # noqa: BLE001 - a run that cannot be read: say which, exit 2
        print(f"FAIL cannot read the runs: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
