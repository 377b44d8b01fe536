"""Set-up for analysis needs no root: setup.sh installs no Debian package and, for a user
who is not root, puts `just` in ~/.local/bin; the tests, the lab and the kernel builds install
their packages when their recipe runs (tools/ensure-packages.sh @GROUP), and without root or
sudo that refusal names the packages and the command to run.

The user is made not-root by an `id` on PATH that says uid 1000 (the only way setup.sh and
ensure-packages.sh tell), while `sudo`, `apt-get` and `dpkg` shims record every call: a call
to any of them would be a root action the analysis set-up does not need."""
import os
import subprocess

from ntscope.common import converter

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIM = """#!/bin/sh
echo "$(basename "$0") $*" >> "{log}"
exit 1
"""
FAKE_ID = """#!/bin/sh
case "$1" in -u) echo 1000 ;; *) exec /usr/bin/id "$@" ;; esac
"""


def not_root_env(tmp_path, dpkg_knows=None):
    shims, log = tmp_path / "shims", tmp_path / "root-actions.log"
    shims.mkdir()
    for name in ("sudo", "apt-get", "apt"):
        (shims / name).write_text(SHIM.format(log=log))
    if dpkg_knows is None:
        (shims / "dpkg").write_text(SHIM.format(log=log))
    else:   # dpkg -s PKG: installed when PKG is in dpkg_knows
        (shims / "dpkg").write_text('#!/bin/sh\ncase " %s " in *" $2 "*) exit 0 ;; esac\nexit 1\n' % " ".join(dpkg_knows))
    (shims / "id").write_text(FAKE_ID)
    for f in shims.iterdir():
        f.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    keep = [p for p in os.environ["PATH"].split(":") if p and not os.path.exists(os.path.join(p, "just"))]
    env = dict(os.environ, HOME=str(home), PATH=":".join([str(shims), str(home / ".local" / "bin")] + keep),
               PIP_CACHE_DIR=os.path.join(os.path.expanduser("~"), ".cache", "pip"),
               CARGO_HOME=os.environ.get("CARGO_HOME", os.path.join(os.path.expanduser("~"), ".cargo")),
               RUSTUP_HOME=os.environ.get("RUSTUP_HOME", os.path.join(os.path.expanduser("~"), ".rustup")))
    return env, log, home


def test_analysis_setup_and_demo_without_root(tmp_path):
    env, log, home = not_root_env(tmp_path)
    env.update(NTSCOPE_CACHE=str(tmp_path / "cache"), NTSCOPE_RUNS=str(tmp_path / "runs"),
               CARGO_TARGET_DIR=os.path.dirname(os.path.dirname(converter.cargo_binary(REPO))),
               CARGO_BUILD_BUILD_DIR=converter.cargo_build_dir())
    env.pop("NTSCOPE_PYTHON", None)
    env.pop("NTSCOPE_BIN", None)
    r = subprocess.run(["bash", os.path.join(REPO, "setup.sh")], env=env, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    assert not log.exists(), log.read_text()                    # no sudo, apt-get or dpkg
    just = home / ".local" / "bin" / "just"
    assert just.is_symlink() and os.access(just, os.X_OK)
    assert str(tmp_path / "cache" / "checkouts") in os.readlink(just)
    r = subprocess.run(["just", "demo", "--quiet"], env=env, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    assert os.path.getsize(tmp_path / "runs" / "demo" / "report" / "report.json") > 1000
    assert not log.exists(), log.read_text()
    # the command itself, from anywhere: what every help text and fix suggests
    ntscope = home / ".local" / "bin" / "ntscope"
    assert ntscope.is_symlink() and os.access(ntscope, os.X_OK)
    r = subprocess.run(["ntscope", "sql", str(tmp_path / "runs" / "demo"), "-c", "SELECT count(*) AS n FROM io"],
                       env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.startswith("n\n"), r.stderr
    # setup again (the venv and the build kept: seconds) for a user whose PATH lacks
    # ~/.local/bin yet: a note with the line to add, exit 0, not an error
    env["PATH"] = ":".join(p for p in env["PATH"].split(":") if p != str(home / ".local" / "bin"))
    r = subprocess.run(["bash", os.path.join(REPO, "setup.sh")], env=env, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    assert f"setup: note: just and ntscope are in {home}/.local/bin, which is not on your PATH yet" in r.stderr
    assert "error" not in r.stderr.lower() and not log.exists()


def test_a_recipe_needing_missing_packages_says_which_and_how_without_root(tmp_path):
    env, log, _ = not_root_env(tmp_path, dpkg_knows=["trace-cmd", "chromium"])
    r = subprocess.run(["bash", os.path.join(REPO, "tools", "ensure-packages.sh"), "@test"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "missing: libtracecmd-dev libtraceevent-dev libtracefs-dev pkg-config gcc time bc;" in r.stderr
    assert "fix: as root, apt-get install libtracecmd-dev" in r.stderr
    assert log.read_text() == "sudo -n true\n"                  # asked whether sudo works, installed nothing
    # nothing missing: done without root
    everything = [l.split("#")[0].split()[0] for l in open(os.path.join(REPO, "tools", "apt-packages.txt"))
                  if l.split("#")[0].strip()]
    (tmp_path / "all").mkdir()
    env, log, _ = not_root_env(tmp_path / "all", dpkg_knows=everything)
    r = subprocess.run(["bash", os.path.join(REPO, "tools", "ensure-packages.sh"), "@test", "@lab", "@kernel"], env=env,
                       capture_output=True, text=True)
    assert (r.returncode, r.stderr) == (0, "") and not log.exists()


def test_a_rust_older_than_the_converter_needs_is_said_before_building(tmp_path):
    env, log, _ = not_root_env(tmp_path)
    (tmp_path / "shims" / "rustc").write_text("#!/bin/sh\necho 'rustc 1.63.0 (4b91a6ea7 2022-08-08)'\n")
    (tmp_path / "shims" / "rustc").chmod(0o755)
    cargo_log = tmp_path / "cargo.log"
    (tmp_path / "shims" / "cargo").write_text(f"#!/bin/sh\necho \"$*\" >> {cargo_log}\nexit 1\n")
    (tmp_path / "shims" / "cargo").chmod(0o755)
    env.update(NTSCOPE_CACHE=str(tmp_path / "cache"))
    r = subprocess.run(["bash", os.path.join(REPO, "setup.sh")], env=env, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    assert "setup: error: the installed Rust is 1.63.0 (rustc --version), older than the 1.88 the converter needs" in r.stderr
    assert "fix: install a current Rust with rustup" in r.stderr
    assert not cargo_log.exists()       # said before any build started
