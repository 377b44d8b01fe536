"""Links and copies (issue "SQL that cannot touch the run, one integrity rule for every reader,
no writes through links"): ntscope never writes through a symbolic link (demo, the report
lock, a file written atomically), and one recording is one run however it is linked or copied.
Each case asserts the exit code, the message (what, where, fix) and that every byte of the
other run is unchanged."""
import os
import shutil

import pytest

from ntscope import demo
from ntscope.common import output, runs
from ntscope.common.errors import NtscopeError

from test_hostile import SMALL, fresh, inputs_digest, refused, tree_digest  # noqa: F401 (fresh: a fixture)

OTHER = "lab-6.1-stock-slow-device"


# ------------------------------------------------------------------ never write through a link
def test_demo_never_writes_through_a_linked_host_folder(fresh, ntscope_cli, tmp_path):
    victim = fresh(SMALL, convert=False)
    before = tree_digest(victim)
    runs_dir = tmp_path / "runs"
    (runs_dir / "demo").mkdir(parents=True)
    (runs_dir / "demo" / demo.MARK).touch()
    os.symlink(os.path.join(victim, "initiator"), runs_dir / "demo" / "initiator")
    r = ntscope_cli("demo", "--quiet", env={"NTSCOPE_RUNS": str(runs_dir)})
    refused(r, f"{runs_dir}/demo/initiator is a symbolic link (to {victim}/initiator)",
            "demo writes only into the host folders it made", "fix: remove it")
    assert tree_digest(victim) == before


@pytest.mark.parametrize("lock", [".report.lock", ".ntscope/.compare-side.lock"])
def test_a_lock_file_that_is_a_dangling_link_creates_nothing(fresh, ntscope_cli, tmp_path, lock):
    base, run = fresh(OTHER, "base"), fresh(SMALL)
    target = tmp_path / "elsewhere" / "planted"
    (tmp_path / "elsewhere").mkdir()
    os.makedirs(os.path.dirname(os.path.join(run, lock)), exist_ok=True)
    os.symlink(target, os.path.join(run, lock))
    before = inputs_digest(base)
    if lock == ".report.lock":
        r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
        refused(r, f"{run}/.report.lock is a symbolic link (to {target}); ntscope never writes through a link",
                "fix: remove the link")
        assert not os.path.exists(os.path.join(run, "report"))
    else:
        # the compare-side folder is a cache: the comparison is written, the side not kept, said so
        r = ntscope_cli("compare", base, run, "--quiet")
        assert r.returncode == 0, r.stderr
        assert f"compare did not keep its input for {base}" in r.stderr or \
            f"compare did not keep its input for {run}" in r.stderr, r.stderr
        assert "is a symbolic link" in r.stderr
    assert not os.path.lexists(target)
    assert os.listdir(tmp_path / "elsewhere") == []
    assert inputs_digest(base) == before


def test_an_atomic_write_never_follows_a_planted_temporary_link(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    dst = tmp_path / "out.json"
    planted = tmp_path / f".out.json.tmp-{os.getpid()}"   # the temporary name write_text uses
    os.symlink(victim, planted)
    output.write_text(str(dst), "{}\n")
    assert dst.read_text() == "{}\n" and victim.read_text() == "mine\n"
    assert not os.path.lexists(planted)
    os.symlink(victim, planted)
    with pytest.raises(NtscopeError, match=f"{planted} is a symbolic link .*fix: remove the link"):
        output.create_new(str(planted))
    assert victim.read_text() == "mine\n"


# ------------------------------------------------------------------ one recording is one run
def linked_copy(src, dst):
    """dst: a run whose host folders are symbolic links to src's."""
    os.makedirs(dst)
    for host in runs.host_dirs(src):
        os.symlink(os.path.join(src, host), os.path.join(dst, host))
    return dst


def hard_linked_copy(src, dst):
    shutil.copytree(src, dst, copy_function=os.link)
    return dst


@pytest.mark.parametrize("make, how", [
    (hard_linked_copy, "its initiator/trace.dat is the same file as {base}'s initiator/trace.dat"),
    (linked_copy, "its initiator/trace.dat is the same file as {base}'s initiator/trace.dat"),
    (shutil.copytree, "its initiator/trace.dat has the same bytes (sha256) as {base}'s initiator/trace.dat"),
])
def test_one_recording_under_two_folders_is_not_compared_with_itself(fresh, ntscope_cli, tmp_path, make, how):
    base = fresh(SMALL, "base")
    run = make(base, str(tmp_path / "copy"))
    before = tree_digest(base)
    r = ntscope_cli("compare", base, run, "--quiet")
    refused(r, f"{run} and {base} are one recording ({how.format(base=base)})",
            "fix: compare two different recordings")
    assert not os.path.exists(os.path.join(run, "report", "compare.json"))
    assert tree_digest(base) == before
    # and in a sweep's series
    r = ntscope_cli("sweep", base, run, "--values", "1,2", "--quiet")
    refused(r, "names one recording twice", f"{run} and {base}")
