"""The message contract and what the environment may do (issue "SQL that cannot touch the run,
one integrity rule for every reader, no writes through links"): values beyond any sense and
documents nested beyond reason are refused with what, where and the fix, never an internal
error; host.json fields the views read are checked against capture's schema; test hooks are not
in the installed code; spill folders and view scripts never go inside a run. Each case asserts
the exit code, the message, and that the run's bytes are unchanged."""
import json
import os
import socket
import subprocess
import tempfile

import pytest

from ntscope.sql.raw_views import HOST_JSON_READ

from test_hostile import REPO, SMALL, fresh, inputs_digest, refused, report_count, tree_digest  # noqa: F401

HOST_FIX = "fix: write it as capture does"


def host_json(run, host="target"):
    return os.path.join(run, host, "host.json")


def edit_host_json(run, **fields):
    with open(host_json(run)) as f:
        doc = json.load(f)
    for key, value in fields.items():
        node = doc
        *path, last = key.split("__")
        for p in path:
            node = node.setdefault(p, {})
        node[last] = value
    with open(host_json(run), "w") as f:
        json.dump(doc, f)


@pytest.mark.parametrize("flags, message", [
    (["--size", "9" * 5000], "size '9999999999999999999999999999999999999999... (5000 characters)' has 5000 digits"),
    (["--size", ">=" + "1" * 400 + "k"], "has 400 digits, more than any I/O"),
    (["--slo", "read: p99 <= " + "9" * 5000 + "us"], "the bound 9999999999999999999999999999999999999999... (5002 characters) is beyond"),
])
def test_values_beyond_any_sense_are_refused_readably(fresh, ntscope_cli, flags, message):
    run = fresh(SMALL)
    before = inputs_digest(run)
    r = ntscope_cli("analyze", run, "--quiet", *flags)
    refused(r, message)
    assert len(r.stderr) < 1000 and inputs_digest(run) == before


def deep(n=100000):
    return "[" * n + "]" * n


@pytest.mark.parametrize("where, text, args, message", [
    ("target/host.json", deep(), [], "host.json {run}/target/host.json nests arrays or objects too deeply to read"),
    ("spec.toml", "a = " + deep(), ["--spec", "{run}/spec.toml"], "spec file {run}/spec.toml nests tables or arrays too deeply"),
])
def test_documents_nested_beyond_reason_are_refused(fresh, ntscope_cli, where, text, args, message):
    run = fresh(SMALL)
    with open(os.path.join(run, where), "w") as f:
        f.write(text)
    before = inputs_digest(run)
    r = ntscope_cli("analyze", run, "--quiet", *[a.format(run=run) for a in args])
    refused(r, message.format(run=run))
    assert inputs_digest(run) == before


@pytest.mark.parametrize("fields, message", [
    ({"role": 5}, "role is 5; it must be one of 'initiator', 'target'"),
    ({"role": "server"}, "role is \"server\"; it must be one of 'initiator', 'target'"),
    ({"sample__n": 2**63 - 1}, "sample.n is 9223372036854775807; it must be at most 2,147,483,647"),
    ({"probes__misses": -3}, "probes.misses is -3; it must be at least 0"),
])
def test_host_json_fields_the_views_read_are_checked_against_the_schema(fresh, ntscope_cli, fields, message):
    run = fresh(SMALL)
    edit_host_json(run, **fields)
    before = inputs_digest(run)
    r = ntscope_cli("analyze", run, "--quiet", "--strict")
    refused(r, f"host.json {run}/target/host.json: {message} (capture/schemas/host.schema.json)", HOST_FIX)
    assert inputs_digest(run) == before and not os.path.exists(os.path.join(run, "report", "report.json"))


def test_the_fields_checked_are_capture_schemas_own():
    with open(os.path.join(REPO, "capture", "schemas", "host.schema.json")) as f:
        schema = json.load(f)

    def same(read, full, where):
        for k in ("type", "enum", "minimum", "maximum"):
            assert read.get(k) == full.get(k) or (k == "type" and k not in read), (where, k, read.get(k), full.get(k))
        for key, sub in read.get("properties", {}).items():
            assert key in full.get("properties", {}), f"{where}.{key} is not in host.schema.json"
            same(sub, full["properties"][key], f"{where}.{key}")
    same(HOST_JSON_READ, schema, "host.json")


