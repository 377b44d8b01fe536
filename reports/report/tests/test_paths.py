"""The path each I/O took (io.path, sql/core/join.sql controller_paths): its controller and the
target address and port that controller is connected to, from host.json's nvme_controllers.
The fixture lab-6.1-patched-two-targets has one initiator with two controllers, nvme0 to
169.254.10.2:4420 (disk nvme0n1) and nvme1 to 169.254.11.2:4421 (disk nvme1n1): each path's
I/Os are its disk's, and --path selects one as --device does."""
import json
import os

FIXTURE = "lab-6.1-patched-two-targets"
PATHS = {"initiator/nvme0@169.254.10.2:4420": "initiator/nvme0n1",
         "initiator/nvme1@169.254.11.2:4421": "initiator/nvme1n1"}


def groups(run):
    with open(os.path.join(run, "report", "report.json")) as f:
        doc = json.load(f)
    return {tuple(sorted(g["key"].items())): g["count"] for g in doc["groups"]}, doc["spec"]


def test_group_by_path_names_each_controller_and_its_target_address(fixture_run, ntscope_cli):
    run = fixture_run(FIXTURE)
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--group-by", "path,device")
    assert r.returncode == 0, r.stderr
    got, _ = groups(run)
    assert {k: v for k, v in got.items()}.keys() == {(("device", d), ("path", p)) for p, d in PATHS.items()}
    by_device = {dict(k)["device"]: v for k, v in got.items()}
    assert all(v > 100 for v in by_device.values())
    run = fixture_run(FIXTURE, fresh=True)
    path, device = "initiator/nvme1@169.254.11.2:4421", "initiator/nvme1n1"
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--path", path, "--group-by", "device")
    assert r.returncode == 0, r.stderr
    only, spec = groups(run)
    assert only == {(("device", device),): by_device[device]} and spec["filter"]["path"] == [path]
