"""The first hour of a new user (issue "The first hour, again"): what a user meets first gives
the right answer or the right fix. Hyphenated trace systems (xhci-hcd) are read, a trace with
no NVMe event says exactly that, the README's notebook lines run as printed."""
import json
import os
import re
import shutil
import sys

import pytest

from ntscope import command_reference
from ntscope.common import derived

from test_hostile import REPO, SMALL, SMALL_IOS, fresh, report_count, tmpfs  # noqa: F401 (fixtures)


def test_a_hyphenated_event_system_is_read_and_not_converted_forever(fresh, ntscope_cli):
    # what `-e all` on a host with xhci-hcd gives: the converter writes xhci-hcd/<event>.parquet
    run = fresh(SMALL)
    host = os.path.join(run, "initiator")
    meta = derived.load(host)
    entry = next(e for e in meta["events"] if e["file"] == "block/block_plug.parquet")
    os.makedirs(os.path.join(host, "parquet", "xhci-hcd"))
    os.rename(os.path.join(host, "parquet", entry["file"]), os.path.join(host, "parquet", "xhci-hcd", "xhci_address_ctx.parquet"))
    written = meta["ntscope_written"]["files"]
    written["xhci-hcd/xhci_address_ctx.parquet"] = written.pop(entry["file"])
    entry.update(file="xhci-hcd/xhci_address_ctx.parquet", system="xhci-hcd", event="xhci_address_ctx")
    derived.write_metadata(host, meta)       # as the converter and ntscope record it
    for _ in range(2):
        r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
        assert r.returncode == 0, r.stderr
        assert "again" not in r.stderr and report_count(run) == SMALL_IOS
    from ntscope import data
    assert data.events(run, "xhci-hcd", "xhci_address_ctx").collect().columns[0] == "host"


def test_a_trace_with_no_nvme_event_says_so(fresh, ntscope_cli):
    from conftest import drop_systems
    run = fresh(SMALL)
    for host in ("initiator", "target"):
        drop_systems(run, host, "nvme", "nvmet", "nvme_tcp", "nvmet_tcp")
        derived.write_metadata(os.path.join(run, host), derived.load(os.path.join(run, host)))
        os.unlink(os.path.join(run, host, "trace.dat"))   # the Parquet as a block-only recording gives it
    r = ntscope_cli("analyze", run, "--quiet")
    assert r.returncode == 2
    assert "the run's traces hold no NVMe event at all (no nvme, nvmet, nvme_tcp or nvmet_tcp event on any host" in r.stderr
    assert "fix: record each host with `just capture" in r.stderr


def test_the_readme_notebook_lines_run_as_printed_without_numpy(fixture_run, tmp_path, monkeypatch):
    text = open(os.path.join(REPO, "README.md")).read()
    block = re.search(r"```python\n(from ntscope import data\n.*?)```", text, re.S).group(1)
    demo = fixture_run("stock-randread-4k-qd8")
    os.makedirs(tmp_path / "runs")
    shutil.copytree(demo, tmp_path / "runs" / "demo")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "numpy", None)     # no install brings numpy: the lines must not need it
    monkeypatch.setitem(sys.modules, "pandas", None)
    *setup, last = [line for line in block.splitlines() if line and not line.startswith("#")]
    scope = {}
    exec("\n".join(setup), scope)
    rows = eval(last.split("#")[0], scope)
    ((key, count, iops),) = rows
    said = re.search(r"# (\d+) reads, ([\d.]+) IOPS", last)
    assert count == int(said.group(1)) and round(iops, 1) == float(said.group(2))


