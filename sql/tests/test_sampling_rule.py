"""The sample rule on real captures (capture/README.md, "Why not the tag").

1. A sampled lab capture (fixtures/lab-6.1-patched-capture-sampled: sample=8 on both hosts,
   the generation-counter rule cid & 0x7000 == 0, 4K reads qd 8 + 128K writes qd 2): the
   views read the rule from host.json, scale counts by the device's own I/O count (fio ran
   3408 I/Os), match every sampled command, and find the sample fair against every block
   request (sample_block_check).
2. The full capture fixtures/stock-randread-4k-qd8 (6389 reads, every command traced): the
   two rules applied to its command ids. The counter rule keeps 1 in 8 of every tag's uses;
   the tag rule of captures before 0.2 keeps 3 tags and 1/12 of the reads.
Needs the converter (NTSCOPE_BIN)."""
import json
import os

import pytest

from ntscope.sql import views

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLED = "lab-6.1-patched-capture-sampled"


def one(con, sql):
    return con.execute(sql).fetchone()


@pytest.fixture(scope="module")
def sampled(fixture_run):
    dst = fixture_run(SAMPLED)
    return dst, views.connect(dst)


def fio_ios(run_dir):
    jobs = json.load(open(os.path.join(run_dir, "initiator", "fio-mixed.json")))["jobs"]
    return sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in jobs)


def test_rule_and_scale_from_host_json(sampled):
    dst, con = sampled
    rows = con.execute("SELECT host, sample_n, sample_mask, sample_source, rule, io_submits, device_ios "
                       "FROM sampling ORDER BY host").fetchall()
    assert [r[:5] for r in rows] == [("initiator", 8, 0x7000, "host.json", "cid & 0x7000 == 0"),
                                     ("target", 8, 0x7000, "host.json", "cid & 0x7000 == 0")]
    ini = rows[0]
    # the denominator is what the device completed: fio's own count
    assert ini[6] == fio_ios(dst) == 3408
    assert ini[5] == 438
    sampled_, n, rule, consistent, scale, source = one(
        con, "SELECT sampled, sample_n, rule, consistent, scale, scale_source FROM sampling_run")
    assert (sampled_, n, rule, consistent, source) == (True, 8, "cid & 0x7000 == 0", True, "io_counters")
    assert scale == pytest.approx(3408 / 438)
    # every command the capture kept follows the rule: no violation row
    names = {r[0] for r in con.execute("SELECT name FROM pipeline_stats").fetchall()}
    assert not any(x.startswith(("sample_rule_violations", "sample_mismatch", "filters_not_applied")) for x in names)


def test_sampled_commands_match_and_cover_every_tag(sampled):
    _, con = sampled
    total, matched, tags, off = one(con, """
        SELECT count(*), count(*) FILTER (WHERE match_state = 'matched'),
               count(DISTINCT cid & 4095), count(DISTINCT cid & 4095) FILTER (WHERE (cid & 7) <> 0)
        FROM io""")
    assert total == 438 and matched / total >= 0.99, (total, matched)
    # the counter rule keeps commands on tags of every kind, not only multiples of 8
    assert tags >= 16 and off >= tags // 2, (tags, off)


def test_every_completion_is_a_sampled_command_or_counted_outside(sampled):
    """The initiator recorded all 3409 nvme_complete_rq (block=all): 438 complete the sampled
    commands, 2680 carry a cid outside the rule, and 291 are 6.1 R2T writes whose completion
    reports the transfer tag (small, so it passes the counter rule) while their block request
    was issued in the trace with no sampled submit: outside the sample too, not lifetimes of
    their own (nvme_commands), and counted (completions_outside_sample)."""
    _, con = sampled
    assert one(con, "SELECT count(*) FROM events WHERE host = 'initiator' AND event = 'nvme_complete_rq'")[0] == 3409
    states = con.execute("SELECT state, kind, count(*) FROM nvme_commands WHERE role = 'initiator' "
                         "GROUP BY ALL ORDER BY ALL").fetchall()
    assert states == [("complete", "io", 438)]
    assert one(con, "SELECT by_rule, by_block FROM sample_outside_completions") == (2680, 291)
    assert one(con, "SELECT value FROM pipeline_stats WHERE name = 'completions_outside_sample:initiator'")[0] == "2971"
    assert one(con, "SELECT count(*) FROM pipeline_stats WHERE name LIKE 'non_io_commands:initiator%'")[0] == 0


def test_sample_block_check_finds_the_sample_fair(sampled):
    _, con = sampled
    host, n_s, n_all, p50_s, p50_all, ratio, fair = one(con, """
        SELECT host, sampled_requests, all_requests, sampled_p50_ns, all_p50_ns, p50_ratio, fair
        FROM sample_block_check""")
    assert host == "initiator"
    # every sampled command's request; every request of fio's 3408 but the one read still in
    # flight when the recording stopped (its block_rq_complete is not in the trace)
    assert n_s == 438 and n_all == 3407, (n_s, n_all)
    assert ratio == pytest.approx(p50_s / p50_all)
    assert 0.8 <= ratio <= 1.25 and fair is True, ratio
    sev, value = one(con, "SELECT severity, value FROM pipeline_stats WHERE name = 'sample_block_check:initiator'")
    assert sev == "info" and float(value) == pytest.approx(round(ratio, 3))


@pytest.fixture(scope="module")
def full(fixture_run):
    return views.connect(fixture_run("stock-randread-4k-qd8"))


RULES = """
    SELECT rule, count(*) AS n, count(DISTINCT cid & 4095) AS tags
    FROM (SELECT 'all' AS rule, cid FROM io_cmds
          UNION ALL SELECT 'tag', cid FROM io_cmds WHERE cid & 7 = 0
          UNION ALL SELECT 'counter', cid FROM io_cmds WHERE cid & 28672 = 0)
    GROUP BY rule"""


def test_counter_rule_keeps_one_in_n_of_every_tag(full):
    full.execute("CREATE OR REPLACE TEMP VIEW io_cmds AS "
                 "SELECT cid FROM nvme_commands WHERE role = 'initiator' AND kind = 'io'")
    got = {r[0]: r[1:] for r in full.execute(RULES).fetchall()}
    n_all, tags_all = got["all"]
    assert n_all == 6389 and tags_all == 31
    n_counter, tags_counter = got["counter"]
    n_tag, tags_tag = got["tag"]
    # the counter rule: 1/8 up to one command per tag in use, on every tag
    assert abs(n_counter - n_all / 8) <= tags_all, n_counter
    assert tags_counter == tags_all
    # the tag rule: 3 tags (8, 16, 120) and a share far from 1/8 (the tags are used unevenly)
    assert tags_tag == 3 and n_tag == 530
    assert n_all / n_tag > 12


def test_counter_rule_per_tag(full):
    """Each tag's uses are sampled 1 in 8, up to one: the counter counts that tag's completions."""
    rows = full.execute("""
        SELECT cid & 4095 AS tag, count(*) AS uses, count(*) FILTER (WHERE cid & 28672 = 0) AS kept
        FROM nvme_commands WHERE role = 'initiator' AND kind = 'io' GROUP BY tag""").fetchall()
    assert len(rows) == 31
    bad = [(t, u, k) for t, u, k in rows if not (u // 8 - 1 <= k <= u // 8 + 1)]
    assert not bad, bad
