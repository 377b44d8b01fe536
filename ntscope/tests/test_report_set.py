"""ReportSet (ntscope/common/output.py) with a file written in the background (analyze's timeline: its
encoder runs while analyze renders the report and DuckDB writes the per-I/O Parquet): the other
files are written meanwhile,
the set appears only once every file is complete, and a failure on either side leaves the
previous set as it was and no process behind; files of other sets in the folder survive."""
import json
import os
import subprocess
import sys

import pytest

from ntscope.common import out_folder
from ntscope.common.errors import NtscopeError
from ntscope.common.output import ReportSet

# a real child process that writes its file after a while (the stand-in for the encoder)
SLOW_WRITER = "import sys, time; time.sleep(float(sys.argv[2])); open(sys.argv[1], 'w').write('slow')"


class Background:
    """What a background writer returns (timeline.Encoding's interface), with a log."""

    def __init__(self, path, log, seconds=0.2, fail=False):
        self.proc = subprocess.Popen([sys.executable, "-c", SLOW_WRITER, path, str(seconds)])
        self.log, self.fail = log, fail

    def finish(self):
        self.proc.wait()
        self.log.append("finish")
        if self.fail:
            raise NtscopeError("the background writer failed")

    def abort(self):
        self.proc.kill()
        self.proc.wait()
        self.log.append("abort")


def previous_set(tmp_path):
    out = tmp_path / "report"
    s = ReportSet(str(out))
    s.add("a.txt", "old a\n")
    s.add("slow.bin", "old slow\n")
    s.commit()
    return out


def contents(out):
    """The folder's files and their text (folders and ntscope's manifest left out: manifest() reads it)."""
    return {e: open(os.path.join(out, e)).read() for e in sorted(os.listdir(out))
            if e != out_folder.MANIFEST and os.path.isfile(os.path.join(out, e))}


def manifest(out):
    """The names the folder's manifest lists as ntscope's."""
    return json.load(open(os.path.join(out, out_folder.MANIFEST)))["files"]


def test_other_files_are_written_while_the_background_one_runs(tmp_path):
    out, log, started = tmp_path / "report", [], []

    def slow(path):
        started.append(Background(path, log))
        return started[0]

    def later(path):
        log.append(f"later, background running: {started[0].proc.poll() is None}")
        with open(path, "w") as f:
            f.write("later")

    s = ReportSet(str(out))
    s.add("slow.bin", slow)
    s.add("later.txt", later)
    s.add("text.txt", "text")
    written = s.commit()
    assert log == ["later, background running: True", "finish"]
    assert contents(out) == {"later.txt": "later", "slow.bin": "slow", "text.txt": "text"}
    assert sorted(os.path.basename(w) for w in written) == ["later.txt", "slow.bin", "text.txt"]
    assert [e for e in os.listdir(tmp_path) if e.startswith(".")] == []


def test_a_failed_background_writer_leaves_the_previous_set(tmp_path):
    out = previous_set(tmp_path)
    before, log = contents(out), []
    s = ReportSet(str(out))
    s.add("a.txt", "new a\n")
    s.add("slow.bin", lambda path: Background(path, log, fail=True))
    with pytest.raises(NtscopeError, match="background writer failed"):
        s.commit()
    assert log == ["finish"]
    assert contents(out) == before
    assert [e for e in os.listdir(tmp_path) if e.startswith(".")] == []


def test_a_failure_while_it_runs_stops_it_and_leaves_the_previous_set(tmp_path):
    out = previous_set(tmp_path)
    before, log, started = contents(out), [], []

    def slow(path):
        started.append(Background(path, log, seconds=30))
        return started[0]

    def broken(path):
        raise NtscopeError("a later file failed")

    s = ReportSet(str(out))
    s.add("slow.bin", slow)
    s.add("a.txt", broken)
    with pytest.raises(NtscopeError, match="a later file failed"):
        s.commit()
    assert log == ["abort"] and started[0].proc.returncode is not None   # killed, not left running
    assert contents(out) == before
    assert [e for e in os.listdir(tmp_path) if e.startswith(".")] == []


