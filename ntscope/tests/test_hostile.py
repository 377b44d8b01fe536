"""Hostile and careless input, by class (issue "no input may destroy data, run code, or give
another run's answer"). Each test asserts the exact outcome: the exit code, the message,
that inputs are intact, and that nothing else was read, run or written.

Classes: 2 shell injection through just, 3 names from trace files reaching SQL, 4 literal
paths, 5 inconsistent runs, 6 the exit-code contract, 7 atomic report sets, 8 non-regular
trace files, 9 a fresh machine. (Classes 1, 3 and 8 on the converter's side: analyzer/tests.)"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ntscope.sql import views

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SMALL = "lab-6.1-stock-base-randread"          # 328 reads, stock 6.1, two hosts
SMALL_IOS = 328
OTHER = "lab-6.1-stock-slow-device"            # another run with another count


def tree_digest(path):
    """sha256 of every file under path (names and bytes): proves inputs are untouched."""
    h = hashlib.sha256()
    for d, dirs, files in sorted(os.walk(path)):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(d, f)
            h.update(os.path.relpath(p, path).encode())
            with open(p, "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


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
    assert r.stdout == "" and sorted(os.listdir(out)) == ["compare.html", "compare.json", "compare.txt"]
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
    ({"target": {"role": "server"}}, ["input_error:role_unknown:target"]),
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
    (["--device", "nvme9n9"], "--device nvme9n9 matches no I/O of this run; fix: use one of: nvme0n1"),
    (["--stage-set", "ntprof"], "--stage-set ntprof is not reported for this run; fix: use one of: stock"),
])
def test_bad_flags_exit_2_and_keep_the_good_report(fresh, ntscope_cli, flags, message):
    run = fresh(SMALL)
    assert ntscope_cli("analyze", run, "--quiet", "--no-interference").returncode == 0
    before = tree_digest(os.path.join(run, "report"))
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", *flags)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and ("fix:" in r.stderr or "usage:" in r.stderr)
    no_traceback(r)
    assert tree_digest(os.path.join(run, "report")) == before


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
    r = ntscope_cli("analyze", run, "--quiet")
    assert r.returncode == 2 and "the run has no initiator I/O command to report" in r.stderr
    no_traceback(r)
    assert not os.path.exists(os.path.join(run, "report"))


def test_a_truncated_parquet_file(fresh, ntscope_cli):
    run = fresh(SMALL)
    p = os.path.join(run, "initiator", "parquet", "nvme", "nvme_setup_cmd.parquet")
    with open(p, "r+b") as f:
        f.truncate(os.path.getsize(p) // 2)
    r = ntscope_cli("analyze", run, "--quiet")
    assert r.returncode == 2 and "nvme_setup_cmd.parquet" in r.stderr
    assert f"cannot read the Parquet files of {run}" in r.stderr and "fix: convert the run again" in r.stderr
    no_traceback(r)


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
    assert in_txt == in_json and in_txt in (["type=read"], ["type=read, queue=1", "type=read, queue=2"])
    assert sorted(e for e in os.listdir(run) if e.startswith(".")) == [".ntscope", ".report.lock"]
    assert sorted(os.listdir(os.path.join(run, ".ntscope"))) == [".compare-side.lock", "compare-side"]


def test_kill_9_in_the_middle_leaves_the_previous_set(fresh, ntscope_bin):
    run = fresh(SMALL)
    env = dict(os.environ, NTSCOPE_BIN=ntscope_bin)
    subprocess.run([sys.executable, "-m", "ntscope", "analyze", run, "--quiet", "--group-by", "type"],
                   env=env, check=True, capture_output=True)
    before = tree_digest(os.path.join(run, "report"))
    # the process kills itself with SIGKILL after the first file of the new set is written
    r = subprocess.run([sys.executable, "-m", "ntscope", "analyze", run, "--quiet", "--group-by", "type,queue"],
                       env=dict(env, NTSCOPE_TEST_KILL_DURING_COMMIT="report"), capture_output=True)
    assert r.returncode == -signal.SIGKILL
    assert any(e.startswith(".report.tmp-") for e in os.listdir(run)), "the set was never being written"
    assert tree_digest(os.path.join(run, "report")) == before       # not a mixed set
    subprocess.run([sys.executable, "-m", "ntscope", "analyze", run, "--quiet", "--group-by", "type,queue"],
                   env=env, check=True, capture_output=True)
    assert sorted(e for e in os.listdir(run) if e.startswith(".")) == [".ntscope", ".report.lock"]   # stale temp cleaned
    assert groups_of(run)[0] == ["type=read, queue=1", "type=read, queue=2"]


def test_kill_9_while_keeping_the_compare_input_leaves_the_previous_one(fresh, ntscope_bin, tmp_path):
    from ntscope.compare import side_cache
    run = fresh(SMALL)
    env = dict(os.environ, NTSCOPE_BIN=ntscope_bin)
    subprocess.run([sys.executable, "-m", "ntscope", "analyze", run, "--quiet"], env=env, check=True, capture_output=True)
    kept = os.path.join(run, ".ntscope")
    before = tree_digest(side_cache.folder(run))
    note = os.path.join(run, "target", "notes.txt")   # an input changes: the next analyze keeps a new side
    with open(note, "w") as f:
        f.write("changed")
    r = subprocess.run([sys.executable, "-m", "ntscope", "analyze", run, "--quiet"],
                       env=dict(env, NTSCOPE_TEST_KILL_DURING_COMMIT="compare-side"), capture_output=True)
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
    env = dict(os.environ, NTSCOPE_CACHE=str(tmp_path / "cache"), PIP_INDEX_URL="http://127.0.0.1:9/simple",
               PIP_RETRIES="0", PIP_TIMEOUT="2", PIP_NO_CACHE_DIR="1", PIP_FIND_LINKS="")
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
