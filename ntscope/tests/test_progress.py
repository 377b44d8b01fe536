"""Progress on long work: on a terminal, analyze and compare say which step runs and how
far it is; into a pipe or a file they say nothing of it (logs stay clean)."""
import os
import pty
import subprocess
import sys

SMALL = "lab-6.1-stock-base-randread"


def run_on_a_terminal(args, env):
    """Runs `python -m ntscope ARGS` with stderr on a pseudo-terminal; returns (exit, stderr text)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "ntscope", *args], env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:   # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(), out.decode(errors="replace")


def test_progress_on_a_terminal_and_not_in_a_pipe(fresh_run, ntscope_bin):
    env = dict(os.environ, NTSCOPE_BIN=ntscope_bin)
    run = fresh_run(SMALL, convert=False)
    code, err = run_on_a_terminal(["analyze", run, "--quiet"], env)
    assert code == 0, err
    # each step named with its number, the conversion of each host, elapsed seconds
    for step in ("[1/6] converting hosts not converted yet", "converting initiator/trace.dat (1/2)",
                 "loading the views", "interference", "report model", "[5/6] interference report (streams",
                 "[6/6] writing the report set (per-I/O Parquet, timeline)"):
        assert step in err, (step, err[-2000:])
    assert " s" in err and "\r" in err
    r = subprocess.run([sys.executable, "-m", "ntscope", "analyze", run, "--quiet"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0
    assert "[1/6]" not in r.stderr and "\r" not in r.stderr
    assert r.stderr.startswith("ntscope: wrote ")


def test_compare_progress_names_both_runs_steps(fresh_run, ntscope_bin):
    env = dict(os.environ, NTSCOPE_BIN=ntscope_bin)
    base, run = fresh_run(SMALL, "base"), fresh_run("lab-6.1-stock-slow-device", "run")
    code, err = run_on_a_terminal(["compare", base, run, "--quiet"], env)
    assert code == 0, err
    assert err.count("loading the views") >= 2 and "LAD, bootstrap intervals and verdict" in err
