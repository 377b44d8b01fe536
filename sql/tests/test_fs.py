"""A file-system workload on a real lab capture (fixtures/lab-6.1-patched-fs-ext4: ext4 on
the namespace, two fio jobs reading their own file with bssplit 4k/50:64k/30:128k/20; the
scenario capture/scenarios/fs-ext4.sh). fio logged every read (initiator/iolog-fs*.txt):
the report's groups by size must hold exactly those reads. The target recorded mkfs, mount,
the file writes and the unmount that the initiator did not: they stay unmatched and never
lend events to a read. Needs the converter (just build; NTSCOPE_BIN)."""
import glob
import json
import os

import pytest

from ntscope.sql import views

RUN = "lab-6.1-patched-fs-ext4"


def fio_reads(run):
    """[(file, offset, length)] of every read in fio's own logs (fio v3 iolog)."""
    reads = []
    for path in sorted(glob.glob(os.path.join(glob.escape(run), "initiator", "iolog-*.txt"))):
        with open(path) as f:
            for line in f:
                w = line.split()
                if len(w) == 5 and w[2] == "read":
                    reads.append((w[1], int(w[3]), int(w[4])))
    return reads


@pytest.fixture(scope="module")
def fs(fixture_run):
    run = fixture_run(RUN)
    return run, views.connect(run)


def test_groups_by_size_hold_fios_own_reads(fs):
    run, con = fs
    want = {}
    for _, _, length in fio_reads(run):
        want[length] = want.get(length, 0) + 1
    assert len(want) > 3, "the fixture's fio log should hold bssplit's sizes and fio's trimmed ones"
    got = dict(con.execute("SELECT size_bytes, count(*) FROM io_selected WHERE io_type = 'read' "
                           "GROUP BY size_bytes").fetchall())
    assert got == want
    # and the report's own groups (what `just analyze` prints) say the same
    groups = dict(con.execute("SELECT group_key, count FROM report_groups").fetchall())
    for size, n in want.items():
        assert groups[f"type=read, size={size}"] == n


def test_reads_are_fios_bytes_and_the_job_of_each_cpu(fs):
    run, con = fs
    reads = fio_reads(run)
    assert con.execute("SELECT sum(size_bytes) FROM io WHERE io_type = 'read'").fetchone()[0] == sum(r[2] for r in reads)
    # job fsN is pinned to CPU N (truth.json) and reads only its own file
    truth = json.load(open(os.path.join(run, "truth.json")))
    per_cpu = dict(con.execute("SELECT cpu, count(*) FROM io WHERE io_type = 'read' GROUP BY cpu").fetchall())
    for job in truth["workload"]:
        n = sum(1 for f, _, _ in reads if f.endswith("/" + job["job"]))
        assert job["fs"]["type"] == "ext4"
        assert per_cpu[job["cpu"]] == n


def test_setup_io_stays_unmatched_and_no_read_takes_its_events(fs):
    _, con = fs
    stats = dict(con.execute("SELECT name, value FROM pipeline_stats").fetchall())
    assert float(stats["matched_pct"]) == 100.0
    # mkfs, mount and the file writes happened while only the target recorded
    assert int(stats["unmatched_target:outside_initiator_trace"]) > 20
    # the unmount's writes came after the initiator stopped, with command ids its reads used:
    # none of their target events may land in a read (a window left open at a cid's last use)
    assert con.execute("SELECT count(*) FROM io_stages WHERE dur < 0").fetchone()[0] == 0
    longest = con.execute("SELECT max(dur) FROM io_stages WHERE stage = 'target_subsystem'").fetchone()[0]
    e2e = con.execute("SELECT max(i_rq_complete_ts - i_bio_queue_ts) FROM io").fetchone()[0]
    assert longest < e2e
