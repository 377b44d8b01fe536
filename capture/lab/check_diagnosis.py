#!/usr/bin/env python3
"""Check a live diagnosis against the cause a lab scenario injected (its truth.json).

  check_diagnosis.py compare RUN_DIR [--group KEY] [--verdicts V,..] [--none-ok] [--stage STAGE
                     --change-us N --within LO,HI] [--amplified STAGE --min-lad X] [--initiator-only]
                     [--causes A,B]
  check_diagnosis.py interference RUN_DIR --size BYTES --verdict TEXT
  check_diagnosis.py sizes RUN_DIR
  check_diagnosis.py initiator-only RUN_DIR [--figures-only]

compare: reads RUN_DIR/report/compare.json (from `just compare BASE RUN_DIR`) and
RUN_DIR/truth.json. Ids, not prose: the group's verdict must be 'slower' (or one of
--verdicts); its cause_id must be the one truth.json's cause maps to (cause_ids in
sql/core/stage_definitions.sql, or truth.json's own verdict_cause_id); the stage truth.json
expects for the verdict's stage set must be the bottleneck, its detail or the most
amplified stage (for a 'faster' verdict, whose stages and cause are those that shrank most:
one of the stages whose mean grew significantly, and no cause id is compared); a network cause's direction must be truth.json's injected direction on
synchronized clocks (clock_sync), else 'unknown'. --none-ok: a 'no significant change' verdict
that names nothing (cause_id none) is right too (an injection too mild to stand out of the lab's
noise), and the other checks are not made on it. With --stage, that stage's change of
the mean must lie within [LO*N, HI*N] us (N: the injected amount, e.g. a netem delay);
with --amplified, that stage must be significant with a LAD >= X. --causes A,B: the cause id must
be one of these instead of truth.json's (a cause the traces cannot tell from another). --initiator-only: the runs
have no target folder and the verdict must be on the initiator_only stage set, where the
cause is truth's cause as the initiator alone sees it (cause_ids.initiator_only_cause_id:
the target's causes read as target_side) and the stage the set's stage of that cause.
interference: reads RUN_DIR/report/interference.json; the stream of I/O size BYTES
must have the verdict TEXT (e.g. 'shares device only').
sizes: reads RUN_DIR/report/report.json (from `just analyze`) and the fio iologs of the
initiator (RUN_DIR/*/iolog-*.txt, fio's own record of each read: offset, length); the
report's read groups by size must hold exactly fio's reads of each size (a file system
between them: fs-ext4).
initiator-only: on a run with both hosts whose initiator recorded the target's TCP ACKs, how
far the initiator-only estimates are from the target's measured stages (view
initiator_only_check): prints the figures; holds when at least a quarter of the I/Os are split
(with a 10 ms netem delay many ACKs ride on responses: 34-39% split) and the mean estimate of
the target side is within max(50%, 2 ms) of the measured mean (under a netem delay the estimate
runs 0.6-1.0 ms above the target's own stages: the ACK and the response come back apart; a
wrong split would move the injected 10 ms). A per-I/O bound does not hold under TCG: the
network's jitter between the ACK and the response is milliseconds. --figures-only: print them,
no bound (a busy target CPU or a rate limit keeps data in the target's sockets, which the
target's stages count as network and the initiator as target side or response).
STAGE is a name, or per stage set: 'ntprof:network_transmission,stock:fabric_total'.

Prints one line (what was measured) and exits 0 when every check holds, 1 otherwise,
2 when a file is missing or malformed.
"""
import argparse
import glob
import json
import os
import sys

import duckdb

from ntscope.sql import views
from ntscope.sql.views import STAGE_TABLE_SQL


def load(run_dir, name):
    path = os.path.join(run_dir, "report", name)
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"check_diagnosis: error: cannot read {path}: {e}; fix: run `just compare` / `just analyze` first",
              file=sys.stderr)
        sys.exit(2)


def pick(spec, stage_set):
    """'ntprof:network_transmission,stock:fabric_total' -> the stage of this stage set;
    a plain name is used for every set; '-' or a set not listed: no check."""
    if not spec or ":" not in spec:
        return None if spec in (None, "-") else spec
    by_set = dict(item.split(":", 1) for item in spec.split(","))
    stage = by_set.get(stage_set)
    return None if stage == "-" else stage