def test_a_file_started_before_commit_runs_while_the_caller_works(tmp_path):
    """start() (analyze's timeline) sets the writer going at once, in the set's private folder,
    and commit() waits for it: the set appears complete, with the started file."""
    out, log, started = previous_set(tmp_path), [], []

    def slow(path):
        started.append(Background(path, log))
        return started[0]

    s = ReportSet(str(out))
    s.start("slow.bin", slow)
    assert started[0].proc.poll() is None and contents(out)["slow.bin"] == "old slow\n"
    log.append("caller works")
    s.add("a.txt", "new a\n")
    assert sorted(os.path.basename(w) for w in s.commit()) == ["a.txt", "slow.bin"]
    assert log == ["caller works", "finish"]
    assert contents(out) == {"a.txt": "new a\n", "slow.bin": "slow"}
    assert os.listdir(tmp_path) == ["report"]


def test_a_set_aborted_after_start_stops_the_writer_and_leaves_the_previous_set(tmp_path):
    """A failure between start() and commit() (the caller's abort()): the writer is killed, its
    private folder removed, the earlier set untouched."""
    out, log, started = previous_set(tmp_path), [], []
    before = contents(out)

    def slow(path):
        started.append(Background(path, log, seconds=30))
        return started[0]

    s = ReportSet(str(out))
    s.start("slow.bin", slow)
    assert any(e.startswith(".report.tmp-") for e in os.listdir(tmp_path))
    s.abort()
    assert log == ["abort"] and started[0].proc.returncode is not None
    assert contents(out) == before
    assert os.listdir(tmp_path) == ["report"]


def test_a_stale_folder_of_this_pid_does_not_join_the_set(tmp_path):
    """A private folder left under this process's id (a dead writer whose pid came back) is
    emptied before the set is written: its files do not join the set, and a file ntscope did
    not write there is not removed either (it goes into the folder, not into the manifest)."""
    out = previous_set(tmp_path)
    stale = tmp_path / f".report.tmp-{os.getpid()}"
    stale.mkdir()
    (stale / "stray.txt").write_text("not ours\n")
    s = ReportSet(str(out))
    s.add("a.txt", "new a\n")
    s.commit()
    assert contents(out) == {"a.txt": "new a\n", "slow.bin": "old slow\n", "stray.txt": "not ours\n"}
    assert manifest(out) == ["a.txt", "slow.bin"]
    assert os.listdir(tmp_path) == ["report"]


def test_files_of_other_sets_survive_and_this_sets_are_replaced(tmp_path):
    """A set replaces its own files and keeps the others in the folder (compare.* written into a
    run's report folder survive its next analyze), and leaves no working folder behind."""
    out = previous_set(tmp_path)
    other = ReportSet(str(out))
    other.add("compare.txt", "comparison\n")
    other.commit()
    again = ReportSet(str(out))
    again.add("a.txt", "new a\n")
    assert again.commit() == [str(out / "a.txt")]
    assert contents(out) == {"a.txt": "new a\n", "compare.txt": "comparison\n", "slow.bin": "old slow\n"}
    assert os.listdir(tmp_path) == ["report"]   # no .report.tmp-* / .report.old-* left


def test_a_dropped_file_of_the_earlier_set_goes_and_the_others_stay(tmp_path):
    out = previous_set(tmp_path)
    (out / "compare.txt").write_text("comparison\n")
    s = ReportSet(str(out))
    s.add("a.txt", "new a\n")
    s.drop("slow.bin")
    s.drop("never-there.txt")   # nothing to remove: no error
    assert s.commit() == [str(out / "a.txt")]
    assert contents(out) == {"a.txt": "new a\n", "compare.txt": "comparison\n"}


