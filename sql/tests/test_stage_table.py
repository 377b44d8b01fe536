"""The stage table (sql/core/stage_definitions.sql) is the single source of stages and
causes: every other place agrees with it or is generated from it."""
import glob
import json
import os
import re
import subprocess
import sys

import duckdb
import pytest

from ntscope.sql import loader, views

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    c.execute(open(views.STAGE_TABLE_SQL).read())
    return c


def test_events_md_stage_table_is_generated_from_the_sql_table():
    r = subprocess.run([sys.executable, os.path.join(REPO, "tools", "stage_table.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_every_stage_names_known_ids(con):
    assert con.execute("SELECT count(*) FROM stage_definitions WHERE category NOT IN "
                       "(SELECT category FROM stage_categories)").fetchone()[0] == 0
    assert {r[0] for r in con.execute("SELECT DISTINCT direction FROM stage_definitions").fetchall()} == \
        {"submission", "completion", "both"}
    # aliases point at a stage of another set with the same cut
    bad = con.execute("""
        SELECT d.stage_set || ':' || d.stage, a FROM stage_definitions d, unnest(d.aliases) t(a)
        LEFT JOIN stage_definitions o ON o.stage_set || ':' || o.stage = a
        WHERE o.stage IS NULL OR o.from_milestone <> d.from_milestone OR o.to_milestone <> d.to_milestone""").fetchall()
    assert bad == []
    # parents exist in the same set
    assert con.execute("""SELECT count(*) FROM stage_definitions d WHERE parent IS NOT NULL AND NOT EXISTS
                          (SELECT 1 FROM stage_definitions p WHERE p.stage_set = d.stage_set AND p.stage = d.parent)""").fetchone()[0] == 0


def test_the_initiator_only_causes_are_causes_of_its_stages(con):
    # what a verdict without the target names is a cause id, and one a stage of the
    # initiator_only set can give: its categories (target_side, network) or the queue's
    ids = {r[0] for r in con.execute("SELECT cause_id FROM cause_ids").fetchall()}
    mapped = {r[0]: r[1] for r in con.execute("SELECT cause_id, initiator_only_cause_id FROM cause_ids").fetchall()}
    assert set(mapped.values()) <= ids
    assert {c for c, m in mapped.items() if m == "target_side"} == {"slow_device", "busy_device", "target_cpu", "target",
                                                                    "target_side"}
    assert mapped["slow_network"] == "slow_network" and mapped["few_queues"] == "few_queues"
    cats = {r[0] for r in con.execute("SELECT category FROM stage_definitions WHERE stage_set = 'initiator_only'").fetchall()}
    assert {"target_side", "network"} <= cats
    # the set reads no target milestone: it is what a run without the target has
    assert con.execute("""SELECT count(*) FROM stage_definitions WHERE stage_set = 'initiator_only'
                          AND 't:' IN (left(from_milestone, 2), left(to_milestone, 2))""").fetchone()[0] == 0


def test_the_verdict_names_no_stage():
    # the verdict reads causes from stage_definitions.category; a stage name in its SQL
    # would be a second, disagreeing source
    c = duckdb.connect()
    c.execute(open(views.STAGE_TABLE_SQL).read())
    stages = {r[0] for r in c.execute("SELECT DISTINCT stage FROM stage_definitions").fetchall()} - {"end_to_end"}
    stages -= {r[0] for r in c.execute("SELECT category FROM stage_categories").fetchall()}  # ids the verdict may name
    text = open(loader.module_path("compare/verdict")).read()
    code = "\n".join(l.split("--")[0] for l in text.splitlines())
    named = sorted(s for s in stages if re.search(r"'" + re.escape(s) + r"'", code))
    assert named == []


def test_truth_files_use_the_vocabulary(con):
    causes = {r[0] for r in con.execute("SELECT cause_id FROM cause_ids").fetchall()}
    stages = {(r[0], r[1]) for r in con.execute("SELECT stage_set, stage FROM stage_definitions").fetchall()}
    truths = glob.glob(os.path.join(REPO, "fixtures", "*", "truth.json"))
    assert len(truths) >= 20
    for t in truths:
        doc = json.load(open(t))
        assert doc["cause"] in causes, t
        assert doc.get("verdict_cause_id", "none") in causes, t
        expected = dict(doc.get("expected_bottleneck") or {})
        assert expected.pop("direction", None) in (None, "submission", "completion", "both"), t
        for stage_set, stage in expected.items():
            assert (stage_set, stage) in stages, (t, stage_set, stage)
        direction = (doc.get("injected") or {}).get("direction")
        assert direction in (None, "submission", "completion", "both"), t
    for s in glob.glob(os.path.join(REPO, "capture", "scenarios", "*.sh")):
        for cause in re.findall(r'"cause": "(\w+)"|cause=(\w+)', open(s).read()):
            assert (cause[0] or cause[1]) in causes | {"$cause"}, s


def test_a_stage_users_add_gets_milestones_no_shipped_stage_reads(fixture_run):
    # io_stage_durations gathers only the NVMe/TCP milestones a definition reads: a stage a
    # user adds (INSERT, then core/stages.sql again, as sql/README.md says) over two that no
    # shipped stage reads must still get its durations, equal to its milestones' difference
    run = fixture_run("lab-6.1-patched-base-randread")
    con = views.connect(run)
    frm, to = "i:nvme_tcp_try_send_cmd_pdu", "i:nvme_tcp_done_send_req#last"
    read = {r[0] for r in con.execute("SELECT unnest([from_milestone, to_milestone, minus_from_milestone, minus_to_milestone]) "
                                      "FROM io_stage_definitions").fetchall()}
    assert frm not in read and to not in read
    con.execute("INSERT INTO stage_definitions VALUES ('ntprof', 'user_cmd_pdu_sent', 99, NULL, 'initiator', "
                "?, ?, NULL, NULL, 'submission', 'host_transport', []::VARCHAR[], 'a user stage')", [frm, to])
    con.execute(open(loader.module_path("core/stages")).read())
    got = dict(con.execute("SELECT io_id, dur FROM io_stages WHERE stage = 'user_cmd_pdu_sent'").fetchall())
    want = dict(con.execute("""
        SELECT io_id, max(ts) FILTER (WHERE milestone = ?) - max(ts) FILTER (WHERE milestone = ?)
        FROM io_milestones GROUP BY io_id""", [to, frm]).fetchall())
    assert len(got) == len(want) > 500
    assert sum(d is not None and d > 0 for d in got.values()) > 500
    assert got == want