def test_a_host_folder_named_in_no_encoding_and_a_socket_host_json(fresh, ntscope_cli, tmp_path):
    run = fresh(SMALL, convert=False)
    odd = os.fsencode(run) + b"/ini\xff"
    os.rename(os.path.join(run, "initiator"), odd)
    before = sorted(os.listdir(odd))
    r = ntscope_cli("analyze", run, "--quiet")
    refused(r, f"host folder {run}/ini\\xff: its name is not UTF-8 text", "fix: rename the folder")
    assert sorted(os.listdir(odd)) == before and b"parquet" not in before
    os.rename(odd, os.path.join(run, "initiator"))
    os.rename(host_json(run), tmp_path / "host.json")
    s = socket.socket(socket.AF_UNIX)
    short = tempfile.mkdtemp(dir="/tmp")   # a socket's path is at most 107 bytes: bound here, then moved
    s.bind(os.path.join(short, "s"))
    os.rename(os.path.join(short, "s"), host_json(run))
    os.rmdir(short)
    try:
        refused(ntscope_cli("analyze", run, "--quiet"), f"host.json {run}/target/host.json is a socket, not a regular file",
                HOST_FIX)
    finally:
        s.close()


def test_a_folder_that_is_no_run_gets_no_lock_file(ntscope_cli, tmp_path):
    for cmd in (["analyze", str(tmp_path)], ["interference", str(tmp_path)]):
        refused(ntscope_cli(*cmd), f"no host under {tmp_path}")
    assert os.listdir(tmp_path) == []


# ------------------------------------------------------------------ test hooks and the environment
def test_no_test_hook_is_in_the_installed_code(fresh, ntscope_cli):
    hooks = subprocess.run(["grep", "-rln", "NTSCOPE_TEST_", "ntscope/common", "ntscope/cli.py", "sql", "reports",
                            "--include=*.py", "--exclude-dir=tests"], cwd=REPO, capture_output=True, text=True)
    assert hooks.stdout == ""
    run = fresh(SMALL)
    env = {"NTSCOPE_TEST_KILL_DURING_COMMIT": "report", "NTSCOPE_TEST_KILL_AT_SWAP": "report"}
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", env=env)
    assert r.returncode == 0 and report_count(run) == 328, r.stderr


@pytest.mark.parametrize("how", ["env", "flag"])
def test_spill_folders_never_go_inside_a_run(fresh, ntscope_cli, how):
    run = fresh(SMALL)
    inside = os.path.join(run, "initiator", "parquet", "spill")
    before = inputs_digest(run)
    if how == "env":
        r = ntscope_cli("analyze", run, "--quiet", env={"NTSCOPE_TEMP_DIR": inside})
        refused(r, f"NTSCOPE_TEMP_DIR {inside}: it lies inside the host folder {run}/initiator of a run",
                "fix: pass --temp-dir (or set NTSCOPE_TEMP_DIR to) a folder outside every run")
    else:
        r = ntscope_cli("sql", run, "--temp-dir", os.path.join(run, "spill"), "-c", "SELECT 1")
        refused(r, f"--temp-dir {run}/spill: it lies inside the run folder {run}")
    assert inputs_digest(run) == before
    assert not os.path.exists(inside) and not os.path.exists(os.path.join(run, "spill"))


def test_sql_script_writes_no_new_file_in_a_run_folder(fresh, ntscope_cli):
    run = fresh(SMALL)
    before = tree_digest(run)
    target = os.path.join(run, "views.sql")
    refused(ntscope_cli("sql", run, "--script", target),
            f"refusing to write the view script to {target}: it lies inside the run folder {run}")
    assert tree_digest(run) == before


def test_a_trace_in_a_folder_of_tmpdir_does_not_stop_ntscope(fresh, ntscope_cli, tmp_path):
    """trace-cmd record run in a folder of /tmp leaves TMPDIR holding a host folder, so TMPDIR
    looks like a run folder: the default spill place is still used (a fresh private folder,
    removed after), the trace beside it untouched; TMPDIR inside a host folder, and a chosen
    --temp-dir in a run folder, are still refused."""
    run = fresh(SMALL)
    tmpdir = tmp_path / "tmpdir"
    (tmpdir / "recorded").mkdir(parents=True)
    (tmpdir / "recorded" / "trace.dat").write_bytes(b"a trace recorded here")
    plain = ntscope_cli("sql", run, "-c", "SELECT count(*) AS n FROM io")
    r = ntscope_cli("sql", run, "-c", "SELECT count(*) AS n FROM io", env={"TMPDIR": str(tmpdir)})
    assert r.returncode == 0, r.stderr
    assert r.stdout == plain.stdout and int(r.stdout.split()[-1]) > 0
    assert sorted(os.listdir(tmpdir)) == ["recorded"] and os.listdir(tmpdir / "recorded") == ["trace.dat"]
    r = ntscope_cli("sql", run, "-c", "SELECT 1", env={"TMPDIR": str(tmpdir / "recorded")})
    refused(r, f"TMPDIR {tmpdir}/recorded: it lies inside the host folder {tmpdir}/recorded of a run")
    r = ntscope_cli("sql", run, "-c", "SELECT 1", "--temp-dir", str(tmpdir))
    refused(r, f"--temp-dir {tmpdir}: it lies inside the run folder {tmpdir}")
