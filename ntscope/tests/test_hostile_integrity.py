"""One integrity rule for every reader (issue "SQL that cannot touch the run, one integrity rule
for every reader, no writes through links"): metadata.json is sealed with this user's key, so
an edit to it (a checksum deleted, a hash rewritten to match a swapped file or trace, a
converter name changed, a skipped event type erased) makes the host convert again; a deleted
metadata.json is recovered without deleting anything; ntscope.data checks before it reads.
Each case asserts what was said, the numbers after, and that the traces are unchanged."""
import hashlib
import json
import os
import shutil

import pytest

from ntscope import data
from ntscope.common import derived
from ntscope.common.errors import NtscopeError

from test_hostile import SMALL, SMALL_IOS, flip_a_bit, fresh, inputs_digest, report_count  # noqa: F401

OTHER = "lab-6.1-stock-slow-device"
UNSEALED = "metadata.json is not as this user's ntscope recorded it"


def meta_of(run, host):
    with open(os.path.join(run, host, "parquet", "metadata.json")) as f:
        return json.load(f)


def write_meta(run, host, meta):
    """metadata.json rewritten by hand (json.dump, no seal): what an edit or another tool does."""
    with open(os.path.join(run, host, "parquet", "metadata.json"), "w") as f:
        json.dump(meta, f)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def drop_a_checksum(run):
    m = meta_of(run, "initiator")
    del m["events"][0]["sha256"]
    write_meta(run, "initiator", m)


def erase_a_key(run):
    m = meta_of(run, "initiator")
    del m["skipped_event_types"]     # what --strict reads to find event types the converter skipped
    write_meta(run, "initiator", m)


def swap_an_event_file_consistently(run):
    """nvme_setup_cmd.parquet replaced by nvme_complete_rq's rows, metadata.json made to match."""
    top = os.path.join(run, "initiator", "parquet")
    a, b = "nvme/nvme_setup_cmd.parquet", "nvme/nvme_complete_rq.parquet"
    shutil.copyfile(os.path.join(top, b), os.path.join(top, a))
    m = meta_of(run, "initiator")
    (ea,) = [e for e in m["events"] if e["file"] == a]
    (eb,) = [e for e in m["events"] if e["file"] == b]
    ea.update(rows=eb["rows"], bytes=eb["bytes"], sha256=eb["sha256"])
    m["ntscope_written"]["files"][a] = derived.stat_key(os.stat(os.path.join(top, a)))
    write_meta(run, "initiator", m)


@pytest.mark.parametrize("edit", [drop_a_checksum, erase_a_key, swap_an_event_file_consistently])
def test_an_edited_metadata_json_converts_the_host_again(fresh, ntscope_cli, edit):
    run = fresh(SMALL)
    traces = inputs_digest(run)
    edit(run)
    for flags in (["--verify"], []):   # --verify included: it used to pass every one of these
        r = ntscope_cli("convert", run, *flags)
        assert r.returncode == 0, r.stderr
        if flags:
            assert f"converting {run}/initiator/trace.dat again: {run}/initiator/parquet/metadata.json: " \
                   f"its {UNSEALED} (its seal does not match" in r.stderr, r.stderr
        else:
            assert "again" not in r.stderr, r.stderr    # converted: sealed again, trusted
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
    assert r.returncode == 0 and report_count(run) == SMALL_IOS, r.stderr
    assert inputs_digest(run) == traces


def test_a_trace_replaced_and_its_hash_rewritten_is_converted_again(fresh, ntscope_cli):
    run, other = fresh(SMALL), fresh(OTHER, convert=False)
    trace = os.path.join(run, "target", "trace.dat")
    old_events = meta_of(run, "target")["total_events"]
    shutil.copyfile(os.path.join(other, "target", "trace.dat"), trace)
    m = meta_of(run, "target")
    m["source"]["sha256"] = sha(trace)                       # the new trace's real hash
    m["ntscope_written"]["trace"] = derived.stat_key(os.stat(trace))
    write_meta(run, "target", m)
    r = ntscope_cli("convert", run)
    assert r.returncode == 0, r.stderr
    assert f"converting {trace} again: {run}/target/parquet/metadata.json: its {UNSEALED}" in r.stderr
    assert meta_of(run, "target")["total_events"] != old_events    # the new trace's events, not the old Parquet
    assert meta_of(run, "target")["source"]["sha256"] == sha(trace)


