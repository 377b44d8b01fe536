#!/usr/bin/env python3
"""Ctrl-C during `just lab-test` stops every run in progress, side-by-side ones included.

Starts lab-test.sh on two runs recorded side by side (LAB_TEST_JOBS=2, nothing else), waits
until both runs' VMs are up, then sends SIGINT to lab-test.sh's process group as a terminal's
Ctrl-C does. Passes when lab-test.sh exits 130 within 30 s and, 5 s later, no VM or lab.sh
of either run is left. Needs a built lab kernel (the lab phase of `just test`).

    test_lab_interrupt.py     prints "ok: ..." or "FAIL: ..." (exit 1)
"""
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LAB_TEST = os.path.join(os.path.dirname(HERE), "lab", "lab-test.sh")
PREFIX = "interrupt-test"
RUNS = ("a", "b")


def leftovers():
    """Processes (pid, command line) that belong to this test's runs."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"{PREFIX}-" in cmd and "test_lab_interrupt" not in cmd:
            found.append((int(pid), cmd))
    return found


def vms_up(run_dir_names):
    """True when every run has a running qemu (its command line names the run)."""
    cmds = [c for _, c in leftovers() if "qemu-system" in c]
    return all(any(f"ntscope.run={r}" in c for c in cmds) for r in run_dir_names)


def main():
    runs = os.environ.get("NTSCOPE_RUNS") or os.path.join(os.path.dirname(os.path.dirname(HERE)), "runs")
    env = dict(os.environ, LAB_TEST_SCENARIOS=" ".join(f"{r}@breakdown-randread" for r in RUNS),
               LAB_TEST_DIAGNOSIS="", LAB_TEST_MULTI_HOST="", LAB_TEST_PREFIX=PREFIX,
               LAB_TEST_CAPTURE_TEST="0", LAB_TEST_JOBS="2", LAB_TEST_SET="core",
               LAB_TEST_INTERRUPT="0")  # the nested call does not run this check again
    env.pop("LAB_TEST_TIMES", None)
    names = [f"{PREFIX}-{r}" for r in RUNS]
    # its own session and SIGINT at its default: as a shell started from a terminal
    proc = subprocess.Popen(["bash", LAB_TEST], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    problem = None
    try:
        deadline = time.monotonic() + 120
        while not vms_up(names):
            if proc.poll() is not None:
                problem = f"lab-test.sh ended (exit {proc.returncode}) before both runs' VMs were up"
                break
            if time.monotonic() > deadline:
                problem = "both runs' VMs were not up within 120 s"
                break
            time.sleep(0.5)
        if problem is None:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                rc = proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                rc = None
            time.sleep(5)
            left = leftovers()
            if rc != 130:
                problem = f"lab-test.sh exit {rc} 30 s after Ctrl-C (expected 130)"
            elif left:
                problem = f"{len(left)} processes of the interrupted runs still running: " + \
                    "; ".join(f"{p} {c[:120]}" for p, c in left[:4])
    finally:
        for pid, _ in leftovers():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        out = proc.communicate()[0].decode(errors="replace")
        for n in names:
            for d in (os.path.join(runs, n), os.path.join(runs, f".{n}.staging")):
                shutil.rmtree(d, ignore_errors=True)
    if problem:
        print(out[-2000:])
        print(f"FAIL: Ctrl-C during lab-test: {problem}")
        return 1
    print("ok: Ctrl-C during lab-test stopped both side-by-side runs (exit 130, no VM left)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
