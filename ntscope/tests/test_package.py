"""The package as a user installs it: `pip install .` into a fresh venv (the converter is
built by setuptools-rust and installed beside Python as `ntscope-analyzer`, lean), then the
command `ntscope analyze RUN` from another directory, with no checkout on the path."""
import json
import os
import shutil
import subprocess
import sys

from ntscope.common import converter

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def source_copy(dst):
    """The working tree without build outputs (pip builds in the tree it is given)."""
    shutil.copytree(REPO, dst, ignore=shutil.ignore_patterns(
        ".git", "build", "runs", "target", "*.egg-info", "__pycache__", "fixtures", "fuzz"))
    return dst


def test_pip_install_into_a_fresh_venv_then_analyze_from_elsewhere(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    env = dict(os.environ, PIP_CONSTRAINT=os.path.join(REPO, "constraints.txt"), PIP_DISABLE_PIP_VERSION_CHECK="1",
               CARGO_TARGET_DIR=os.path.dirname(os.path.dirname(converter.cargo_binary(REPO))),
               CARGO_BUILD_BUILD_DIR=converter.cargo_build_dir())
    env.pop("NTSCOPE_BIN", None)
    src = source_copy(str(tmp_path / "src"))
    r = subprocess.run([py, "-m", "pip", "install", "-q", src], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    analyzer = venv / "bin" / "ntscope-analyzer"                 # the converter came with the package
    assert os.access(analyzer, os.X_OK) and os.path.getsize(analyzer) < 30e6   # no debug info (was 99 MB)
    r = subprocess.run([str(analyzer), "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("ntscope-analyzer ")
    site = subprocess.run([py, "-c", "import ntscope.sql.views as v, os; print(os.path.dirname(v.__file__))"],
                          env=env, capture_output=True, text=True, cwd=str(tmp_path), check=True).stdout.strip()
    assert site.startswith(str(venv)) and os.path.isfile(os.path.join(site, "core/stages.sql"))
    run = tmp_path / "run"
    for host in ("initiator", "target"):
        shutil.copytree(os.path.join(REPO, "fixtures", "lab-6.1-stock-base-randread", host), run / host)
    work = tmp_path / "elsewhere"
    work.mkdir()
    # the console script `ntscope` is the CLI (not the converter)
    r = subprocess.run([str(venv / "bin" / "ntscope"), "analyze", str(run), "--quiet"], env=env, cwd=str(work),
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.load(open(run / "report" / "report.json"))
    assert sum(g["count"] for g in doc["groups"]) == 328
    assert sorted(os.listdir(run / "report")) == [".ntscope-manifest.json", "class_seconds.parquet", "file_seconds.parquet",
                                                  "interference.html", "interference.json", "interference.txt",
                                                  "io.parquet", "io_stages.parquet", "outages.parquet", "path_events.parquet",
                                                  "recovery.json", "recovery.txt",
                                                  "report.html", "report.json", "report.txt",
                                                  "tenant_seconds.parquet", "tenants.json", "tenants.txt",
                                                  "timeline.perfetto-trace"]
