"""The recovery tests' run: a lab fixture analyzed once per test module (recovery.json read)."""
import json
import os

import pytest


@pytest.fixture(scope="module")
def analyzed(fixture_run, ntscope_cli):
    """analyzed(NAME) -> (run folder, its recovery.json, analyze's stdout)."""
    def get(name):
        run = fixture_run(name)
        r = ntscope_cli("analyze", run, "--no-interference")
        assert r.returncode == 0, r.stderr
        with open(os.path.join(run, "report", "recovery.json")) as f:
            return run, json.load(f), r.stdout
    return get
