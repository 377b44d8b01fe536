#!/usr/bin/env python3
"""`just test`: every phase of the test suite in order, each timed; at the end a table of the
phases (seconds, result) and one JSON record of it appended to tools/test_times.jsonl (or
$BENCH_RESULTS), so where the suite's time goes is data.

  run_tests.py [--only PHASE,...] [--skip PHASE,...] [--no-record] [--list]

A phase is a `just` recipe (the recipes stay the one definition of each check). The set-up
(setup.sh) runs before `just test`: its own timing file ($checkout_cache/setup-last.json) is
read and shown as the first row when setup ended within the last 5 minutes. The lab's runs
are rows of their own (lab-test.sh writes one line per run to $LAB_TEST_TIMES). A failing phase does not stop the others, except the
converter build and the packages, which every later phase needs; the exit status is 1 when a
phase failed.

The record's cache state is "fresh" when this call found no lab kernel, no built converter
dependencies (cargo's shared build folder; before setup.sh, when setup ran just before) and no
installed test packages (a new machine), "warm" when it found all of them, else "partial".
Run by the checkout's venv python (ntscope.common.bench_results: date, commit, machine)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from ntscope.common import bench_results, converter

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

RESULTS = os.path.join(REPO, "tools", "test_times.jsonl")
LAB_KERNEL = ("6.1", "patched")
# (phase, just arguments, needed by later phases). Order: cheap and fatal first, the lab last.
PHASES = [
    ("packages", ["_packages", "test", "lab", "kernel"], True),
    ("converter build", ["build"], True),
    ("analyzer tests", ["test-analyzer-unit"], False),
    ("differential", ["test-differential"], False),
    ("fuzz build", ["fuzz-build"], False),
    ("fuzz run", ["fuzz-analyzer", "60"], False),
    ("python", ["test-python"], False),
    ("examples", ["test-examples"], False),
    ("capture", ["test-capture"], False),
    ("kernel patches", ["test-kernel"], False),
    ("kernel build", ["kernel", *LAB_KERNEL], False),
    ("boot check", ["kernel-bootcheck", LAB_KERNEL[0]], False),
    ("loopback check", ["kernel-loopback-check", LAB_KERNEL[0]], False),
    ("lab", ["lab-test"], False),
]


def checkout_cache():
    return subprocess.run(["bash", os.path.join(REPO, "tools", "checkout-cache.sh")], capture_output=True,
                          text=True, check=True).stdout.strip()


def cache_state(setup=None):
    """What this machine had before the suite ran: the lab kernel, the converter's dependencies
    built (cargo's build folder, shared by checkouts), the test packages. When setup.sh ran just
    before (setup: its record), whether the dependencies were built before setup."""
    cache = os.environ.get("NTSCOPE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "ntscope")
    kernel = os.path.join(cache, "kernels", "-".join(LAB_KERNEL), "bzImage")
    have = {"lab_kernel": os.path.isfile(kernel),
            "cargo_deps": os.path.isdir(os.path.join(converter.cargo_build_dir(), "release", "deps")),
            "packages": subprocess.run(["dpkg", "-s", "trace-cmd", "qemu-system-x86"], capture_output=True).returncode == 0}
    if setup and setup.get("cargo_deps") in ("built", "kept"):
        have["cargo_deps"] = setup["cargo_deps"] == "kept"
    state = "warm" if all(have.values()) else "fresh" if not any(have.values()) else "partial"
    return state, have


def setup_row():
    """setup.sh's last timing (setup-last.json), when it ended right before this call (as in
    `bash setup.sh && just test`)."""
    try:
        with open(os.path.join(checkout_cache(), "setup-last.json")) as f:
            s = json.load(f)
    except (OSError, ValueError):
        return None
    if time.time() - s.get("finished_unix", 0) > 300:
        return None
    return {"phase": "setup", "s": s["seconds"], "result": "ok", "cargo_deps": s.get("cargo_deps"), "venv": s.get("venv")}


def lab_rows(path):
    """lab-test.sh's lines: RUN<TAB>SECONDS<TAB>ok|FAIL (one per VM run, checks included)."""
    rows = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 3 and parts[1].isdigit():
                    rows.append({"phase": f"  lab: {parts[0]}", "s": int(parts[1]), "result": parts[2]})
    except OSError:
        pass
    return rows