def read_truth(run_dir):
    try:
        with open(os.path.join(run_dir, "truth.json")) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"check_diagnosis: error: cannot read {run_dir}/truth.json: {e}; fix: run the scenario with `just lab`",
              file=sys.stderr)
        sys.exit(2)


def expected_ids(truth, stage_set=None):
    """(cause_id, direction or None, {stage_set: stage}) the verdict must give for this truth.json.
    On the initiator_only stage set (the target not traced) the cause is cause_ids'
    initiator_only_cause_id, a network cause's direction is unknown (one host) and the stage
    is the set's stage of the cause's category (est_target_side, est_round_trip)."""
    con = duckdb.connect()
    with open(STAGE_TABLE_SQL) as f:
        con.execute(f.read())
    row = con.execute("SELECT verdict_cause_id, initiator_only_cause_id FROM cause_ids WHERE cause_id = ?",
                      [truth.get("cause")]).fetchone()
    if row is None:
        print(f"check_diagnosis: error: truth.json cause {truth.get('cause')!r} is not a cause id; "
              f"fix: use one of cause_ids in {STAGE_TABLE_SQL}", file=sys.stderr)
        sys.exit(2)
    cause_id = truth.get("verdict_cause_id") or row[0]
    if stage_set == "initiator_only":
        cause_id = con.execute("SELECT initiator_only_cause_id FROM cause_ids WHERE cause_id = ?", [cause_id]).fetchone()[0]
        category = {"target_side": "target_side", "slow_network": "network", "nic_contention": "network"}.get(cause_id)
        # every stage of that category: the network's are the round trip and the response
        stages = [r[0] for r in con.execute("SELECT stage FROM stage_definitions WHERE stage_set = 'initiator_only' "
                                            "AND category = ? ORDER BY seq", [category]).fetchall()]
        direction = "unknown" if cause_id in ("slow_network", "nic_contention") else None
        return cause_id, direction, {stage_set: stages} if stages else {}
    injected = truth.get("injected") or {}
    direction = None
    if cause_id in ("slow_network", "nic_contention"):   # a network cause: its direction
        synced = injected.get("clock_sync") not in (None, "none")
        direction = injected.get("direction") if synced and injected.get("direction") else "unknown"
    return cause_id, direction, truth.get("expected_bottleneck") or {}


def truth_problems(v, stage_set, truth, grew=None):
    """What in verdict row v (a cmp_verdict row) disagrees with truth.json: the cause id, the
    direction, and the expected stage of stage_set, which must be the bottleneck, its detail
    or the most amplified stage. A "faster" verdict's stages are the ones that shrank most, so
    there the expected stage must be among `grew` (the stages whose mean grew significantly),
    when given, and its cause id and direction are not compared (what made a run faster is
    not the slowdown injected). Also used offline on the fixtures (sql/tests/test_truth_agreement.py)."""
    want_cause, want_direction, want_stage = expected_ids(truth, stage_set)
    problems = []
    # A faster verdict's cause_id names what shrank most (under TCG: whichever stage's noise
    # won, e.g. target_cpu from nvmet_tcp_completion), never the injected slowdown: with the
    # stages that grew known, the injected cause is checked there instead (below).
    faster_with_growth = v["verdict"] == "faster" and grew is not None
    if v["cause_id"] != want_cause and not faster_with_growth:
        problems.append(f"cause_id is not {want_cause}")
    if want_direction is not None and v["direction"] != want_direction and not faster_with_growth:
        problems.append(f"direction is not {want_direction}")
    stage_want = want_stage.get(stage_set)
    wants = stage_want if isinstance(stage_want, list) else [stage_want] if stage_want else []
    named = " or ".join(wants)
    if wants and faster_with_growth:
        if not set(wants) & set(grew):
            problems.append(f"{named} (truth.json, {stage_set}) did not grow significantly (verdict faster)")
    elif wants and not set(wants) & {v["bottleneck_stage"], v["detail_stage"], v["amplified_stage"]}:
        problems.append(f"{named} (truth.json, {stage_set}) is neither the bottleneck, its detail nor the most amplified stage")
    return problems


