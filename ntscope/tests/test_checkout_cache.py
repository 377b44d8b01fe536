"""Each checkout has its own venv and cargo target: the justfile, setup.sh (through
tools/checkout-cache.sh) and ntscope.common.converter name the same folder for one checkout, and
different folders for two checkouts, so a test of one never imports or runs the other."""
import os
import shutil
import subprocess

from ntscope.common import converter

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def shell_path(repo, cache):
    return subprocess.run(["bash", os.path.join(repo, "tools", "checkout-cache.sh")], env=dict(os.environ, NTSCOPE_CACHE=cache),
                          capture_output=True, text=True, check=True).stdout.strip()


def just_path(repo, cache):
    return subprocess.run(["just", "--justfile", os.path.join(repo, "justfile"), "--evaluate", "checkout_cache"],
                          env=dict(os.environ, NTSCOPE_CACHE=cache), capture_output=True, text=True, check=True).stdout.strip()


def test_one_checkout_one_folder_two_checkouts_two(tmp_path, monkeypatch):
    cache = str(tmp_path / "cache")
    monkeypatch.setenv("NTSCOPE_CACHE", cache)
    other = tmp_path / "elsewhere" / os.path.basename(REPO)      # same folder name, another path
    other.mkdir(parents=True)
    for name in ("justfile", "tools"):
        (shutil.copytree if os.path.isdir(os.path.join(REPO, name)) else shutil.copy)(os.path.join(REPO, name), other / name)
    for f in ("kernel-patches/kernel.just", "capture/capture.just", "sql/sql.just", "reports/reports.just"):
        (other / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(os.path.join(REPO, f), other / f)
    mine = {shell_path(REPO, cache), just_path(REPO, cache), converter.checkout_cache(REPO)}
    theirs = {shell_path(str(other), cache), just_path(str(other), cache), converter.checkout_cache(str(other))}
    assert len(mine) == 1 and len(theirs) == 1, (mine, theirs)
    assert mine != theirs
    (path,) = mine
    assert os.path.dirname(path) == os.path.join(cache, "checkouts")
    assert os.path.basename(path).startswith(os.path.basename(REPO) + "-")
    # the converter binary of this checkout lives under its own folder
    monkeypatch.delenv("CARGO_TARGET_DIR", raising=False)
    assert converter.cargo_binary(REPO) == os.path.join(path, "target", "release", converter.BINARY)