def test_python3_m_ntscope_outside_its_environment_says_how_to_set_up():
    import subprocess
    import sys
    # -S: no site-packages, as a Python without ntscope installed (the clone's ntscope/ is found
    # from the current folder, its sql/ and duckdb are not)
    python = sys.executable
    r = subprocess.run([python, "-S", "-m", "ntscope", "analyze", "runs/demo"], cwd=REPO, capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")})
    assert r.returncode == 2
    assert f"ntscope: error: {python} cannot load ntscope (No module named " in r.stderr
    assert "fix: run `bash setup.sh` in the clone, then `ntscope COMMAND`" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("given, what, fix", [
    ("{run}/initiator/trace.dat", "is a trace file, not a run folder", "fix: pass the run folder: {run}"),
    ("{tmp}/loose.dat", "is a trace file, not a run folder", "fix: make a run of it: mkdir -p runs/r1/initiator && cp {tmp}/loose.dat"),
    ("{run}/initiator", "it is a host folder, not a run folder", "fix: the folder holds trace.dat itself: it is a host folder; pass its run, {run}"),
    ("{run}/report", "it is the report folder of a run", "fix: pass the run itself: {run}"),
    ("{tmp}/flat", "it is a folder of loose trace files (initiator.dat, target.dat)",
     "fix: one folder per host: mkdir {tmp}/flat/initiator && mv {tmp}/flat/initiator.dat {tmp}/flat/initiator/trace.dat"),
    ("{tmp}/many", "it is a folder of runs (r1)", "fix: pass one of them, e.g. {tmp}/many/r1"),
])
def test_a_file_or_the_wrong_folder_as_run_gets_the_right_fix(fresh, ntscope_cli, tmp_path, given, what, fix):
    run = fresh(SMALL)
    assert ntscope_cli("analyze", run, "--quiet", "--no-interference").returncode == 0
    shutil.copyfile(os.path.join(run, "initiator", "trace.dat"), tmp_path / "loose.dat")
    os.makedirs(tmp_path / "flat")
    for host in ("initiator", "target"):
        shutil.copyfile(os.path.join(run, host, "trace.dat"), tmp_path / "flat" / f"{host}.dat")
    os.makedirs(tmp_path / "many" / "r1" / "initiator")
    shutil.copyfile(os.path.join(run, "initiator", "trace.dat"), tmp_path / "many" / "r1" / "initiator" / "trace.dat")
    before = sorted(os.listdir(tmp_path))
    r = ntscope_cli("analyze", given.format(run=run, tmp=tmp_path), "--quiet")
    assert r.returncode == 2, r.stderr
    assert what in r.stderr and fix.format(run=run, tmp=tmp_path) in r.stderr, r.stderr
    assert "report/<host>" not in r.stderr and "Traceback" not in r.stderr
    assert sorted(os.listdir(tmp_path)) == before and not os.path.exists(os.path.join(run, "report", "report", "report.json"))


def test_a_source_change_cargo_ignores_builds_once_not_on_every_command(tmp_path, monkeypatch, capsys):
    from ntscope.common import converter
    root = tmp_path / "checkout"
    (root / "analyzer" / "src").mkdir(parents=True)
    monkeypatch.setenv("CARGO_TARGET_DIR", str(tmp_path / "target"))   # never the real build
    binary = converter.cargo_binary(str(root))
    assert binary.startswith(str(tmp_path))
    os.makedirs(os.path.dirname(binary))
    with open(binary, "w") as f:
        f.write("#!/bin/sh\n")
    os.chmod(binary, 0o755)
    os.utime(binary, (1_000_000, 1_000_000))
    (root / "analyzer" / "Cargo.toml").write_text('[package]\nrust-version = "1.88"\n')   # newer than the binary
    calls = tmp_path / "cargo-calls"
    fake = tmp_path / "bin" / "cargo"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho build >> {calls}\n")   # cargo: nothing to relink
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    monkeypatch.delenv("NTSCOPE_BIN", raising=False)
    monkeypatch.setattr(converter, "checkout_root", lambda: str(root))
    assert converter.path() == binary and converter.path() == binary
    assert calls.read_text() == "build\n"                   # built once, then current


def test_command_line_basics_users_reach_for(ntscope_cli):
    r = ntscope_cli("-V")
    assert r.returncode == 0 and r.stdout.startswith("ntscope ")
    for typed, meant in (("analyse", "analyze"), ("compar", "compare"), ("diff", "compare")):
        r = ntscope_cli(typed, "runs/x")
        assert r.returncode == 2 and f"no command {typed!r}; did you mean {meant!r}? fix: ntscope {meant} ..." in r.stderr


def test_window_past_the_end_and_p999(fixture_run, ntscope_cli, tmp_path):
    run = fixture_run("stock-randread-4k-qd8")
    out = str(tmp_path / "report")
    r = ntscope_cli("analyze", run, "--quiet", "--out", out, "--window", "10:20")
    assert r.returncode == 2
    assert "--window 10:20 starts after the run's last I/O: its I/Os span 0 to 6.0 s from the first one" in r.stderr
    assert "{'type'" not in r.stderr and "each value exists" not in r.stderr
    r = ntscope_cli("analyze", run, "--quiet", "--out", out, "--no-interference", "--slo", "read: p99 <= 50ms",
                    "--slo", "read: p999 <= 50ms", "--slo", "read: max <= 1s")
    assert r.returncode == 0, r.stderr
    objectives = json.load(open(os.path.join(out, "report.json")))["slo"]["objectives"]
    p99, p999, worst = (o["value_ns"] for o in objectives)    # p999: the 99.9th percentile, not the 999th
    assert p99 < p999 <= worst and objectives[1]["statistic"] == "p999"


def test_an_error_through_just_is_ntscopes_alone(tmp_path):
    import subprocess
    r = subprocess.run(["just", "--justfile", os.path.join(REPO, "justfile"), "analyze", str(tmp_path / "nothing")],
                       cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.startswith("ntscope: error: no run directory") and "recipe" not in r.stderr.lower()


def test_an_unconverted_run_in_a_read_only_folder_is_converted_into_the_cache(fresh, ntscope_cli, tmpfs, tmp_path):
    from conftest import tree_digest
    fs = tmpfs("64m")
    run = str(fs / "run")
    shutil.copytree(fresh(SMALL, convert=False), run)
    subprocess_run(["mount", "-o", "remount,ro", str(fs)])
    before = tree_digest(run)
    cache = tmp_path / "cache"
    env = {"NTSCOPE_CACHE": str(cache)}
    r = ntscope_cli("analyze", run, "--no-interference", "--no-progress", "--out", str(tmp_path / "out"), env=env)
    assert r.returncode == 0, r.stderr
    assert f"ntscope: note: {run} cannot be written: its hosts are converted into {cache}/read-only-runs/run-" in r.stderr
    assert "Permission denied" not in r.stderr and "Read-only file system" not in r.stderr
    assert sum(g["count"] for g in json.load(open(tmp_path / "out" / "report.json"))["groups"]) == SMALL_IOS
    r = ntscope_cli("sql", run, "-c", "SELECT count(*) AS n FROM io", env=env)   # the stand-in is reused
    assert r.returncode == 0 and r.stdout == f"n\n{SMALL_IOS}\n" and "converting" not in r.stderr, r.stderr
    assert tree_digest(run) == before


def subprocess_run(cmd):
    import subprocess
    subprocess.run(cmd, check=True)


def test_help_examples_and_completion_come_from_the_parser(ntscope_cli):
    import subprocess
    from ntscope import cli, help_text
    table = help_text.commands_and_flags(cli.parser())
    # every command has examples: cli's own in help_text, an analysis' in its command.py
    examples = {name: p.epilog for name, p in command_reference.subcommands(cli.parser()).items()}
    assert all(examples.values()) and set(examples) == set(table)
    assert set(help_text.EXAMPLES) < set(table)
    for name, text in examples.items():
        for flag in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", text):
            assert flag in table[name], f"ntscope {name} --help names {flag}, which it does not take"
        r = ntscope_cli(name, "--help")
        assert r.returncode == 0 and text.splitlines()[1] in r.stdout
    r = ntscope_cli("completion", "bash")
    assert r.returncode == 0
    for name, flags in table.items():
        assert all(f in r.stdout for f in flags), name
    done = subprocess.run(["bash", "-c", r.stdout + "COMP_WORDS=(ntscope sql x --unr); COMP_CWORD=3; _ntscope; "
                           "echo ${COMPREPLY[@]}; COMP_WORDS=(ntscope comp); COMP_CWORD=1; _ntscope; echo ${COMPREPLY[@]}"],
                          capture_output=True, text=True)
    assert done.stdout.splitlines() == ["--unrestricted", "compare completion"], done.stderr


def test_json_on_stdout_is_the_document_written(fixture_run, ntscope_cli, tmp_path):
    run = fixture_run("stock-randread-4k-qd8")
    out = tmp_path / "r"
    r = ntscope_cli("analyze", run, "--json", "--no-interference", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == json.load(open(out / "report.json"))
    assert "ntscope report" not in r.stdout                         # no text report around it


def test_the_man_page_is_made_from_the_parser(ntscope_cli):
    from ntscope import cli, help_text
    r = ntscope_cli("man")
    assert r.returncode == 0 and r.stdout.startswith(".TH NTSCOPE 1 ")
    table = help_text.commands_and_flags(cli.parser())
    for name, flags in table.items():
        section = r.stdout.split(f".SH COMMAND: {name.upper()}\n", 1)[1].split(".SH ", 1)[0]
        assert all(f in section for f in flags), name
    # text lines never start a roff request by accident (a help line beginning with '.')
    body = [l for l in r.stdout.splitlines() if l.startswith((".", "'"))]
    assert all(l.split()[0] in (".TH", ".SH", ".B", ".nf", ".fi") for l in body), [l for l in body if l.split()[0] not in (".TH", ".SH", ".B", ".nf", ".fi")][:3]