def check_compare(a):
    m = load(a.run_dir, "compare.json")
    truth = read_truth(a.run_dir)
    verdicts = [v for v in m["verdicts"] if a.group is None or v["group_key"] == a.group]
    if getattr(a, "initiator_only", False) and m["stage_set"] != "initiator_only":
        return False, f"stage set {m['stage_set']}, not initiator_only (was the target folder removed, nvme_acks recorded?)"
    if len(verdicts) != 1:
        return False, f"expected one group{' ' + a.group if a.group else ''}, found {[v['group_key'] for v in m['verdicts']]}"
    v = verdicts[0]
    problems = []
    said = f"{v['verdict']} | {v['cause_id']} | {v['bottleneck_stage']} | {v['detail_stage']} | direction {v['direction']}"
    if v["verdict"] not in a.verdicts.split(","):
        problems.append(f"verdict is not {a.verdicts}")
    mean = {r["stage"]: r for r in m["lad"] if r["group_key"] == v["group_key"] and r["statistic"] == "mean"
            and r["stage_set"] == m["stage_set"]}
    grew = {stage for stage, r in mean.items() if r["significant"] and (r["lad"] or 0) > 1}
    if a.none_ok and v["verdict"] == "no significant change" and v["cause_id"] == "none":
        return True, said + " (nothing named: accepted, --none-ok)"
    if getattr(a, "causes", None):
        if v["cause_id"] not in a.causes.split(","):
            problems.append(f"cause_id is not one of {a.causes}")
    else:
        problems += truth_problems(v, m["stage_set"], truth, grew)
    stage = pick(a.stage, m["stage_set"])
    if a.stage:
        r = mean.get(stage)
        if r is None:
            problems.append(f"no stage {a.stage} in stage set {m['stage_set']}")
        else:
            lo, hi = (float(x) for x in a.within.split(","))
            got = r["change_ns"] / 1e3
            said += f" | {stage} {got:+.0f} us (want {lo * a.change_us:.0f}..{hi * a.change_us:.0f})"
            if not lo * a.change_us <= got <= hi * a.change_us:
                problems.append(f"{stage} changed by {got:+.0f} us, outside {lo:g}..{hi:g} x {a.change_us:g} us")
    amplified = pick(a.amplified, m["stage_set"])
    if amplified:
        r = mean.get(amplified)
        if r is None:
            problems.append(f"no stage {a.amplified} in stage set {m['stage_set']}")
        else:
            said += f" | {amplified} LAD {r['lad']:.2f} [{r['lad_lo']:.2f}-{r['lad_hi']:.2f}]"
            if not (r["significant"] and r["lad"] >= a.min_lad):
                problems.append(f"{amplified} LAD {r['lad']:.2f} is not significant and >= {a.min_lad:g}")
    return not problems, said + ("" if not problems else " -- " + "; ".join(problems))


def check_interference(a):
    m = load(a.run_dir, "interference.json")
    size = {s["stream_id"]: s["size_bytes"] for s in m["streams"]}
    got = [v for v in m["stream_verdicts"] if size.get(v["stream_id"]) == a.size]
    if len(got) != 1:
        return False, f"expected one stream of {a.size} B, found {len(got)}"
    v = got[0]
    said = f"{v['stream_id']}: {v['verdict']}"
    if v["verdict"] != a.verdict:
        return False, said + f" -- expected '{a.verdict}'"
    return True, said


def fio_read_sizes(paths):
    """{length: reads} over fio v3 iologs ('<ms> <file> read <offset> <length>' lines)."""
    sizes = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                w = line.split()
                if len(w) == 5 and w[2] == "read":
                    sizes[int(w[4])] = sizes.get(int(w[4]), 0) + 1
    return sizes


