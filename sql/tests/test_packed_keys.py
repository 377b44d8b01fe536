"""The integer keys the pairing windows and ASOF joins sort on (sql/core/hosts.sql: lifetime_key,
block_key) pair exactly as the parts they stand for, also when a trace lacks a
field (NULL parts) or holds a damaged value (a part out of range: it pairs with nothing).

The reference is the pairing on the parts themselves (host name, controller, queue, cid; host,
dev, sector), computed here by a window over the events view on those parts, the slower way
nvme_command_rows and block_request_rows could pair them."""
import os

import duckdb
import pytest

from ntscope.sql import views
from ntscope.sql.tests.fixture_from_text import write_run

HERE = os.path.dirname(os.path.abspath(__file__))
BASIC = os.path.join(HERE, "cases", "basic", "events.txt")
# added to the basic case: two target commands and two block requests in flight together, so a
# key that lumped NULL parts into one partition would pair each with the other's events
OVERLAPPING = """
target nvmet_req_init 1005000000 1 37 kworker ctrl_id=1 qid=1 cid=30 opcode=2 fctype=0 nsid=1 slba=500 nlb=8
target nvmet_req_init 1005001000 1 37 kworker ctrl_id=1 qid=2 cid=31 opcode=2 fctype=0 nsid=1 slba=600 nlb=8
target block_rq_issue 1005002000 1 37 kworker dev=252,0 sector=500 nr_sector=8 bytes=4096 rwbs=R
target block_rq_issue 1005003000 1 37 kworker dev=252,0 sector=600 nr_sector=8 bytes=4096 rwbs=R
target block_rq_complete 1005004000 1 37 kworker dev=252,0 sector=500 nr_sector=8 rwbs=R error=0
target block_rq_complete 1005005000 1 37 kworker dev=252,0 sector=600 nr_sector=8 rwbs=R error=0
target nvmet_req_complete 1005006000 1 37 kworker ctrl_id=1 qid=1 cid=30 status=0
target nvmet_req_complete 1005007000 1 37 kworker ctrl_id=1 qid=2 cid=31 status=0
"""

# each submit (issue) and the completion the parts' window pairs with it, per host
CMD_REFERENCE = """
SELECT host, ts AS submit_ts, CASE WHEN next_phase = 1 THEN next_ts END AS complete_ts FROM (
    SELECT host, ts, phase, lead(phase) OVER w AS next_phase, lead(ts) OVER w AS next_ts
    FROM (SELECT host, ts, ctrl_id, qid, cid,
                 CASE WHEN event IN ('nvme_setup_cmd', 'nvmet_req_init') THEN 0 ELSE 1 END AS phase
          FROM events WHERE event IN ('nvme_setup_cmd', 'nvme_complete_rq', 'nvmet_req_init', 'nvmet_req_complete'))
    WINDOW w AS (PARTITION BY host, ctrl_id, qid, cid ORDER BY ts, phase))
WHERE phase = 0 AND host = 'target'
"""
# the target pairs by cid alone (the initiator may pair through its block requests)
CMD_PAIRS = "SELECT host, submit_ts, complete_ts FROM nvme_command_rows WHERE submit_ts IS NOT NULL AND host = 'target'"
BLOCK_REFERENCE = """
SELECT host, ts AS issue_ts, CASE WHEN next_phase = 1 THEN next_ts END AS complete_ts FROM (
    SELECT host, ts, phase, lead(phase) OVER w AS next_phase, lead(ts) OVER w AS next_ts
    FROM (SELECT host, ts, dev, sector, CASE WHEN event = 'block_rq_issue' THEN 0 ELSE 1 END AS phase
          FROM events WHERE event IN ('block_rq_issue', 'block_rq_complete'))
    WINDOW w AS (PARTITION BY host, dev, sector ORDER BY ts, phase))
WHERE phase = 0
"""
BLOCK_PAIRS = "SELECT host, issue_ts, complete_ts FROM block_request_rows WHERE issue_ts IS NOT NULL"
# (which way an initiator command found its completion may change: through its block request
# needs ctrl_id)
LIFETIMES = ("SELECT host, submit_ts, complete_ts, state FROM nvme_command_rows "
             "UNION ALL SELECT host, issue_ts, complete_ts, state FROM block_request_rows")


def rows(con, sql):
    return sorted(con.execute(sql).fetchall(), key=repr)


