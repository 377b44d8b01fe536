"""Hostile and careless input, by class (issue "no input may destroy data, run code, or give
another run's answer"). Each test asserts the exact outcome: the exit code, the message,
that inputs are intact, and that nothing else was read, run or written.

Classes: 2 shell injection through just, 3 names from trace files reaching SQL, 4 literal
paths, 5 inconsistent runs, 6 the exit-code contract, 7 atomic report sets, 8 non-regular
trace files, 9 a fresh machine. (Classes 1, 3 and 8 on the converter's side: analyzer/tests.)
Then (issue "no command may destroy a run; damaged, stale or odd inputs never give confident
numbers"): 10 --out and demo never cost what ntscope did not write, 11 sql --script writes only
its own script, 12 derived data checked against what was written, 13 what the converter skipped
is data loss, 14 every input file checked like trace.dat, 15 one run is one run and names are
data, 16 the message contract (exit 2, what, where, the right fix; Ctrl-C 130)."""
import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ntscope.common import converter, derived
from ntscope.sql import views

from conftest import tree_digest  # noqa: F401 (the other hostile suites import it from here too)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SMALL = "lab-6.1-stock-base-randread"          # 328 reads, stock 6.1, two hosts
SMALL_IOS = 328
OTHER = "lab-6.1-stock-slow-device"            # another run with another count
# `ntscope ARGS` killed by SIGKILL at a point of writing a report set (fault injection, test-only)
KILL_AT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kill_at.py")


def report_count(run):
    doc = json.load(open(os.path.join(run, "report", "report.json")))
    return sum(g["count"] for g in doc["groups"])


@pytest.fixture
def fresh(fresh_run):
    return fresh_run


def just(*args, cwd, env=None, ntscope_bin=None):
    e = dict(os.environ, NTSCOPE_PYTHON=sys.executable, **(env or {}))
    if ntscope_bin:
        e["NTSCOPE_BIN"] = ntscope_bin
    return subprocess.run([shutil.which("just"), "--justfile", os.path.join(REPO, "justfile"), *args],
                          cwd=cwd, env=e, capture_output=True, text=True)


def no_traceback(r):
    assert "Traceback" not in r.stderr, r.stderr


# ------------------------------------------------------------------ 2. shell injection
def test_run_name_with_command_substitution_runs_nothing(tmp_path, ntscope_bin):
    r = just("analyze", "$(touch PWNED)", cwd=tmp_path, ntscope_bin=ntscope_bin)
    assert r.returncode == 2
    assert "no run directory '$(touch PWNED)'" in r.stderr
    assert not (tmp_path / "PWNED").exists()


def test_run_named_with_backticks_is_analyzed_as_named(tmp_path, fresh, ntscope_bin):
    fresh(SMALL, dst_name="`touch PWNED2`")
    r = just("analyze", "`touch PWNED2`", "--quiet", "--no-interference", cwd=tmp_path, ntscope_bin=ntscope_bin)
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "PWNED2").exists()
    assert report_count(str(tmp_path / "`touch PWNED2`")) == SMALL_IOS


def test_working_directory_with_command_substitution(tmp_path, fresh, ntscope_bin):
    weird = tmp_path / "$(touch PWNED3)"
    weird.mkdir()
    shutil.move(fresh(SMALL), str(weird / "run"))
    r = just("analyze", "run", "--quiet", "--no-interference", cwd=weird, ntscope_bin=ntscope_bin)
    assert r.returncode == 0, r.stderr
    assert not (weird / "PWNED3").exists() and not (tmp_path / "PWNED3").exists()
    assert report_count(str(weird / "run")) == SMALL_IOS


def test_flags_with_shell_characters_and_spaces_stay_one_argument(tmp_path, fresh, ntscope_bin):
    run = fresh(SMALL)
    r = just("analyze", run, "--size", ">=32k", "--quiet", cwd=tmp_path, ntscope_bin=ntscope_bin)
    # every read is 4 KiB: the filter is applied (and selects nothing), no file "=32k" appears
    assert r.returncode == 2 and "the filters select no I/O" in r.stderr
    assert os.listdir(tmp_path) == [os.path.basename(run)]
    r = just("analyze", run, "--process", "fio worker", "--quiet", cwd=tmp_path, ntscope_bin=ntscope_bin)
    assert r.returncode == 2 and "--process fio worker matches no process" in r.stderr


def test_compare_and_interference_recipes_pass_their_flags_on(tmp_path, fresh, ntscope_bin):
    base, run = fresh(SMALL, "base"), fresh(OTHER, "run")
    out = tmp_path / "out"
    r = just("compare", base, run, "--quiet", "--out", str(out), cwd=tmp_path, ntscope_bin=ntscope_bin)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and sorted(os.listdir(out)) == [".ntscope-manifest.json", "compare.html", "compare.json",
                                                          "compare.txt"]
    r = just("interference", run, "--quiet", "--out", str(out), cwd=tmp_path, ntscope_bin=ntscope_bin)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and "interference.json" in os.listdir(out)


# ------------------------------------------------------------------ 3. names from trace files
def test_column_name_carrying_sql_is_quoted_not_run(fresh, ntscope_cli, tmp_path):
    run = fresh(SMALL)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-42\n")
    evil = f"x\" , (SELECT content FROM read_text('{secret}')) AS \"leak"
    p = os.path.join(run, "initiator", "parquet", "nvme", "nvme_setup_cmd.parquet")
    t = pq.read_table(p)
    pq.write_table(t.append_column(evil, pa.array([1] * t.num_rows, pa.int32())), p)
    derived.record(os.path.join(run, "initiator"), os.stat(os.path.join(run, "initiator", "trace.dat")))   # as converted
    r = ntscope_cli("sql", run, "-c", "SELECT * FROM raw_nvme WHERE event = 'nvme_setup_cmd' LIMIT 3")
    assert r.returncode == 0, r.stderr
    header = r.stdout.splitlines()[0]
    assert evil.replace('"', '""') in header or evil in header   # the odd name is one column
    assert "TOPSECRET" not in r.stdout and "leak" not in header.split(",")[-1:]


def test_files_that_are_not_event_files_are_not_read(fresh, ntscope_cli):
    run = fresh(SMALL)
    d = os.path.join(run, "initiator", "parquet", "nvme")
    shutil.copy(os.path.join(d, "nvme_setup_cmd.parquet"), os.path.join(d, "nvme_setup_cmd copy.parquet"))
    shutil.copy(os.path.join(d, "nvme_setup_cmd.parquet"), os.path.join(d, "..hidden.parquet"))
    r = ntscope_cli("sql", run, "-c", "SELECT value FROM pipeline_stats WHERE name = 'initiator_commands'")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["value", str(SMALL_IOS)]