def check_sizes(a):
    report = load(a.run_dir, "report.json")
    got = {}
    for g in report["groups"]:
        if g["key"].get("type") == "read" and g["key"].get("size_bytes") is not None:
            got[int(g["key"]["size_bytes"])] = got.get(int(g["key"]["size_bytes"]), 0) + g["count"]
    logs = sorted(glob.glob(os.path.join(glob.escape(a.run_dir), "*", "iolog-*.txt")))
    if not logs:
        return False, f"no fio iolog in {a.run_dir}/*/iolog-*.txt"
    want = fio_read_sizes(logs)
    wrong = {n: (got.get(n, 0), want.get(n, 0)) for n in sorted(set(got) | set(want)) if got.get(n, 0) != want.get(n, 0)}
    top = sorted(want, key=lambda n: -want[n])[:3]
    said = (f"{sum(got.values())} reads in {len(got)} sizes, fio {sum(want.values())} in {len(want)}; "
            + ", ".join(f"{n} B: {got.get(n, 0)}/{want[n]}" for n in top))
    if wrong:
        return False, said + " -- report/fio differ at " + ", ".join(f"{n} B: {r}/{f}" for n, (r, f) in list(wrong.items())[:5])
    return True, said


def check_initiator_only(a):
    con = views.connect(a.run_dir)
    try:
        cur = con.execute("SELECT * FROM initiator_only_check")
        names = [d[0] for d in cur.description]
        got = {r[0]: dict(zip(names, r)) for r in cur.fetchall()}
    finally:
        con.close()
    t = got.get("est_target_side")
    if t is None:
        return False, "no initiator-only estimate (no target, no nvme_acks, or nothing split)"
    said = "; ".join(f"{s} {r['ios']}/{r['ios_total']} split, {100 * r['within_share']:.0f}% within max(10%, 50 us), "
                     f"|diff| p50 {r['median_abs_diff_ns'] / 1e3:.0f} us, mean {r['est_mean_ns'] / 1e3:.0f} vs "
                     f"{r['measured_mean_ns'] / 1e3:.0f} us" for s, r in got.items())
    problems = []
    if getattr(a, "figures_only", False):
        return True, said + " (figures only)"
    if t["ios"] < 0.25 * t["ios_total"]:
        problems.append(f"only {t['ios']} of {t['ios_total']} I/Os split")
    if abs(t["mean_diff_ns"]) > max(0.5 * t["measured_mean_ns"], 2e6):
        problems.append(f"target side's mean estimate {t['est_mean_ns'] / 1e3:.0f} us is beyond max(50%, 2 ms) "
                        f"of the measured {t['measured_mean_ns'] / 1e3:.0f} us")
    return not problems, said + ("" if not problems else " -- " + "; ".join(problems))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="kind", required=True)
    c = sub.add_parser("compare")
    c.add_argument("run_dir")
    c.add_argument("--group")
    c.add_argument("--verdicts", default="slower", help="accepted verdicts, comma-separated")
    c.add_argument("--none-ok", action="store_true", help="a 'no significant change' naming nothing is right too")
    c.add_argument("--stage")
    c.add_argument("--change-us", type=float)
    c.add_argument("--within", default="0.7,1.3")
    c.add_argument("--amplified")
    c.add_argument("--min-lad", type=float, default=2.0)
    c.add_argument("--initiator-only", action="store_true",
                   help="the runs have no target folder: the verdict must be on the initiator_only stage set")
    c.add_argument("--causes", help="accepted cause ids, comma-separated, instead of truth.json's (no stage check then)")
    i = sub.add_parser("interference")
    i.add_argument("run_dir")
    i.add_argument("--size", type=int, required=True)
    i.add_argument("--verdict", required=True)
    z = sub.add_parser("sizes")
    z.add_argument("run_dir")
    o = sub.add_parser("initiator-only")
    o.add_argument("run_dir")
    o.add_argument("--figures-only", action="store_true", help="print the figures, hold them to no bound")
    a = p.parse_args()
    if a.kind == "compare" and a.stage and a.change_us is None:
        p.error("--stage needs --change-us")
    ok, said = {"compare": check_compare, "interference": check_interference, "sizes": check_sizes,
                "initiator-only": check_initiator_only}[a.kind](a)
    print(said)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