def run_phase(args, env):
    t0 = time.monotonic()
    rc = subprocess.run(["just", *args], cwd=REPO, env=env).returncode
    return round(time.monotonic() - t0, 1), rc


def table(rows, total):
    width = max(len(r["phase"]) for r in rows + [{"phase": "total"}])
    lines = [f"{'phase':<{width}}  {'seconds':>8}  result", f"{'-' * width}  {'-' * 8}  ------"]
    for r in rows:
        lines.append(f"{r['phase']:<{width}}  {r['s']:>8.1f}  {r['result']}")
    lines.append(f"{'total':<{width}}  {total:>8.1f}  ({total / 60:.1f} min)")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated phases to run (default: all)")
    ap.add_argument("--skip", help="comma-separated phases not to run")
    ap.add_argument("--no-record", action="store_true", help="print the table, append no record")
    ap.add_argument("--list", action="store_true", help="print the phases and their recipes")
    a = ap.parse_args(argv)
    names = [p[0] for p in PHASES]
    if a.list:
        for name, args, _ in PHASES:
            print(f"{name:<16} just {' '.join(args)}")
        return 0
    chosen = set(names)
    for opt, keep in ((a.only, True), (a.skip, False)):
        if opt:
            asked = [s.strip() for s in opt.split(",") if s.strip()]
            unknown = [s for s in asked if s not in names]
            if unknown:
                print(f"run_tests: unknown phase {', '.join(map(repr, unknown))}; fix: one of {', '.join(names)}",
                      file=sys.stderr)
                return 2
            chosen = (chosen & set(asked)) if keep else (chosen - set(asked))
    setup = setup_row()
    state, have = cache_state(setup)
    rows = [setup] if setup else []
    failed = []
    t_all = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ntscope-test-") as tmp:
        # the capture phase runs capture/tests/test_capture.sh; the lab phase need not run it again
        env = dict(os.environ, LAB_TEST_TIMES=os.path.join(tmp, "lab-times.tsv"),
                   LAB_TEST_CAPTURE_TEST="0" if "capture" in chosen else os.environ.get("LAB_TEST_CAPTURE_TEST", "1"))
        for name, args, fatal in PHASES:
            if name not in chosen:
                continue
            print(f"==== {name}: just {' '.join(args)}", flush=True)
            secs, rc = run_phase(args, env)
            rows.append({"phase": name, "s": secs, "result": "ok" if rc == 0 else f"FAIL (exit {rc})"})
            if name == "lab":
                rows += lab_rows(env["LAB_TEST_TIMES"])
            if rc != 0:
                failed.append(name)
                if fatal:
                    print(f"run_tests: {name} failed; the later phases need it, stopping", file=sys.stderr)
                    break
        total = round(time.monotonic() - t_all + sum(r["s"] for r in rows if r["phase"] == "setup"), 1)
    print(f"\n==== test phases (cache: {state}; {', '.join(k for k, v in have.items() if v) or 'nothing'} found)")
    print(table(rows, total))
    if not a.no_record:
        path = bench_results.append(RESULTS, "test-time",
                                    {"cache": state, "found": have, "complete": chosen == set(names),
                                     "phases": sorted(chosen, key=names.index),
                                     "ci": os.environ.get("CI") == "true"},
                                    {"rows": rows, "total_s": total, "failed": failed}, [])
        print(f"recorded in {path}")
    if failed:
        print(f"run_tests: {len(failed)} phase(s) failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
