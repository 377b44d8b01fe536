"""A fixture run copied to a scratch folder and converted, for the pytest checks on real
captures (the fixture itself stays untouched). Needs the converter (just build; NTSCOPE_BIN)."""
import json
import os
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NTSCOPE = os.environ.get("NTSCOPE_BIN") or os.path.join(
    os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/ntscope/target")), "release", "ntscope")


def converted_copy(fixture, dst, host_json=None):
    """fixtures/FIXTURE's initiator/ and target/ in dst, converted to parquet/.
    host_json: {key: value} set in both hosts' host.json first."""
    src = os.path.join(REPO, "fixtures", fixture)
    assert os.path.exists(NTSCOPE), f"converter {NTSCOPE} missing: run `just build`"
    for host in ("initiator", "target"):
        os.makedirs(os.path.join(dst, host))
        for f in os.listdir(os.path.join(src, host)):
            if os.path.isfile(os.path.join(src, host, f)):
                shutil.copy(os.path.join(src, host, f), os.path.join(dst, host, f))
        if host_json:
            p = os.path.join(dst, host, "host.json")
            h = json.load(open(p))
            h.update(host_json)
            json.dump(h, open(p, "w"))
        subprocess.run([NTSCOPE, "convert", os.path.join(dst, host, "trace.dat"),
                        "--out", os.path.join(dst, host, "parquet")], check=True, capture_output=True)
    return dst