# ------------------------------------------------------------------ 4. literal paths
@pytest.mark.parametrize("odd, plain", [("r[1]", "r1"), ("x*", "xa")])
def test_glob_characters_in_a_run_path_are_literal(tmp_path, fresh, ntscope_cli, odd, plain):
    fresh(SMALL, odd)
    fresh(OTHER, plain)
    r = ntscope_cli("analyze", odd, "--quiet", "--no-interference", cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert report_count(str(tmp_path / odd)) == SMALL_IOS
    assert not os.path.exists(tmp_path / plain / "report")


# ------------------------------------------------------------------ 5. inconsistent runs
def input_errors(run):
    doc = json.load(open(os.path.join(run, "report", "report.json")))
    return sorted(s["name"] for s in doc["pipeline_stats"] if s["name"].startswith("input_error:"))


def test_the_same_trace_as_both_hosts_is_an_input_error(fresh, ntscope_cli):
    run = fresh(SMALL, convert=False)
    shutil.copy(os.path.join(run, "initiator", "trace.dat"), os.path.join(run, "target", "trace.dat"))
    os.unlink(os.path.join(run, "target", "host.json"))
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
    assert r.returncode == 2 and "inputs are inconsistent" in r.stderr
    assert input_errors(run) == ["input_error:same_trace:initiator,target"]
    assert open(os.path.join(run, "report", "report.txt")).read().splitlines()[3].startswith("INPUT ERROR (same_trace")


@pytest.mark.parametrize("edit, error", [
    # (a role that is neither, "server": refused before the views, test_hostile_messages.py)
    ({"initiator": {"role": "target"}, "target": {"role": "initiator"}},
     ["input_error:role_contradicts_events:initiator", "input_error:role_contradicts_events:target"]),
    ({"target": {"run": "another-run"}}, ["input_error:different_runs:initiator=s61-breakdown-randread,target=another-run"]),
])
def test_host_json_the_events_or_the_other_host_contradict(fresh, ntscope_cli, edit, error):
    run = fresh(SMALL)
    for host, fields in edit.items():
        p = os.path.join(run, host, "host.json")
        h = json.load(open(p))
        h.update(fields)
        json.dump(h, open(p, "w"))
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
    assert r.returncode == 2, r.stderr
    assert input_errors(run) == error


def test_a_stray_second_initiator_does_not_change_the_pairs_numbers(fresh, ntscope_cli):
    # another run's initiator (another clock, commands the target never saw) dropped into
    # the run: the real pair keeps its join and numbers, the stray's I/O is counted as
    # unmatched, not joined to the target's commands by a wrong offset
    run, alone = fresh(SMALL), fresh(SMALL, "alone")
    other = fresh(OTHER, "other")
    shutil.copytree(os.path.join(other, "initiator"), os.path.join(run, "initiator2"))
    os.unlink(os.path.join(run, "initiator2", "host.json"))
    for r in (run, alone):
        res = ntscope_cli("analyze", r, "--quiet", "--no-interference")
        assert res.returncode in (0, 1), res.stderr      # 1: warnings (the stray's unmatched I/O)
    doc, ref = (json.load(open(os.path.join(r, "report", "report.json"))) for r in (run, alone))
    assert input_errors(run) == []
    con = views.connect(run)
    got = {h: (n, m) for h, n, m in con.execute(
        "SELECT initiator_host, count(*), count(*) FILTER (WHERE match_state = 'matched') FROM io GROUP BY 1").fetchall()}
    assert got["initiator"] == (SMALL_IOS, SMALL_IOS)
    assert got["initiator2"][0] > 200 and got["initiator2"][1] <= 2   # a chance fingerprint at most
    stat = {s["name"]: s["value"] for s in doc["pipeline_stats"]}
    assert stat["initiator_commands"] == SMALL_IOS + got["initiator2"][0]
    assert stat["matched_commands"] == SMALL_IOS + got["initiator2"][1]
    # the pair's own stage numbers are those of the run without the stray, to the ns
    mine = con.execute("SELECT s.stage_set, s.stage, sum(s.dur), count(*) FROM io_stages s JOIN io USING (io_id) "
                       "WHERE initiator_host = 'initiator' GROUP BY ALL ORDER BY ALL").fetchall()
    assert mine == views.connect(alone).execute(
        "SELECT s.stage_set, s.stage, sum(s.dur), count(*) FROM io_stages s JOIN io USING (io_id) "
        "GROUP BY ALL ORDER BY ALL").fetchall()
    assert ref["clock"]["offset_ns"] in [p["offset_ns"] for p in doc["clock_pairs"]]


def test_compare_with_a_one_host_run_gives_no_verdict(fresh, ntscope_cli):
    base, run = fresh(SMALL, "base"), fresh(OTHER, "run")
    shutil.rmtree(os.path.join(run, "target"))
    r = ntscope_cli("compare", base, run, "--quiet")
    assert r.returncode == 2 and "no verdict" in r.stderr
    doc = json.load(open(os.path.join(run, "report", "compare.json")))
    assert {v["verdict"] for v in doc["verdicts"]} == {"no verdict"}
    assert all(v["bottleneck_stage"] is None for v in doc["verdicts"])
    assert "hosts traced: initiator" in doc["verdicts"][0]["evidence"]


def test_compare_with_a_target_only_run_is_a_clear_error(fresh, ntscope_cli):
    # no initiator: no stage set, so its side has no stage names and no rows (an empty list of
    # names is valid; the error is the missing stages, not the file)
    base, run = fresh(SMALL, "base"), fresh(OTHER, "run")
    shutil.rmtree(os.path.join(run, "initiator"))
    r = ntscope_cli("compare", base, run, "--quiet", "--no-cache")
    assert r.returncode == 2 and f"{run}: no I/O with stages" in r.stderr and "fix:" in r.stderr
    no_traceback(r)


# ------------------------------------------------------------------ 6. exit codes: every error is exit 2 with a fix
@pytest.mark.parametrize("flags, message", [
    (["--window", "abc"], "window 'abc' is not START:END"),
    (["--time-bucket", "0", "--group-by", "time"], "time bucket 0.0 must be > 0"),
    (["--time-bucket", "soon"], "invalid float value: 'soon'"),
    (["--memory-limit", "lots"], "--memory-limit 'lots' is not a memory size"),
    (["--type", "rread"], "--type rread matches no I/O of this run; fix: use one of: read"),
    (["--device", "nvme9n9"], "--device nvme9n9 matches no I/O of this run; fix: use one of: initiator/nvme0n1"),
    (["--queue", "initiator/c0/q9"], "--queue initiator/c0/q9 matches no I/O of this run; fix: use one of: initiator/c0/q1"),
    (["--queue", "q1"], "queue 'q1' is neither a queue key nor a queue id"),
    (["--stream", "fio/1 read 4096B"], "--stream fio/1 read 4096B matches no stream of this run; fix: use one of: fio/"),
    (["--stage-set", "ntprof"], "--stage-set ntprof is not reported for this run; fix: use one of: stock"),
    (["--time-bucket", "nan", "--group-by", "time"], "time bucket nan must be > 0: from 1e-06 to 1e+06 seconds"),
    (["--time-bucket", "inf", "--group-by", "time"], "time bucket inf must be > 0"),
    (["--time-bucket", "1e300", "--group-by", "time"], "time bucket 1e+300 must be > 0"),
    (["--time-bucket", "1e-12", "--group-by", "time"], "time bucket 1e-12 must be > 0"),
    (["--window", "1.2.3:"], "window '1.2.3:': '1.2.3' is not a number of seconds"),
    (["--window", "4:2"], "window '4:2' starts at 4 s, after its end at 2 s"),
    (["--memory-limit", "1KB"], "DuckDB ran out of memory"),
    (["--slo", "read: p99 <= 99999999999999999999999s"], "the bound 99999999999999999999999s is beyond any I/O's latency"),
    (["--size", "99999999999999999999k"], "more than any I/O"),
])
def test_bad_flags_exit_2_and_keep_the_good_report(fresh, ntscope_cli, flags, message):
    run = fresh(SMALL)
    assert ntscope_cli("analyze", run, "--quiet", "--no-interference").returncode == 0
    before = tree_digest(run)
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", *flags)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and ("fix:" in r.stderr or "usage:" in r.stderr)
    assert "internal error" not in r.stderr and "convert the run again" not in r.stderr   # nor the wrong fix
    no_traceback(r)
    assert tree_digest(run) == before


def test_bad_toml_spec(fresh, ntscope_cli, tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text("[filter\ntype = read\n")
    r = ntscope_cli("analyze", fresh(SMALL), "--spec", str(spec))
    assert r.returncode == 2 and f"spec file {spec}" in r.stderr and "fix:" in r.stderr
    no_traceback(r)


@pytest.mark.parametrize("keep", ["initiator", "target"])
def test_a_run_without_initiator_io_is_a_clear_error(fresh, ntscope_cli, keep):
    run = fresh(SMALL)
    for h in ("initiator", "target"):
        if h != keep:
            shutil.rmtree(os.path.join(run, h))
    if keep == "initiator":  # an initiator trace without its nvme events: only block events remain
        d = os.path.join(run, "initiator", "parquet", "nvme")
        for f in os.listdir(d):
            t = pq.read_table(os.path.join(d, f))
            pq.write_table(t.slice(0, 0), os.path.join(d, f))
        derived.record(os.path.join(run, "initiator"), os.stat(os.path.join(run, "initiator", "trace.dat")), recount=True)
    r = ntscope_cli("analyze", run, "--quiet")
    # the initiator kept (stock: no nvme_tcp events) has no NVMe event left at all: said so
    said = "the run's traces hold no NVMe event at all" if keep == "initiator" else "the run has no initiator I/O command to report"
    assert r.returncode == 2 and said in r.stderr, r.stderr
    no_traceback(r)
    assert not os.path.exists(os.path.join(run, "report"))


def test_a_truncated_parquet_file(fresh, ntscope_cli):
    # the file no longer matches metadata.json: converted again from the trace (exit 0, said on
    # stderr); without the trace it cannot be replaced: refused, nothing touched
    run = fresh(SMALL)
    p = os.path.join(run, "initiator", "parquet", "nvme", "nvme_setup_cmd.parquet")
    with open(p, "r+b") as f:
        f.truncate(os.path.getsize(p) // 2)
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
    assert r.returncode == 0, r.stderr
    assert f"converting {run}/initiator/trace.dat again: {p} is" in r.stderr and "metadata.json says" in r.stderr
    assert report_count(run) == SMALL_IOS
    with open(p, "r+b") as f:
        f.truncate(os.path.getsize(p) // 2)
    os.unlink(os.path.join(run, "initiator", "trace.dat"))
    before = tree_digest(run)
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
    assert r.returncode == 2 and f"the converted event files of {run}/initiator do not match their metadata.json: {p}" in r.stderr
    assert "there is no trace.dat to convert again; fix: restore the host's trace.dat" in r.stderr
    no_traceback(r)
    assert tree_digest(run) == before


@pytest.fixture
def tmpfs(tmp_path):
    """mount(size) -> a fresh tmpfs folder (root: this runs as root in CI); unmounted after."""
    mounts = []

    def mount(size, name="fs"):
        d = tmp_path / name
        d.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(d)], check=True)
        mounts.append(d)
        return d
    yield mount
    for d in mounts:
        subprocess.run(["umount", "-l", str(d)], check=False)


def test_a_read_only_run_directory(fresh, ntscope_cli, tmpfs, tmp_path):
    fs = tmpfs("64m")
    run = str(fs / "run")
    shutil.copytree(fresh(SMALL), run)
    subprocess.run(["mount", "-o", "remount,ro", str(fs)], check=True)
    before = tree_digest(run)
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
    assert r.returncode == 2 and "Read-only file system" in r.stderr and "--out DIR" in r.stderr
    no_traceback(r)
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--out", str(tmp_path / "elsewhere"))
    assert r.returncode == 0, r.stderr
    assert tree_digest(run) == before and "report.json" in os.listdir(tmp_path / "elsewhere")


def test_a_full_disk_leaves_the_previous_set_whole(fresh, ntscope_cli, tmpfs):
    fs = tmpfs("3m")   # the run fits; a second copy of its report set does not
    run = str(fs / "run")
    shutil.copytree(fresh(SMALL), run)
    assert ntscope_cli("analyze", run, "--quiet", "--no-interference").returncode == 0
    before = tree_digest(os.path.join(run, "report"))
    with open(fs / "filler", "wb") as f:   # leave less room than one report set needs
        free = os.statvfs(fs).f_bavail * os.statvfs(fs).f_frsize
        f.write(b"\0" * max(free - 200_000, 0))
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--group-by", "type,queue")
    assert r.returncode == 2 and "No space left on device" in r.stderr and "free disk space" in r.stderr
    no_traceback(r)
    assert tree_digest(os.path.join(run, "report")) == before
    assert [e for e in os.listdir(run) if e.startswith(".report.")] == [".report.lock"]


# ------------------------------------------------------------------ 7. atomic report sets
def groups_of(run):
    txt = open(os.path.join(run, "report", "report.txt")).read()
    in_txt = sorted(l.split("   ")[0][len("group: "):] for l in txt.splitlines() if l.startswith("group: "))
    doc = json.load(open(os.path.join(run, "report", "report.json")))
    return in_txt, sorted(g["key_text"] for g in doc["groups"])


def test_two_analyses_of_one_run_do_not_mix(fresh, ntscope_bin):
    run = fresh(SMALL)
    env = dict(os.environ, NTSCOPE_BIN=ntscope_bin)
    procs = [subprocess.Popen([sys.executable, "-m", "ntscope", "analyze", run, "--quiet", "--group-by", g],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for g in ("type", "type,queue")]
    errs = [p.communicate()[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errs
    assert any("waiting for it to finish" in e for e in errs)   # the second waited for the first
    in_txt, in_json = groups_of(run)
    assert in_txt == in_json and in_txt in (["type=read"], ["type=read, queue=initiator/c0/q1", "type=read, queue=initiator/c0/q2"])
    assert sorted(e for e in os.listdir(run) if e.startswith(".")) == [".ntscope", ".report.lock"]
    assert sorted(os.listdir(os.path.join(run, ".ntscope"))) == [".compare-side.lock", "compare-side"]


def test_kill_9_in_the_middle_leaves_the_previous_set(fresh, ntscope_bin):
    run = fresh(SMALL)
    env = dict(os.environ, NTSCOPE_BIN=ntscope_bin)
    subprocess.run([sys.executable, "-m", "ntscope", "analyze", run, "--quiet", "--group-by", "type"],
                   env=env, check=True, capture_output=True)
    before = tree_digest(os.path.join(run, "report"))
    # the process kills itself with SIGKILL after the first file of the new set is written
    r = subprocess.run([sys.executable, KILL_AT, "written", "report", "analyze", run, "--quiet", "--group-by", "type,queue"],
                       env=env, capture_output=True)
    assert r.returncode == -signal.SIGKILL
    assert any(e.startswith(".report.tmp-") for e in os.listdir(run)), "the set was never being written"
    assert tree_digest(os.path.join(run, "report")) == before       # not a mixed set
    subprocess.run([sys.executable, "-m", "ntscope", "analyze", run, "--quiet", "--group-by", "type,queue"],
                   env=env, check=True, capture_output=True)
    assert sorted(e for e in os.listdir(run) if e.startswith(".")) == [".ntscope", ".report.lock"]   # stale temp cleaned
    assert groups_of(run)[0] == ["type=read, queue=initiator/c0/q1", "type=read, queue=initiator/c0/q2"]


def test_kill_9_while_keeping_the_compare_input_leaves_the_previous_one(fresh, ntscope_bin, tmp_path):
    from ntscope.sql import compare_side_cache as side_cache
    run = fresh(SMALL)
    env = dict(os.environ, NTSCOPE_BIN=ntscope_bin)
    subprocess.run([sys.executable, "-m", "ntscope", "analyze", run, "--quiet"], env=env, check=True, capture_output=True)
    kept = os.path.join(run, ".ntscope")
    before = tree_digest(side_cache.folder(run))
    note = os.path.join(run, "target", "notes.txt")   # an input changes: the next analyze keeps a new side
    with open(note, "w") as f:
        f.write("changed")
    r = subprocess.run([sys.executable, KILL_AT, "written", "compare-side", "analyze", run, "--quiet"],
                       env=env, capture_output=True)
    assert r.returncode == -signal.SIGKILL
    assert any(e.startswith(".compare-side.tmp-") for e in os.listdir(kept)), "the side was never being written"
    assert tree_digest(side_cache.folder(run)) == before   # the previous set, whole
    subprocess.run([sys.executable, "-m", "ntscope", "analyze", run, "--quiet"], env=env, check=True, capture_output=True)
    assert sorted(os.listdir(kept)) == [".compare-side.lock", "compare-side"]   # the stale temp folder cleaned
    assert side_cache.load(run, str(tmp_path)) is not None


# ------------------------------------------------------------------ 8. non-regular trace files
@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_trace_that_is_not_a_regular_file(fresh, ntscope_cli, kind):
    run = fresh(SMALL, convert=False)
    t = os.path.join(run, "target", "trace.dat")
    os.unlink(t)
    os.mkfifo(t) if kind == "fifo" else os.mkdir(t)
    r = ntscope_cli("analyze", run, "--quiet")   # must not block on the FIFO
    assert r.returncode == 2
    assert f"{t} is {'a FIFO' if kind == 'fifo' else 'a directory'}" in r.stderr and "fix:" in r.stderr


# ------------------------------------------------------------------ 9. a fresh machine
def test_every_command_the_scripts_call_is_installed_by_setup():
    r = subprocess.run([sys.executable, os.path.join(REPO, "tools", "check_commands.py")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_command_check_catches_a_package_setup_does_not_install(tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("check_commands", os.path.join(REPO, "tools", "check_commands.py"))
    check_commands = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_commands)
    cmds = [c for _, c in check_commands.shell_commands("x=$(ls | sort)\nif true; then\n  cpio -o < f | gzip\nfi\n")]
    assert sorted(cmds) == ["cpio", "gzip", "ls", "sort"]
    problems, _ = check_commands.check({"cpio": ["s.sh:3"], "sort": ["s.sh:1"]}, installed_pkgs=set())
    assert len(problems) == 1 and problems[0].startswith("cpio: from Debian package cpio, which setup.sh does not")


def test_setup_stops_with_exit_2_when_pip_cannot_install(tmp_path):
    # the converter is built already (the shared build folder and this checkout's target)
    env = dict(os.environ, NTSCOPE_CACHE=str(tmp_path / "cache"), PIP_INDEX_URL="http://127.0.0.1:9/simple",
               PIP_RETRIES="0", PIP_TIMEOUT="2", PIP_NO_CACHE_DIR="1", PIP_FIND_LINKS="",
               CARGO_TARGET_DIR=os.path.dirname(os.path.dirname(converter.cargo_binary(REPO))),
               CARGO_BUILD_BUILD_DIR=converter.cargo_build_dir())
    r = subprocess.run(["bash", os.path.join(REPO, "setup.sh")], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 2
    assert "setup: error: pip could not install ntscope" in r.stderr and "setup: ok" not in r.stderr


def test_analyze_does_not_need_cargo_when_the_converter_is_built(fresh, tmp_path):
    run = fresh(SMALL, convert=False)
    path = ":".join(p for p in os.environ["PATH"].split(":") if not os.path.exists(os.path.join(p, "cargo")))
    env = {k: v for k, v in os.environ.items() if k != "NTSCOPE_BIN"}
    env["PATH"] = path
    r = subprocess.run([sys.executable, "-m", "ntscope", "analyze", run, "--quiet", "--no-interference"],
                       env=env, capture_output=True, text=True, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "building the converter" not in r.stderr


# ================================================================== no command may destroy a run; damaged,
# stale or odd inputs never give confident numbers (classes 10-16)
def inputs_digest(run):
    """sha256 of a run's inputs: every file but what ntscope writes there (report/, .ntscope/,
    parquet/, the lock files); links and special files by what they are, never opened."""
    h = hashlib.sha256()
    paths = []
    for d, dirs, files in os.walk(run):
        dirs[:] = [x for x in dirs if x not in ("report", ".ntscope", "parquet")]
        paths += [os.path.join(d, f) for f in files if not f.endswith(".lock")]
    for p in sorted(paths):
        h.update(os.path.relpath(p, run).encode())
        mode = os.lstat(p).st_mode
        if stat.S_ISREG(mode):
            with open(p, "rb") as fh:
                h.update(fh.read())
        else:
            h.update(os.readlink(p).encode() if stat.S_ISLNK(mode) else str(stat.S_IFMT(mode)).encode())
    return h.hexdigest()


def refused(r, *parts):
    """exit 2 with every part in the message, a fix, and neither a traceback nor a bug report."""
    assert r.returncode == 2, (r.returncode, r.stderr)
    for part in parts:
        assert part in r.stderr, (part, r.stderr)
    assert "fix:" in r.stderr and "internal error" not in r.stderr
    no_traceback(r)


def v6_with(src, dst, *edits):
    """dst: the real trace src rewritten by trace-cmd as an uncompressed v6 file (its event
    formats in plain text), then each edit (event, old, new) applied to that event's format
    text: a same-length byte change, so every offset of the file stays right."""
    subprocess.run(["trace-cmd", "convert", "--file-version", "6", "--compression", "none", "-i", src, "-o", dst],
                   check=True, capture_output=True)
    with open(dst, "rb") as f:
        b = bytearray(f.read())
    for event, old, new in edits:
        assert len(old) == len(new)
        at = bytes(b).index(f"name: {event}\n".encode())
        i = bytes(b).index(old.encode(), at)
        b[i:i + len(old)] = new.encode()
    with open(dst, "wb") as f:
        f.write(b)
    return dst


def fixture_trace(name, host):
    return os.path.join(REPO, "fixtures", name, host, "trace.dat")


def manifest_files(folder):
    return json.load(open(os.path.join(folder, ".ntscope-manifest.json")))["files"]


# ------------------------------------------------------------------ 10. --out never costs what ntscope did not write
@pytest.mark.parametrize("command, target, what", [
    (["analyze", "{A}"], "{A}", "it is the run folder {A} (hosts: initiator, target)"),
    (["analyze", "{A}"], "{root}", "it holds runs (2: A, B)"),
    (["analyze", "{A}"], "{A}/initiator", "it is the host folder {A}/initiator of a run"),
    (["analyze", "{A}"], "{A}/initiator/parquet", "it is the converted event files {A}/initiator/parquet"),
    (["analyze", "{A}"], "{A}/initiator/parquet/new", "it lies inside the converted event files {A}/initiator/parquet"),
    (["compare", "{A}", "{B}"], "{A}", "it is the run folder {A}"),
    (["interference", "{A}"], "{A}", "it is the run folder {A}"),
    (["sweep", "{A}", "{B}", "--values", "1,2"], "{B}", "it is the run folder {B}"),
    (["analyze", "{A}"], "{root}/photos", "it is not empty (1 entry: cat.jpg) and ntscope did not write it"),
])
def test_out_pointing_at_what_ntscope_reads_is_refused(tmp_path, fresh, ntscope_cli, command, target, what):
    a, b = fresh(SMALL, "A"), fresh(OTHER, "B")
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "cat.jpg").write_bytes(b"\xff\xd8 a cat")
    fill = {"A": a, "B": b, "root": str(tmp_path)}
    out = target.format(**fill)
    before = tree_digest(str(tmp_path))
    r = ntscope_cli(*[c.format(**fill) for c in command], "--out", out, "--quiet", "--no-progress")
    refused(r, f"refusing to write into {out}: {what.format(**fill)}", "fix: pass --out a folder that does not exist yet")
    assert tree_digest(str(tmp_path)) == before                 # every byte of both runs, and the photos
    assert not os.path.exists(os.path.join(os.path.dirname(out), f".{os.path.basename(out)}.lock"))   # not even a lock


def test_user_files_in_the_report_folder_survive_every_command(fresh, ntscope_cli):
    run, base = fresh(SMALL, "run"), fresh(OTHER, "base")
    assert ntscope_cli("analyze", run, "--quiet").returncode == 0
    rep = os.path.join(run, "report")
    os.makedirs(os.path.join(rep, "notes", "deeper"))
    mine = {"notes/todo.txt": b"check queue 2\n", "notes/deeper/plot.png": b"\x89PNG...", ".mine": b"mine\n",
            "my-report.txt": b"my own words\n"}
    for rel, data in mine.items():
        with open(os.path.join(rep, rel), "wb") as f:
            f.write(data)
    ours_before = set(manifest_files(rep))
    for args in (["analyze", run, "--group-by", "type,queue"], ["analyze", run, "--no-interference"],
                 ["compare", base, run], ["interference", run], ["sweep", base, run, "--values", "1,2"]):
        r = ntscope_cli(*args, "--quiet", "--no-progress")
        assert r.returncode == 0, (args, r.stderr)
        for rel, data in mine.items():
            assert open(os.path.join(rep, rel), "rb").read() == data, (args, rel)
    listed = set(manifest_files(rep))
    assert not listed & {"notes", ".mine", "my-report.txt"}                   # never claimed as ntscope's
    assert {"compare.json", "sweep.json", "interference.json", "report.json"} <= listed and ours_before <= listed
    assert [e for e in os.listdir(run) if e.startswith(".report.")] == [".report.lock"]


def test_a_kill_at_the_swap_loses_no_user_folder(fresh, ntscope_bin):
    # killed right after the swap, the user's folders still in the set swapped out: the next
    # analysis (or compare) puts them back where they were
    run = fresh(SMALL)
    env = dict(os.environ, NTSCOPE_BIN=ntscope_bin)
    cmd = [sys.executable, "-m", "ntscope", "analyze", run, "--quiet", "--no-interference"]
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    notes = os.path.join(run, "report", "notes")
    os.makedirs(notes)
    with open(os.path.join(notes, "todo.txt"), "w") as f:
        f.write("keep me\n")
    r = subprocess.run([sys.executable, KILL_AT, "swapped", "report", *cmd[3:]], env=env, capture_output=True)
    assert r.returncode == -signal.SIGKILL
    (stale,) = [e for e in os.listdir(run) if e.startswith(".report.old-")]
    assert os.listdir(os.path.join(run, stale, "notes")) == ["todo.txt"]   # where the kill left it
    assert not os.path.exists(notes)
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    assert open(os.path.join(notes, "todo.txt")).read() == "keep me\n"
    assert not [e for e in os.listdir(run) if e.startswith((".report.old-", ".report.tmp-"))]


@pytest.mark.parametrize("files", [{"report.txt": b"my notes\n"}, {"io.parquet": b"PAR1 mine PAR1"},
                                   {"report.txt": b"an old report\n", "compare.json": b"{}\n"}])
def test_report_file_names_without_a_manifest_are_not_ours(fresh, ntscope_cli, tmp_path, files):
    run = fresh(SMALL)
    folder = tmp_path / "mine"
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--out", str(folder))
    refused(r, f"refusing to write into {folder}: it is not empty ({len(files)} ",
            "ntscope cannot tell they are its own (no .ntscope-manifest.json", "fix: pass --out a folder",
            "or remove those files if an older ntscope wrote them")
    assert {n: (folder / n).read_bytes() for n in os.listdir(folder)} == files


def test_a_foreign_manifest_is_refused(fresh, ntscope_cli, tmp_path):
    run = fresh(SMALL)
    side = os.path.join(run, "elsewhere")
    os.makedirs(os.path.join(side, ".ntscope-manifest.json"))   # a manifest that is not ntscope's
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--out", side)
    refused(r, f"refusing to write into {side}: its .ntscope-manifest.json cannot be read")
    other = tmp_path / "side-cache"
    other.mkdir()
    (other / ".ntscope-manifest.json").write_text('{"kind": "compare-side", "files": ["side.json"]}\n')
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--out", str(other))
    refused(r, "its .ntscope-manifest.json says it is a compare-side folder, not a report folder")


def run_demo(ntscope_cli, runs_dir, *flags):
    return ntscope_cli("demo", "--quiet", "--no-progress", "--no-interference", *flags,
                       env={"NTSCOPE_RUNS": str(runs_dir)})


def test_demo_again_keeps_the_users_files(ntscope_cli, tmp_path):
    runs_dir = tmp_path / "runs"
    assert run_demo(ntscope_cli, runs_dir).returncode == 0
    demo = runs_dir / "demo"
    (demo / "NOTES.txt").write_text("what I saw\n")
    shutil.copytree(os.path.join(REPO, "fixtures", OTHER, "target"), demo / "target2")   # an extra host of the user's
    os.unlink(demo / "target2" / "host.json")
    (demo / "report" / "mine.txt").write_text("mine\n")
    with open(demo / "initiator" / "fio.log", "a") as f:         # a fixture file changed: put back
        f.write("edited\n")
    before = inputs_digest(str(demo / "target2"))
    r = run_demo(ntscope_cli, runs_dir)
    assert r.returncode == 0, r.stderr
    assert (demo / "NOTES.txt").read_text() == "what I saw\n" and (demo / "report" / "mine.txt").read_text() == "mine\n"
    assert inputs_digest(str(demo / "target2")) == before
    assert open(demo / "initiator" / "fio.log", "rb").read() == \
        open(os.path.join(REPO, "fixtures", "stock-randread-4k-qd8", "initiator", "fio.log"), "rb").read()


def test_demo_over_a_symbolic_link_or_a_foreign_folder_is_refused(ntscope_cli, tmp_path):
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "data.txt").write_text("precious\n")
    os.symlink(mine, runs_dir / "demo")
    r = run_demo(ntscope_cli, runs_dir)
    refused(r, f"{runs_dir}/demo is a symbolic link (to {mine}); demo writes only into the folder it made",
            "fix: remove the link")
    assert os.listdir(mine) == ["data.txt"]
    os.unlink(runs_dir / "demo")
    shutil.copytree(mine, runs_dir / "demo")
    r = run_demo(ntscope_cli, runs_dir)
    refused(r, f"{runs_dir}/demo exists and was not made by `demo`")
    assert os.listdir(runs_dir / "demo") == ["data.txt"]


# ------------------------------------------------------------------ 11. sql --script writes only a script of its own
def test_sql_script_never_writes_into_a_run(fresh, ntscope_cli):
    run = fresh(SMALL)
    assert ntscope_cli("analyze", run, "--quiet", "--no-interference").returncode == 0
    before = tree_digest(run)
    for target, why in ((f"{run}/initiator/trace.dat", f"it lies inside the host folder {run}/initiator of a run"),
                        (f"{run}/initiator/parquet/views.sql", f"it lies inside the converted event files {run}/initiator/parquet"),
                        (f"{run}/report/report.json", f"it lies inside {run}/report, a folder ntscope writes")):
        r = ntscope_cli("sql", run, "--script", target)
        refused(r, f"refusing to write the view script to {target}: {why}", "fix: pass --script a new file name")
    assert tree_digest(run) == before


def test_sql_script_overwrites_only_its_own_script(fresh, ntscope_cli, tmp_path):
    run = fresh(SMALL)
    notes = tmp_path / "notes.sql"
    notes.write_text("-- my queries\nSELECT 1;\n")
    r = ntscope_cli("sql", run, "--script", str(notes))
    refused(r, f"refusing to write the view script to {notes}: it exists (24 bytes) and is not a script ntscope wrote")
    assert notes.read_text() == "-- my queries\nSELECT 1;\n"
    fifo = tmp_path / "pipe.sql"
    os.mkfifo(fifo)
    refused(ntscope_cli("sql", run, "--script", str(fifo)), f"{fifo}: it is not a regular file")
    script = tmp_path / "views.sql"
    for _ in range(2):   # a new file, then the script it wrote before
        r = ntscope_cli("sql", run, "--script", str(script))
        assert r.returncode == 0, r.stderr
        assert script.read_text().startswith("-- ntscope view script (ntscope sql --script) of ")
    r = ntscope_cli("sql", run, "--script", "-")
    assert r.returncode == 0 and r.stdout == script.read_text()


# ------------------------------------------------------------------ 12. derived data checked against what was written
def flip_a_bit(path):
    """One bit of path flipped in the middle, its mtime given back (what a stat-only check misses)."""
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(st.st_size // 2)
        b = f.read(1)
        f.seek(st.st_size // 2)
        f.write(bytes([b[0] ^ 0x10]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def stage_sums(run):
    doc = json.load(open(os.path.join(run, "report", "report.json")))
    return json.dumps([g["stages"] for g in doc["groups"]], sort_keys=True)


def test_a_flipped_bit_or_a_missing_event_file_is_converted_again(fresh, ntscope_cli):
    run, clean = fresh(SMALL, "run"), fresh(SMALL, "clean")
    assert ntscope_cli("analyze", clean, "--quiet", "--no-interference").returncode == 0
    traces = inputs_digest(run)
    bad = os.path.join(run, "initiator", "parquet", "nvme", "nvme_setup_cmd.parquet")
    flip_a_bit(bad)
    gone = os.path.join(run, "target", "parquet", "block", "block_rq_issue.parquet")
    os.unlink(gone)
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
    assert r.returncode == 0, r.stderr
    assert f"converting {run}/initiator/trace.dat again: {bad} is not the file the converter wrote (sha256 " in r.stderr
    assert f"converting {run}/target/trace.dat again: {gone} is missing (metadata.json lists it with 329 rows)" in r.stderr
    assert stage_sums(run) == stage_sums(clean) and report_count(run) == SMALL_IOS
    assert inputs_digest(run) == traces


@pytest.mark.parametrize("name,key,count", [("kallsyms.parquet", "kallsyms", "symbols"),
                                            ("printk_formats.parquet", "printk_formats", "formats")])
def test_a_flipped_bit_in_a_symbol_file_is_converted_again(fresh, ntscope_cli, name, key, count):
    # the views read kallsyms.parquet and printk_formats.parquet beside the event files (ksym,
    # printk_format): a damaged one is found and converted again as an event file is
    run = fresh(SMALL)
    bad = os.path.join(run, "initiator", "parquet", name)
    flip_a_bit(bad)
    r = ntscope_cli("sql", run, "-c", f"SELECT count(*) AS n FROM {key} WHERE host = 'initiator'")
    assert r.returncode == 0, r.stderr
    assert f"converting {run}/initiator/trace.dat again: {bad} is not the file the converter wrote (sha256 " in r.stderr
    meta = json.load(open(os.path.join(run, "initiator", "parquet", "metadata.json")))
    assert r.stdout.split() == ["n", str(meta[key][count])] and meta[key]["sha256"] == hashlib.sha256(
        open(bad, "rb").read()).hexdigest()


def test_a_trace_replaced_under_its_parquet_is_converted_again(fresh, ntscope_cli):
    # the same size and the old mtime: a size+mtime check took the old Parquet for it
    run = fresh(SMALL)
    trace = os.path.join(run, "target", "trace.dat")
    st = os.stat(trace)
    with open(trace, "rb") as f:
        data = f.read()
    assert data.count(b"Linux target 6.1") == 1
    with open(trace, "wb") as f:                      # another trace: the uname its options give differs
        f.write(data.replace(b"Linux target 6.1", b"Linux tarjet 6.1"))
    os.utime(trace, ns=(st.st_atime_ns, st.st_mtime_ns))
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
    assert r.returncode == 0, r.stderr
    assert f"converting {trace} again: {trace} is not the trace {run}/target/parquet was converted from" in r.stderr
    meta = json.load(open(os.path.join(run, "target", "parquet", "metadata.json")))
    assert meta["uname"].startswith("Linux tarjet") and meta["source"]["sha256"] == hashlib.sha256(
        open(trace, "rb").read()).hexdigest()


def test_verify_hashes_files_whose_stat_looks_unchanged(fresh, ntscope_cli):
    # a file rewritten behind a size and stat that match those recorded (here: the record made to
    # match the rewritten file): the fast check trusts it, --verify reads it and converts again
    run = fresh(SMALL)
    rel = "nvme/nvme_complete_rq.parquet"
    path = os.path.join(run, "initiator", "parquet", rel)
    rows = pq.read_table(path).num_rows
    pq.write_table(pq.read_table(path).slice(0, 10), path)
    meta_path = os.path.join(run, "initiator", "parquet", "metadata.json")
    meta = json.load(open(meta_path))
    (entry,) = [e for e in meta["events"] if e["file"] == rel]
    entry["bytes"] = os.path.getsize(path)
    meta["ntscope_written"]["files"][rel] = derived.stat_key(os.stat(path))
    derived.write_metadata(os.path.join(run, "initiator"), meta)   # sealed, as only ntscope itself can
    query = "SELECT count(*) AS n FROM raw_nvme WHERE event = 'nvme_complete_rq'"
    r = ntscope_cli("sql", run, "-c", query)
    assert r.returncode == 0 and "again" not in r.stderr and r.stdout.split() == ["n", "10"], r.stderr  # stat only
    r = ntscope_cli("sql", run, "--verify", "-c", query)
    assert r.returncode == 0, r.stderr
    assert f"again: {path} is not the file the converter wrote" in r.stderr and r.stdout.split() == ["n", str(rows)]


def kept_side(run):
    return os.path.join(run, ".ntscope", "compare-side")


def test_a_kept_compare_side_swapped_or_forged_is_built_again(fresh, ntscope_cli, tmp_path):
    base, run, other = fresh(SMALL, "base"), fresh(OTHER, "run"), fresh(SMALL, "other")
    r = ntscope_cli("compare", base, run, "--quiet", "--no-progress", "--out", str(tmp_path / "ref"))
    assert r.returncode == 0, r.stderr
    reference = json.load(open(tmp_path / "ref" / "compare.json"))
    assert reference["verdicts"][0]["verdict"] == "slower"
    assert ntscope_cli("compare", run, other, "--quiet", "--out", str(tmp_path / "x")).returncode == 0
    # the other run's kept files swapped into the run's side (side.json kept): SLOWER must stay
    for name in ("stages.parquet", "ios.parquet", "info.parquet"):
        shutil.copy(os.path.join(kept_side(other), name), os.path.join(kept_side(run), name))
    r = ntscope_cli("compare", base, run, "--quiet", "--no-progress", "--out", str(tmp_path / "swapped"))
    assert r.returncode == 0, r.stderr
    assert f"the compare input kept in {kept_side(run)} is damaged; building it again (" in r.stderr
    assert "not the files kept (size or sha256 differs)" in r.stderr
    assert json.load(open(tmp_path / "swapped" / "compare.json")) == reference
    # a side.json edited with the key left right: its interference does not reach compare.json
    side = os.path.join(kept_side(run), "side.json")
    doc = json.load(open(side))
    doc["first_run"]["interference"]["streams"] = [{"forged": True}]
    with open(side, "w") as f:
        json.dump(doc, f)
    r = ntscope_cli("compare", base, run, "--quiet", "--no-progress", "--out", str(tmp_path / "forged"))
    assert r.returncode == 0, r.stderr
    assert "side.json is not sealed by this user's ntscope" in r.stderr
    assert json.load(open(tmp_path / "forged" / "compare.json")) == reference
    # another user (another cache, another key): their conversions are not trusted (converted
    # again, said why) and the kept sides are then stale: nothing is called damaged
    r = ntscope_cli("compare", base, run, "--quiet", "--no-progress", "--out", str(tmp_path / "other-user"),
                    env={"NTSCOPE_CACHE": str(tmp_path / "other-cache")})
    assert r.returncode == 0, r.stderr
    assert "converted by another user or with another NTSCOPE_CACHE" in r.stderr
    assert "damaged" not in r.stderr
    assert json.load(open(tmp_path / "other-user" / "compare.json")) == reference


# ------------------------------------------------------------------ 13. what the converter skipped reaches the verdict
def data_loss(run):
    doc = json.load(open(os.path.join(run, "report", "report.json")))
    return {s["name"]: (s["severity"], s["value"]) for s in doc["pipeline_stats"] if s["name"].startswith("data_loss:")}


@pytest.mark.parametrize("edits, rows", [
    ([("block_rq_issue", "dev_t dev;", "dev_t d-v;"), ("block_rq_complete", "dev_t dev;", "dev_t d-v;")],
     {"data_loss:initiator:skipped_event_type:block:block_rq_complete": ("warning", 329),
      "data_loss:initiator:skipped_event_type:block:block_rq_issue": ("warning", 329)}),
    ([("block_rq_issue", "ID: 305", "ID: 905")],
     {"data_loss:initiator:unknown_event_id:305": ("warning", 329)}),
])
def test_what_the_converter_skipped_is_data_loss(fresh, ntscope_cli, edits, rows):
    run = fresh(SMALL, convert=False)
    v6_with(fixture_trace(SMALL, "initiator"), os.path.join(run, "initiator", "trace.dat"), *edits)
    before = inputs_digest(run)
    r = ntscope_cli("analyze", run, "--quiet", "--no-progress")
    assert r.returncode == 0, r.stderr                      # the report is written, its losses on top
    assert data_loss(run) == rows
    first = sorted(rows)[0][len("data_loss:"):]
    assert f"DATA LOSS ({first}, 329): " in open(os.path.join(run, "report", "report.txt")).read()
    r = ntscope_cli("analyze", run, "--quiet", "--no-progress", "--strict")
    assert r.returncode == 1, r.stderr
    # exit 1 says why: the rows that made it, then the fix
    assert f"ntscope: --strict: exit 1: the run lost data or left commands unmatched (data_loss:{first} 329" in r.stderr
    assert "fix: record again as its fix says, or drop --strict" in r.stderr
    assert inputs_digest(run) == before


def test_a_clean_run_has_no_data_loss_and_strict_exits_0(fresh, ntscope_cli):
    run = fresh(SMALL)
    r = ntscope_cli("analyze", run, "--quiet", "--no-progress", "--strict", "--no-interference")
    assert r.returncode == 0, r.stderr
    assert data_loss(run) == {}


# ------------------------------------------------------------------ 14. every input file is checked like trace.dat
def make_fifo(path):
    if os.path.lexists(path):
        os.unlink(path)
    os.mkfifo(path)


@pytest.mark.parametrize("make, args, message", [
    (lambda run: make_fifo(os.path.join(run, "initiator", "host.json")), ["analyze", "{run}"],
     "host.json {run}/initiator/host.json is a FIFO, not a regular file; fix: write it as capture does"),
    (lambda run: (os.unlink(os.path.join(run, "target", "host.json")),
                  os.symlink("/dev/zero", os.path.join(run, "target", "host.json"))), ["analyze", "{run}"],
     "host.json {run}/target/host.json is a device, not a regular file"),
    (lambda run: open(os.path.join(run, "initiator", "host.json"), "w").write("{" + " " * (2 << 20) + "}"),
     ["analyze", "{run}"], "host.json {run}/initiator/host.json is 2,097,154 bytes, more than the 1,048,576 a host.json can be"),
    (lambda run: make_fifo(os.path.join(run, "spec.toml")), ["analyze", "{run}", "--spec", "{run}/spec.toml"],
     "spec file {run}/spec.toml is a FIFO, not a regular file; fix: see reports/README.md"),
    (lambda run: make_fifo(os.path.join(run, "truth.json")), ["sweep", "{run}", "{other}", "--param", "iodepth"],
     "truth.json {run}/truth.json is a FIFO, not a regular file; fix: give the values with --values"),
    (lambda run: (os.unlink(os.path.join(run, "initiator", "trace.dat")),
                  make_fifo(os.path.join(run, "initiator", "parquet", "metadata.json"))), ["analyze", "{run}"],
     "metadata.json {run}/initiator/parquet/metadata.json is a FIFO, not a regular file; there is no trace.dat"),
])
def test_input_files_that_are_not_regular_or_too_large(fresh, ntscope_cli, make, args, message):
    run, other = fresh(SMALL, "run"), fresh(OTHER, "other")
    make(run)
    before = inputs_digest(run), inputs_digest(other)
    r = subprocess.run([sys.executable, "-m", "ntscope", *[a.format(run=run, other=other) for a in args], "--quiet"],
                       env=dict(os.environ, NTSCOPE_BIN=converter_path()), capture_output=True, text=True,
                       timeout=120)   # a FIFO read would block: the timeout fails the test instead of hanging it
    refused(r, message.format(run=run))
    assert (inputs_digest(run), inputs_digest(other)) == before


def converter_path():
    from ntscope.common import converter
    return converter.path()


# ------------------------------------------------------------------ 15. one run is one run; names are data
def test_a_run_given_twice_under_two_paths_is_refused(fresh, ntscope_cli, tmp_path):
    run = fresh(SMALL)
    link = str(tmp_path / "link")
    os.symlink(run, link)
    r = ntscope_cli("compare", run, link, "--quiet")
    refused(r, f"{link} is on both sides (as {run} and {link}: the same folder)")
    r = ntscope_cli("sweep", run, run, "--values", "1,2", "--quiet")
    refused(r, f"sweep names {run} twice; fix: give each run of the series once")
    r = ntscope_cli("sweep", run, link, "--values", "1,2", "--quiet")
    refused(r, f"sweep names {link} twice (as {run}: the same folder)")
    assert not os.path.exists(os.path.join(run, "report"))


@pytest.mark.parametrize("name", ["report", ".hidden"])
def test_a_host_folder_with_a_reserved_name_is_said_not_skipped(fresh, ntscope_cli, name):
    run = fresh(SMALL)
    shutil.move(os.path.join(run, "target"), os.path.join(run, name))
    before = tree_digest(run)
    r = ntscope_cli("analyze", run, "--quiet")
    refused(r, f"{run}/{name} holds a host's trace (trace.dat or parquet/), but a host folder may not be named {name!r}",
            "fix: rename the folder")
    assert tree_digest(run) == before


OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"   # a terminal's clipboard write: "rm -rf ~"


def test_terminal_sequences_in_names_are_printed_escaped(fresh, ntscope_cli):
    run = fresh(SMALL)
    host = f"tar{OSC52}get"
    shutil.move(os.path.join(run, "target"), os.path.join(run, host))
    hj = os.path.join(run, "initiator", "host.json")
    doc = json.load(open(hj))
    doc["run"] = f"run{OSC52}\x1b[2J"
    with open(hj, "w") as f:
        json.dump(doc, f)
    r = ntscope_cli("analyze", run, "--no-progress", "--no-interference")
    assert r.returncode == 2 and "inputs are inconsistent" in r.stderr     # the hosts name different runs
    for text in (r.stdout, r.stderr, open(os.path.join(run, "report", "report.txt")).read()):
        assert "\x1b" not in text and "\x07" not in text
    assert "tar\\x1b]52;c;cm0gLXJmIH4K\\x07get" in r.stdout and "initiator=run\\x1b]52;c;" in r.stdout
    assert "tar\\x1b]52;c;cm0gLXJmIH4K\\x07get" in r.stderr


@pytest.mark.parametrize("truth, message", [
    ({"lab": {"params": {"qd": "1e999"}}}, "qd = '1e999' is not a finite number"),
    ('{"lab": {"params": {"qd": 1e999}}}', "is not valid JSON (the number 1e999 is out of range)"),
    ('{"lab": {"params": {"qd": NaN}}}', "is not valid JSON (NaN is not a number JSON allows)"),
    ([{"qd": 1}], "holds a list, not an object"),
])
def test_sweep_values_that_are_not_finite_numbers_are_refused(fresh, ntscope_cli, truth, message):
    a, b = fresh(SMALL, "a"), fresh(OTHER, "b")
    with open(os.path.join(a, "truth.json"), "w") as f:
        f.write(truth if isinstance(truth, str) else json.dumps(truth))
    refused(ntscope_cli("sweep", a, b, "--param", "qd", "--quiet"), message, "fix: give the values with --values")
    refused(ntscope_cli("sweep", a, b, "--values", "nan,inf", "--quiet"),
            "--values 'nan,inf' is not a comma list of finite numbers; fix: e.g. --values 1,4,16,32")


# ------------------------------------------------------------------ 16. the message contract: exit 2, what, where, the right fix
# odd flag values (a time bucket of nan or 1e-12, a window of 1.2.3:, a memory limit of 1KB, an
# SLO bound or a size beyond any I/O): class 6's test_bad_flags_exit_2_and_keep_the_good_report
@pytest.mark.parametrize("case", ["truth_list", "host_json_binary", "host_json_folder", "trace_loop", "trace_dangling"])
def test_odd_input_files_get_the_right_message(fresh, ntscope_cli, case):
    run, other = fresh(SMALL, "run"), fresh(OTHER, "other")
    hj, trace = os.path.join(run, "initiator", "host.json"), os.path.join(run, "target", "trace.dat")
    cmd, message = ["analyze", run], None
    if case == "truth_list":
        with open(os.path.join(run, "truth.json"), "w") as f:
            f.write("[1, 2]")
        cmd, message = ["sweep", run, other, "--param", "iodepth"], f"truth.json {run}/truth.json holds a list, not an object"
    elif case == "host_json_binary":
        with open(hj, "wb") as f:
            f.write(b"\x00\xff\xfe{")
        message = f"host.json {hj} is not UTF-8 text (byte 0xff at offset 1)"
    elif case == "host_json_folder":
        os.unlink(hj)
        os.mkdir(hj)
        message = f"host.json {hj} is a directory, not a regular file"
    elif case == "trace_loop":
        os.unlink(trace)
        os.symlink(trace, trace)
        message = f"{trace} is a symbolic link loop; fix: copy the host's trace.dat file itself into the run"
    else:
        os.unlink(trace)
        os.symlink(os.path.join(run, "nowhere.dat"), trace)
        message = f"{trace} is a symbolic link to '{run}/nowhere.dat', which does not exist; fix: copy"
    before = inputs_digest(run)
    r = ntscope_cli(*cmd, "--quiet", "--no-progress")
    refused(r, message)
    assert inputs_digest(run) == before


@pytest.mark.parametrize("edit, column, message", [
    (("nvme_setup_cmd", "u32 nsid;", "u32 ts;  "), "field_ts", None),            # the converter's own rename
    (("nvme_setup_cmd", "u8 flags;", "u8 event;"), "field_event", None),         # raw_nvme's event column kept
    (("nvme_setup_cmd", "bool metadata;", "bool filename;"), "filename", None),  # not read_parquet's filename
    (("nvme_setup_cmd", "offset:52;\tsize:2;", "offset:52;\tsize:0;"), None,
     "nvme_setup_cmd.parquet: column cid is USMALLINT[], but ntscope reads cid as BIGINT"),   # a size-0 u16: an array
])
def test_odd_trace_field_names_and_sizes(fresh, ntscope_cli, edit, column, message):
    run = fresh(SMALL, convert=False)
    v6_with(fixture_trace(SMALL, "initiator"), os.path.join(run, "initiator", "trace.dat"), edit)
    before = inputs_digest(run)
    r = ntscope_cli("analyze", run, "--quiet", "--no-progress")
    if message is None:
        assert r.returncode == 0, r.stderr
        assert report_count(run) == SMALL_IOS
        r = ntscope_cli("sql", run, "-c", f"SELECT count({column}) FROM raw_nvme WHERE event = 'nvme_setup_cmd'")
        assert r.returncode == 0 and int(r.stdout.split()[1]) > 0, r.stderr
    else:
        refused(r, message, "fix: check the event's format in the trace")
    assert inputs_digest(run) == before


def test_event_times_beyond_2_62_ns_are_refused(fresh, ntscope_cli, ntscope_bin):
    # an OFFSET option of 2^63 (and -2^63) moves every time past what the views can add to
    for offset in ("9223372036854775808", "-9223372036854775808"):
        run = fresh(SMALL, f"off{offset[0]}")
        os.unlink(os.path.join(run, "initiator", "trace.dat"))
        shutil.rmtree(os.path.join(run, "initiator", "parquet"))
        subprocess.run([ntscope_bin, "synth", "known", "--out", os.path.join(run, "initiator", "trace.dat"),
                        f"--offset={offset}"], check=True, capture_output=True)
        r = ntscope_cli("analyze", run, "--quiet", "--no-progress")
        refused(r, f"the events of {run}/initiator are stamped up to ", f"OFFSET {offset}",
                "fix: record the host again")


def test_a_full_disk_at_the_timeline(fresh, ntscope_cli, tmpfs):
    fs = tmpfs("3m")
    run = str(fs / "run")
    shutil.copytree(fresh(SMALL), run)
    assert ntscope_cli("analyze", run, "--quiet", "--no-interference").returncode == 0
    before = tree_digest(os.path.join(run, "report"))
    fd = os.open(fs / "filler", os.O_WRONLY | os.O_CREAT)   # no room at all: the set's first file fails
    for block in (65536, 4096, 1):
        try:
            while True:
                os.write(fd, b"\0" * block)
        except OSError:
            pass
    os.close(fd)
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--group-by", "type,queue")
    refused(r, "No space left on device", "free disk space")
    assert tree_digest(os.path.join(run, "report")) == before


def test_ctrl_c_during_a_query_exits_130(fresh, ntscope_bin):
    run = fresh(SMALL)
    slow = "SELECT count(*) FROM range(1000000000) a, range(1000) b WHERE (a.range * b.range) % 7 = 3"
    p = subprocess.Popen([sys.executable, "-m", "ntscope", "sql", run, "-c", slow], env=dict(os.environ, NTSCOPE_BIN=ntscope_bin),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(4)                                   # well inside the query (minutes without the interrupt)
    os.killpg(p.pid, signal.SIGINT)                 # what Ctrl-C sends: the whole foreground group
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "ntscope: interrupted" in err and "Traceback" not in err
