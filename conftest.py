"""Shared pytest fixtures for every Python test of the repo (sql/tests, reports/tests):
the converter, and real fixture runs copied to a scratch folder and converted (the
fixtures themselves stay untouched)."""
import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from ntscope.common import converter, derived

REPO = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(REPO, "fixtures")


def pytest_addoption(parser):
    parser.addoption("--update-expected", action="store_true",
                     help="diff tests: rewrite the expected CSV files (check them by hand)")


@pytest.fixture(scope="session")
def ntscope_bin():
    return converter.path()


def tree_digest(path):
    """sha256 of every file under path (names and bytes): proves inputs are untouched (the
    hostile suites)."""
    h = hashlib.sha256()
    for d, dirs, files in sorted(os.walk(path)):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(d, f)
            h.update(os.path.relpath(p, path).encode())
            with open(p, "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


def copy_fixture(name, dst, host_json=None, hosts=None):
    """A copy of fixtures/<name> at dst; hosts: only these host folders (a run as it looks
    when the others were not traced, e.g. ["initiator"])."""
    src = os.path.join(FIXTURES, name)
    if not os.path.isdir(src):
        raise FileNotFoundError(f"fixture {src} is missing; fix: restore it from git or `just lab-fixture`")

    def skipped(folder, names):
        left = {"parquet", "report"}
        if hosts is not None and folder == src:
            left |= {n for n in names if os.path.isfile(os.path.join(src, n, "trace.dat")) and n not in hosts}
        return left
    shutil.copytree(src, dst, ignore=skipped)
    if host_json:
        for host in os.listdir(dst):
            p = os.path.join(dst, host, "host.json")
            if os.path.isfile(p):
                with open(p) as f:
                    h = json.load(f)
                h.update(host_json)
                with open(p, "w") as f:
                    json.dump(h, f)
    return dst


def convert_run(run, binary):
    """Every host's trace.dat converted as `ntscope convert RUN` does: the binary, then the
    checksums of what it wrote recorded in metadata.json (ntscope.common.derived)."""
    for host in sorted(os.listdir(run)):
        trace = os.path.join(run, host, "trace.dat")
        if os.path.isfile(trace):
            before = os.stat(trace)
            subprocess.run([binary, "convert", trace, "--out", os.path.join(run, host, "parquet"), "--quiet"],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            derived.record(os.path.join(run, host), before)
    return run


@pytest.fixture(scope="session")
def fixture_run(tmp_path_factory, ntscope_bin):
    """fixture_run(name, host_json=None, fresh=False, hosts=None) -> path of a converted copy
    of fixtures/<name>; host_json updates each host's host.json first; hosts keeps only those
    host folders. Copies without host_json are shared by the session unless fresh=True."""
    cache = {}

    def make(name, host_json=None, fresh=False, hosts=None):
        key = (name, tuple(hosts) if hosts is not None else None)
        if host_json is None and not fresh and key in cache:
            return cache[key]
        dst = str(tmp_path_factory.mktemp(name.replace("/", "_")) / name)
        convert_run(copy_fixture(name, dst, host_json, hosts), ntscope_bin)
        if host_json is None and not fresh:
            cache[key] = dst
        return dst
    return make


@pytest.fixture
def fresh_run(tmp_path, ntscope_bin):
    """fresh_run(name, dst_name=None, convert=True) -> a private copy of fixtures/<name> in
    this test's tmp_path (for tests that change or break it)."""
    def make(name, dst_name=None, convert=True):
        dst = str(tmp_path / (dst_name or name))
        copy_fixture(name, dst)
        return convert_run(dst, ntscope_bin) if convert else dst
    return make


def drop_systems(run, host, *systems):
    """A converted run as a host without these trace systems records it: their Parquet files
    and the converter's list of them gone (and host.json's probes, for the probe groups
    ntscope_*), e.g. a patched capture made stock."""
    for s in systems:
        shutil.rmtree(os.path.join(run, host, "parquet", s), ignore_errors=True)
    meta = os.path.join(run, host, "parquet", "metadata.json")
    with open(meta) as f:
        m = json.load(f)
    m["events"] = [e for e in m["events"] if e["system"] not in systems]
    with open(meta, "w") as f:
        json.dump(m, f)
    if any(s.startswith("ntscope_") for s in systems):
        hj = os.path.join(run, host, "host.json")
        with open(hj) as f:
            h = json.load(f)
        h["probes"] = {"requested": "off", "active": False, "why_off": "probes=off"}
        with open(hj, "w") as f:
            json.dump(h, f)
    return run


@pytest.fixture(name="drop_systems")
def drop_systems_fixture():
    """drop_systems(run, host, *systems) -> run, those systems removed (see drop_systems)."""
    return drop_systems


@pytest.fixture(scope="session")
def ntscope_cli(ntscope_bin):
    """ntscope_cli(*args, cwd=None, env=None) runs `python -m ntscope ARGS` as users do."""
    def run(*args, cwd=None, env=None, input=None):
        e = dict(os.environ, NTSCOPE_BIN=ntscope_bin, **(env or {}))
        return subprocess.run([sys.executable, "-m", "ntscope", *args], cwd=cwd or REPO, env=e,
                              capture_output=True, text=True, input=input)
    return run


@pytest.fixture(scope="module")
def analyzed_recovery(fixture_run, ntscope_cli):
    """analyzed_recovery(NAME) -> (run folder, its recovery.json, analyze's stdout): a lab fixture
    analyzed once per test module (reports/recovery/tests)."""
    def get(name):
        run = fixture_run(name)
        r = ntscope_cli("analyze", run, "--no-interference")
        assert r.returncode == 0, r.stderr
        with open(os.path.join(run, "report", "recovery.json")) as f:
            return run, json.load(f), r.stdout
    return get
