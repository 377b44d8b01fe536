"""What a user reads when a flag or a spec file is wrong, and what --help says: the message
names what is wrong, the value and the fix in the user's words (never a Python repr, a dict or
a traceback). The SLO and window cases go through the command on a real capture
(fixtures/stock-randread-4k-qd8), the rest through the parser that the command calls."""
import os
import subprocess
import sys

import pytest

from ntscope import cli
from ntscope.reports.slo import objectives as slo
from ntscope.reports.report import command as report_command
from ntscope.reports.report.spec import Spec, SpecError, parse_window

STAGES = {("stock", "end_to_end"), ("stock", "target_device")}


@pytest.fixture(scope="module")
def run(fixture_run):
    return fixture_run("stock-randread-4k-qd8")


def test_an_objective_without_a_unit_says_so_and_offers_both(run, ntscope_cli):
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--slo", "read: p99.9 <= 2",
                    "--out", os.path.join(run, "no-unit"))
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip() == ("ntscope: error: objective 'read: p99.9 <= 2': the bound 2 has no unit (a latency "
                                "bound needs one); fix: e.g. --slo 'read: p99.9 <= 2ms' or --slo "
                                "'read: p99.9 <= 2000us'")
    assert not os.path.exists(os.path.join(run, "no-unit"))


def test_an_objective_with_a_foreign_unit_names_it():
    with pytest.raises(SpecError) as e:
        slo.parse("write: target_device p90 < 0.5sec", 1, "stock", STAGES)
    assert str(e.value) == ("objective 'write: target_device p90 < 0.5sec': the bound 0.5sec has the unit 'sec', "
                            "which is not one of ns, us, ms, s (a latency bound needs one); fix: e.g. --slo "
                            "'write: target_device p90 < 0.5ms' or --slo 'write: target_device p90 < 500us'")


def test_a_window_that_ends_before_it_starts(run, ntscope_cli):
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--window", "5:2",
                    "--out", os.path.join(run, "bad-window"))
    assert r.returncode == 2
    assert r.stderr.strip() == ("ntscope: error: window '5:2' starts at 5 s, after its end at 2 s; the format is "
                                "START:END in seconds from the first I/O, START before END, either side may be "
                                "empty; fix: e.g. --window 2:5")
    with pytest.raises(SpecError, match=r"starts and ends at 3 s \(it holds no time\); .*fix: e.g. --window 3:4$"):
        parse_window("3:3")


@pytest.mark.parametrize("toml,message", [
    ('[filter]\nwindow = {start = 5, end = 2}',
     "[filter] window is a table, not a string; fix: e.g. window = \"1.5:4\""),
    ('[filter]\nwindow = 5', "[filter] window is a number, not a string; fix: e.g. window = \"1.5:4\""),
    ('[filter]\ntype = {read = true}',
     "[filter] type is a table, not a string or a list of strings and integers; fix: e.g. type = [\"read\"]"),
    ('[group]\nby = {a = 1}', "[group] by is a table, not a string or a list of strings; fix: e.g. by = [\"type\", \"size\"]"),
    ('[group]\ntime_bucket_s = "1s"', "[group] time_bucket_s is a string, not a number; fix: e.g. time_bucket_s = 0.5"),
    ('[stages]\nsets = 3', "[stages] sets is a number, not a string or a list of strings; fix: e.g. sets = [\"ntprof\"]"),
    ('[slo]\nobjectives = [{a = 1}]',
     "[slo] objectives is an array holding a table, not a string or a list of strings; "
     "fix: e.g. objectives = [\"read,4k: p99 <= 2ms\"]"),
    ('filter = 3', "filter is a number, not a table; fix: write it as a [filter] header with its keys below, e.g. "
                   "[filter] then type = [\"read\"]"),
    ('[filter]\nwindows = "1:2"', "[filter] has no key 'windows'; fix: one of type, size, device, queue, stream, host, target, cpu, "
                                  "process, cgroup, tenant, class, file, namespace, target_device, path, window (see "
                                  "reports/README.md 'Spec file')"),
])
def test_a_spec_file_value_of_the_wrong_kind_is_named_in_toml_words(tmp_path, toml, message):
    path = tmp_path / "spec.toml"
    path.write_text(toml + "\n")
    with pytest.raises(SpecError) as e:
        Spec.from_toml(str(path))
    assert str(e.value) == f"spec file {path}: {message}"


def test_a_lone_objective_string_in_a_spec_file_is_one_objective(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_text('[slo]\nobjectives = "read,4k: p99 <= 2ms"\n')
    assert Spec.from_toml(str(path)).slos == ["read,4k: p99 <= 2ms"]


def help_of(*command):
    r = subprocess.run([sys.executable, "-m", "ntscope", *command, "--help"], capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "400"})
    assert r.returncode == 0, r.stderr
    (line,) = [x for x in r.stdout.splitlines() if x.strip().startswith("--quiet")]
    return line.split("--quiet", 1)[1].strip()


@pytest.mark.parametrize("command,says", [
    ("convert", "do not print which hosts were converted"),
    ("analyze", "do not print report.txt on stdout"),
    ("compare", "do not print compare.txt on stdout"),
    ("interference", "do not print interference.txt on stdout"),
    ("sweep", "do not print sweep.txt on stdout"),
])
def test_quiet_says_what_it_leaves_out_for_each_command(command, says):
    assert help_of(command).startswith(says)


def test_flags_override_the_spec_file_time_bucket_included(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_text('[filter]\ntype = ["write"]\n[group]\nby = ["time"]\ntime_bucket_s = 2.0\n')
    spec = report_command.spec_from_args(cli.parser().parse_args(["analyze", "r", "--spec", str(path)]))
    assert (spec.types, spec.group_by, spec.time_bucket_s) == (["write"], ["time"], 2.0)
    spec = report_command.spec_from_args(cli.parser().parse_args(["analyze", "r", "--spec", str(path), "--time-bucket", "0.5",
                                                       "--type", "read"]))
    assert (spec.types, spec.time_bucket_s) == (["read"], 0.5)
    assert report_command.spec_from_args(cli.parser().parse_args(["analyze", "r"])).time_bucket_s == 1.0