def test_a_converter_name_that_is_not_ntscope_disables_nothing(fresh, ntscope_cli):
    run = fresh(SMALL)
    m = meta_of(run, "initiator")
    m["converter"]["name"] = "x"
    write_meta(run, "initiator", m)
    flip_a_bit(os.path.join(run, "initiator", "parquet", "nvme", "nvme_setup_cmd.parquet"))
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
    assert r.returncode == 0, r.stderr
    assert "again: its parquet/metadata.json was not written by ntscope's converter" in r.stderr
    (aside,) = [d for d in os.listdir(os.path.join(run, "initiator")) if d.startswith("parquet.orphaned-")]
    assert f"moved to {run}/initiator/{aside}" in r.stderr
    assert report_count(run) == SMALL_IOS and meta_of(run, "initiator")["converter"]["name"] == "ntscope"


def test_a_deleted_metadata_json_is_recovered_and_nothing_deleted(fresh, ntscope_cli):
    run = fresh(SMALL)
    os.unlink(os.path.join(run, "target", "parquet", "metadata.json"))
    mine = os.path.join(run, "target", "parquet", "notes.txt")
    with open(mine, "w") as f:
        f.write("mine\n")
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
    assert r.returncode == 0, r.stderr
    (aside,) = [d for d in os.listdir(os.path.join(run, "target")) if d.startswith("parquet.orphaned-")]
    assert f"{run}/target/parquet had no metadata.json of ntscope's" in r.stderr
    assert open(os.path.join(run, "target", aside, "notes.txt")).read() == "mine\n"
    assert report_count(run) == SMALL_IOS


def test_a_users_file_in_parquet_stops_reconversion_and_stays(fresh, ntscope_cli):
    run = fresh(SMALL)
    mine = os.path.join(run, "initiator", "parquet", "nvme", "my_analysis.parquet")
    with open(mine, "wb") as f:
        f.write(b"PAR1 mine PAR1")
    flip_a_bit(os.path.join(run, "initiator", "parquet", "nvme", "nvme_setup_cmd.parquet"))
    for cmd in (["convert", run], ["analyze", run, "--quiet"]):
        r = ntscope_cli(*cmd)
        assert r.returncode == 2, r.stderr
        assert f"{run}/initiator/parquet holds {mine}, which ntscope did not write" in r.stderr
        assert f"fix: move it out of {run}/initiator/parquet (it is yours" in r.stderr
        assert "--out" not in r.stderr and "Traceback" not in r.stderr
        assert open(mine, "rb").read() == b"PAR1 mine PAR1"


def test_the_python_api_checks_before_it_reads(fresh):
    run = fresh(SMALL)
    assert data.connect(run).execute("SELECT count(*) FROM io").fetchall() == [(SMALL_IOS,)]
    bad = os.path.join(run, "initiator", "parquet", "nvme", "nvme_setup_cmd.parquet")
    flip_a_bit(bad)
    for read in (lambda: data.connect(run), lambda: data.events(run, "nvme", "nvme_setup_cmd")):
        with pytest.raises(NtscopeError, match=f"{run}/initiator cannot be read as converted: {bad} is not the file "
                                               f"the converter wrote .* fix: ntscope convert {run}"):
            read()
    m = meta_of(run, "target")
    m["events"][0]["rows"] += 1
    write_meta(run, "target", m)
    flip_a_bit(bad)   # the initiator whole again: the target's edit alone is found
    with pytest.raises(NtscopeError, match=f"{run}/target cannot be read as converted: .*{UNSEALED}"):
        data.connect(run)


@pytest.mark.parametrize("make, what", [
    (lambda p: open(p, "w").close(), "a file"),
    (lambda p: os.symlink("/tmp", p), "a symbolic link (to /tmp)"),
    (os.mkfifo, "a FIFO"),
])
def test_a_parquet_entry_that_is_no_folder_gets_the_right_fix(fresh, ntscope_cli, make, what):
    run = fresh(SMALL, convert=False)
    where = os.path.join(run, "initiator", "parquet")
    make(where)
    before = inputs_digest(run)
    r = ntscope_cli("analyze", run, "--quiet")
    assert r.returncode == 2, r.stderr
    assert f"{where} is {what}, where ntscope writes the host's converted event files; fix: move it out of" in r.stderr
    assert "--out" not in r.stderr and "Traceback" not in r.stderr
    assert inputs_digest(run) == before and os.path.lexists(where)
