"""`just test` is tools/run_tests.py: every phase in order, each timed, a table at the end and one
record in the results file; a failed phase fails the suite without stopping the others, except
the phases every later one needs. The phases themselves are stood in for here (each real one is
a recipe the rest of the suite runs); ARCHITECTURE.md's "Test time" table is made from the records."""
import importlib.util
import json
import os

import pytest

from ntscope.common import bench_results

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def runner(monkeypatch, tmp_path):
    spec = importlib.util.spec_from_file_location("run_tests", os.path.join(REPO, "tools", "run_tests.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setenv("BENCH_RESULTS", str(tmp_path / "times.jsonl"))
    monkeypatch.setattr(mod, "setup_row", lambda: {"phase": "setup", "s": 12.0, "result": "ok", "cargo_deps": "kept"})
    monkeypatch.setattr(mod, "cache_state", lambda setup: ("warm", {"lab_kernel": True, "cargo_deps": True, "packages": True}))
    return mod


def stand_in(calls, fail=(), lab_lines=""):
    """A run_phase that records the recipe it was given, takes 2 s, fails for the phases in fail;
    the lab phase writes lab-test.sh's lines."""
    def run(args, env):
        calls.append(args[0])
        if args[0] == "lab-test":
            with open(env["LAB_TEST_TIMES"], "w") as f:
                f.write(lab_lines)
        return 2.0, (1 if args[0] in fail else 0)
    return run


def records(tmp_path):
    return [json.loads(l) for l in open(tmp_path / "times.jsonl")]


def test_every_phase_runs_in_order_and_the_record_holds_the_table(runner, tmp_path, capsys, monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "run_phase", stand_in(calls, lab_lines="lab-test-base\t31\tok\nnot a line\n"))
    assert runner.main([]) == 0
    assert calls == [p[1][0] for p in runner.PHASES]
    out = capsys.readouterr().out
    assert "==== test phases (cache: warm;" in out and "  lab: lab-test-base" in out
    rec, = records(tmp_path)
    assert rec["bench"] == "test-time" and rec["params"]["cache"] == "warm" and rec["params"]["complete"] is True
    rows = rec["figures"]["rows"]
    assert [r["phase"] for r in rows][:3] == ["setup", "packages", "converter build"]
    assert rows[-1] == {"phase": "  lab: lab-test-base", "s": 31, "result": "ok"}   # the bad line is left out
    # the total is the clock's time for the phases (the stand-ins take none) plus setup's 12 s
    assert 12 <= rec["figures"]["total_s"] < 14
    assert sum(r["s"] for r in rows if not r["phase"].startswith(" ")) == 12 + 2 * len(runner.PHASES)
    assert rec["figures"]["failed"] == []


def test_a_failed_phase_fails_the_suite_and_the_rest_still_run(runner, tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "run_phase", stand_in(calls, fail={"test-python"}))
    assert runner.main([]) == 1
    assert calls[-1] == "lab-test"                       # the phases after python ran
    assert records(tmp_path)[0]["figures"]["failed"] == ["python"]


def test_a_failed_build_stops_the_phases_that_need_it(runner, tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "run_phase", stand_in(calls, fail={"build"}))
    assert runner.main([]) == 1
    assert calls == ["_packages", "build"]
    assert records(tmp_path)[0]["figures"]["failed"] == ["converter build"]


def test_only_and_skip_choose_phases_and_an_unknown_one_is_named(runner, tmp_path, monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(runner, "run_phase", stand_in(calls))
    assert runner.main(["--only", "python,lab", "--skip", "lab"]) == 0
    assert calls == ["test-python"]
    assert records(tmp_path)[0]["params"]["complete"] is False
    assert runner.main(["--only", "pyton"]) == 2
    err = capsys.readouterr().err
    assert "unknown phase 'pyton'" in err and "fix: one of packages, converter build" in err


def test_the_lab_phase_does_not_run_the_capture_test_twice(runner, monkeypatch):
    monkeypatch.delenv("LAB_TEST_CAPTURE_TEST", raising=False)
    seen = {}

    def run(args, env):
        seen[args[0]] = env.get("LAB_TEST_CAPTURE_TEST")
        return 1.0, 0
    monkeypatch.setattr(runner, "run_phase", run)
    runner.main(["--no-record"])
    assert seen["lab-test"] == "0"                       # the capture phase ran test_capture.sh
    runner.main(["--only", "lab", "--no-record"])
    assert seen["lab-test"] == "1"


def test_the_table_takes_the_newest_complete_passing_run_of_each_cache_state(tmp_path):
    def rec(date, cache, total, failed=(), complete=True):
        found = {"lab_kernel": cache == "warm", "cargo_deps": cache == "warm", "packages": cache != "fresh"}
        return {"bench": "test-time", "date": date, "commit": "abcdef0123456789", "dirty": False,
                "machine": {"cpu_model": "x", "cores": 2, "memory_gib": 23.5, "kernel": "k"},
                "params": {"cache": cache, "found": found, "complete": complete, "ci": cache == "warm"},
                "figures": {"rows": [{"phase": "python", "s": total * 0.4, "result": "ok"},
                                     {"phase": "lab", "s": total * 0.5, "result": "ok"},
                                     {"phase": "  lab: x", "s": total, "result": "ok"}],
                            "total_s": total, "failed": list(failed)}, "goals": []}
    (tmp_path / "tools").mkdir()
    with open(tmp_path / "tools" / "test_times.jsonl", "w") as f:
        for r in (rec("2026-11-01T00:00:00Z", "fresh", 3000), rec("2026-11-02T00:00:00Z", "fresh", 2400),
                  rec("2026-11-03T00:00:00Z", "fresh", 100, failed=["lab"]), rec("2026-11-04T00:00:00Z", "fresh", 50, complete=False),
                  rec("2026-11-02T00:00:00Z", "warm", 1200), rec("2026-11-03T00:00:00Z", "partial", 1800),
                  rec("2026-11-04T00:00:00Z", "partial", 10, failed=["python"])):
            f.write(json.dumps(r) + "\n")
    lines = bench_results.test_time_table(str(tmp_path)).splitlines()
    assert lines[2] == "| fresh | 40.0 min | lab 20.0, python 16.0 (min) | 2026-11-02 | abcdef0123 | 2 cores, 23.5 GiB, x |"
    # a partial cache names what it found (a new home folder on a machine with the packages)
    assert lines[3].startswith("| partial (found: packages) | 30.0 min | lab 15.0, python 12.0 (min) | 2026-11-03 |")
    assert lines[4].startswith("| warm, CI=true | 20.0 min | lab 10.0, python 8.0 (min) | 2026-11-02 |")
    assert len(lines) == 5


def test_dependencies_setup_built_just_before_count_as_not_found(monkeypatch, tmp_path):
    """`bash setup.sh && just test` on a new machine: setup built the converter's dependencies, so
    the suite finds them, yet the machine had none: setup's record says so, and the state is not
    warm."""
    spec = importlib.util.spec_from_file_location("run_tests_state", os.path.join(REPO, "tools", "run_tests.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    (tmp_path / "build" / "release" / "deps").mkdir(parents=True)
    monkeypatch.setenv("CARGO_BUILD_BUILD_DIR", str(tmp_path / "build"))
    monkeypatch.setenv("NTSCOPE_CACHE", str(tmp_path / "cache"))   # no lab kernel there
    state, have = mod.cache_state({"cargo_deps": "built"})
    assert have["cargo_deps"] is False and have["lab_kernel"] is False and state != "warm"
    state, have = mod.cache_state({"cargo_deps": "kept"})
    assert have["cargo_deps"] is True and state != "warm"
    assert mod.cache_state(None)[1]["cargo_deps"] is True