def edited_run(tmp_path, edit):
    """The basic case's run with each event line passed through edit(fields) -> fields."""
    lines = []
    with open(BASIC) as f:
        for line in f.read().splitlines(keepends=True) + OVERLAPPING.lstrip().splitlines(keepends=True):
            if line.strip() and not line.startswith("#"):
                line = " ".join(edit(line.split())) + "\n"
            lines.append(line)
    tmp_path.mkdir(exist_ok=True)
    text = tmp_path / "events.txt"
    text.write_text("".join(lines))
    run = tmp_path / "run"
    run.mkdir()
    write_run(str(text), str(run))
    return views.connect(str(run))


def without(*names):
    return lambda fields: [f for f in fields if f.split("=", 1)[0] not in names]


def test_macros_keep_null_parts_apart_and_refuse_what_does_not_fit():
    con = duckdb.connect()
    with open(os.path.join(views.SQL_DIR, "core/hosts.sql")) as f:
        text = f.read()
    for name in ("lifetime_key", "block_key"):
        start = text.index(f"CREATE OR REPLACE MACRO {name}")
        con.execute(text[start:text.index(";", start) + 1])
    one = lambda sql: con.execute("SELECT " + sql).fetchone()[0]  # noqa: E731
    # a NULL part is its own value, neither 0 nor another part's NULL
    assert len({one("lifetime_key(0, NULL, 1, 1)"), one("lifetime_key(0, 0, 1, 1)"),
                one("lifetime_key(0, 1, NULL, 1)"), one("lifetime_key(0, 1, 1, NULL)")}) == 4
    assert one("lifetime_key(4095, 65535, 65535, 65535)") > one("lifetime_key(4094, 65535, 65535, 65535)") > 0
    assert one("lifetime_key(0, 65536, 0, 0)") is None and one("lifetime_key(4096, 0, 0, 0)") is None
    assert one("block_key(0, NULL)") != one("block_key(0, 0)")
    assert one("block_key(65535, 140737488355326::UBIGINT)") > one("block_key(65534, 140737488355326::UBIGINT)")
    assert one("block_key(1, 140737488355327::UBIGINT)") is None and one("block_key(65536, 0)") is None


@pytest.mark.parametrize("drop", [(), ("ctrl_id",), ("dev",), ("sector",), ("ctrl_id", "dev", "sector")],
                         ids=["as_traced", "no_ctrl_id", "no_dev", "no_sector", "none_of_them"])
def test_pairs_as_on_the_parts(tmp_path, drop):
    traced = edited_run(tmp_path / "traced", lambda f: f)
    con = edited_run(tmp_path / "edited", without(*drop))
    cmds, blocks = rows(con, CMD_PAIRS), rows(con, BLOCK_PAIRS)
    assert len(cmds) == 7 and len(blocks) == 7
    assert cmds == rows(con, CMD_REFERENCE)
    assert blocks == rows(con, BLOCK_REFERENCE)
    # a field the trace lacks is NULL on every event: the lifetimes are those of the full trace
    # (without the sector, requests in flight together on one device cannot be told apart, on
    # the parts as here: the reference above holds them)
    if "sector" not in drop:
        assert rows(con, LIFETIMES) == rows(traced, LIFETIMES)
    # and a request matches its bio only on a known dev and sector (equality)
    queued = "SELECT count(queue_ts) FROM block_request_rows"
    assert con.execute(queued).fetchone()[0] == (0 if {"dev", "sector"} & set(drop) else
                                                traced.execute(queued).fetchone()[0])


def test_a_damaged_part_pairs_with_nothing(tmp_path):
    # the first command's cid out of range on its submit and completion (both hosts), and the
    # first block request's sector past what block_key holds: each event stands alone
    def damage(fields):
        if "cid=1" in fields and any(f.startswith("slba=100") for f in fields) or (
                fields[1] in ("nvme_complete_rq", "nvmet_req_complete") and "cid=1" in fields
                and int(fields[2]) in (1100000, 1001070000)):
            fields = [("cid=70000" if f == "cid=1" else f) for f in fields]
        if "sector=100" in fields and fields[0] == "initiator":
            fields = [("sector=999999999999999999" if f == "sector=100" else f) for f in fields]
        return fields
    con = edited_run(tmp_path, damage)
    assert con.execute("SELECT count(*) FROM nvme_command_rows WHERE cid = 70000 AND state = 'complete'"
                       ).fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM nvme_command_rows WHERE cid = 70000").fetchone()[0] == 4
    assert con.execute("SELECT state FROM block_request_rows WHERE sector = 999999999999999999 "
                       "AND issue_ts IS NOT NULL").fetchall() == [("no_completion",)]
    # the undamaged ones still pair
    assert con.execute("SELECT count(*) FROM block_request_rows WHERE sector = 200 AND state = 'complete'"
                       ).fetchone()[0] == 2