def test_analyze_without_interference_removes_an_earlier_interference_report(fixture_run, ntscope_cli, tmp_path):
    """interference.* belong to analyze's set: `--no-interference` leaves none from an earlier
    analyze (made maybe with another filter) beside its report; other sets' files stay."""
    run, out = fixture_run("stock-randread-4k-qd8"), str(tmp_path / "rep")
    r = ntscope_cli("analyze", run, "--quiet", "--out", out)
    assert r.returncode == 0, r.stderr
    names = sorted(os.listdir(out))
    assert {"interference.txt", "interference.json", "interference.html", "report.json"} <= set(names)
    with open(os.path.join(out, "compare.txt"), "w") as f:
        f.write("comparison\n")
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--out", out)
    assert r.returncode == 0, r.stderr
    after = sorted(os.listdir(out))
    assert after == sorted([n for n in names if not n.startswith("interference.")] + ["compare.txt"])
    assert "compare.txt" not in manifest(out)   # a file ntscope did not write: kept, and not claimed
    assert open(os.path.join(out, "compare.txt")).read() == "comparison\n"


def test_the_users_files_and_folders_survive_a_rewrite_and_are_not_claimed(tmp_path):
    """Anything ntscope did not write in the folder (a notes/ folder, a dot file, a file beside
    the set's) is kept as it is by every later set; the manifest lists only the sets' files."""
    out = previous_set(tmp_path)
    (out / "notes" / "deep").mkdir(parents=True)
    (out / "notes" / "deep" / "n.txt").write_text("n\n")
    (out / ".mine").write_text("mine\n")
    (out / "mine.txt").write_text("mine too\n")
    os.symlink("a.txt", out / "link")
    inode = os.stat(out / "notes").st_ino
    s = ReportSet(str(out))
    s.add("a.txt", "new a\n")
    s.drop("slow.bin")
    s.commit()
    assert sorted(os.listdir(out)) == [".mine", out_folder.MANIFEST, "a.txt", "link", "mine.txt", "notes"]
    assert (out / "notes" / "deep" / "n.txt").read_text() == "n\n" and os.stat(out / "notes").st_ino == inode
    assert (out / ".mine").read_text() == "mine\n" and os.readlink(out / "link") == "a.txt"
    assert manifest(out) == ["a.txt"]
    assert os.listdir(tmp_path) == ["report"]


def test_a_folder_ntscope_did_not_write_is_refused_before_anything_is_written(tmp_path):
    out = tmp_path / "photos"
    out.mkdir()
    (out / "cat.jpg").write_bytes(b"a cat")
    s = ReportSet(str(out))
    s.add("a.txt", "a\n")
    with pytest.raises(NtscopeError, match=f"refusing to write into {out}: it is not empty \\(1 entry: cat.jpg\\) "
                                           "and ntscope did not write it"):
        s.commit()
    assert os.listdir(out) == ["cat.jpg"] and sorted(os.listdir(tmp_path)) == ["photos"]


def dead_pid():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_what_a_dead_writer_left_aside_goes_back_not_away(tmp_path):
    """A writer killed between its swap and the emptying of the old set (.report.old-<pid>: the
    user's folders still there), or while it wrote its private folder (.report.tmp-<pid>): the
    next writer removes only the files the manifests there name and puts everything else back."""
    out = previous_set(tmp_path)
    pid = dead_pid()
    old = tmp_path / f".report.old-{pid}"
    old.mkdir()
    (old / out_folder.MANIFEST).write_text(out_folder.manifest_text(out_folder.REPORT, ["gone.txt"]))
    (old / "gone.txt").write_text("an earlier set's file\n")
    (old / "late.txt").write_text("written by the user while the set was swapped\n")
    (old / "notes").mkdir()
    (old / "notes" / "n.txt").write_text("n\n")
    tmp = tmp_path / f".report.tmp-{pid}"
    tmp.mkdir()
    (tmp / out_folder.MANIFEST).write_text(out_folder.manifest_text(out_folder.REPORT, ["a.txt"]))
    (tmp / "a.txt").write_text("half a new set\n")
    s = ReportSet(str(out))
    s.add("a.txt", "new a\n")
    s.commit()
    assert contents(out)["late.txt"] == "written by the user while the set was swapped\n"
    assert (out / "notes" / "n.txt").read_text() == "n\n"
    assert contents(out)["a.txt"] == "new a\n" and "gone.txt" not in contents(out)
    assert os.listdir(tmp_path) == ["report"]
