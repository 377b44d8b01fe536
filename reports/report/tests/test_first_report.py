"""What a user meets first in report.txt / report.html, held to real fixtures: a warning says
what it means and whether to act; each table is in one unit, named in its header; a glossary of
the printed stages from the stage table; --percentiles and the standard deviation (SQL, checked
against the durations themselves); a patched run prints its primary stage set once, the others
on request (--stage-set all), while report.json keeps every set."""
import json
import os
import re
import statistics

import duckdb
import pytest

from ntscope.reports.report import render_text
from ntscope.sql import views

DEMO = "stock-randread-4k-qd8"                 # the demo's fixture, with the host.json of each host
INFERRED = "stock-randrw-mixed"                # the shared sample as recorded: no host.json, roles inferred
PATCHED = "lab-6.1-patched-write-128k"         # three stage sets; values up to 134 ms


@pytest.fixture(scope="module")
def analyzed(fixture_run, ntscope_cli, tmp_path_factory):
    """analyzed(fixture, *flags) -> (report.txt, report.json, report.html) of an analyze into a
    folder of its own."""
    done = {}

    def make(name, *flags):
        if (name, flags) not in done:
            run = fixture_run(name)
            out = str(tmp_path_factory.mktemp("report"))
            r = ntscope_cli("analyze", run, "--quiet", "--no-interference", "--out", out, *flags)
            assert r.returncode == 0, r.stderr
            done[(name, flags)] = tuple(open(os.path.join(out, f)).read()
                                        for f in ("report.txt", "report.json", "report.html"))
            done[(name, flags)] = (done[(name, flags)][0], json.loads(done[(name, flags)][1]), done[(name, flags)][2])
        return done[(name, flags)]
    return make


def stage_tables(txt):
    """{stage set: (header cells, rows of cells)} of report.txt's stage tables."""
    out, cur = {}, None
    for line in txt.splitlines():
        m = re.match(r"  stage \((\w+), (\w+)\)\s+(.*)", line)
        if m:
            cur = out.setdefault(m.group(1), (m.group(2), m.group(3).split(), []))
        elif cur and line.startswith("  ") and not line.startswith("  end_to_end histogram") and line.strip():
            if re.match(r"  \s*[\w()+.-]+\s+\d+\s", line) and "not measured" not in line:
                cur[2].append(line.split())
        else:
            cur = None
    return out


def test_the_demo_report_has_no_warning(analyzed):
    """The first report a user sees (`just demo`) reads the roles and the controller pairing from
    its host.json files: every pipeline_stats row is info, and the pairing's source is named."""
    txt, doc, _ = analyzed(DEMO)
    assert [s["name"] for s in doc["pipeline_stats"] if s["severity"] != "info"] == []
    assert not re.search(r"^  (warning|error) ", txt, re.M)
    stats = {s["name"]: s for s in doc["pipeline_stats"]}
    assert stats["role:initiator"]["value"] == "initiator" and stats["role:target"]["value"] == "target"
    assert stats["ctrl_map:initiator/nvme0"]["value"] == "target cntlid 1"
    assert stats["ctrl_map:initiator/nvme0"]["meaning"].endswith("from host.json")
    assert stats["matched_pct"]["value"] == 100.0


def test_each_warning_says_what_it_means_and_whether_to_act(analyzed):
    txt, doc, _ = analyzed(INFERRED)
    lines = txt.splitlines()
    warned = [s for s in doc["pipeline_stats"] if s["severity"] != "info"]
    assert {s["name"] for s in warned} >= {"role:initiator", "role:target", "ctrl_map:initiator/nvme0"}
    for s in warned:
        at = next(i for i, l in enumerate(lines) if re.match(rf"  {s['severity']}\s+{re.escape(s['name'])}\s", l))
        meaning = []
        for l in lines[at + 1:]:
            if not l.startswith("           "):
                break
            meaning.append(l.strip())
        assert " ".join(meaning) == s["meaning"], s["name"]
    role = next(s for s in warned if s["name"] == "role:initiator")["meaning"]
    assert "act only if that is wrong" in role
    ctrl = next(s for s in warned if s["name"] == "ctrl_map:initiator/nvme0")["meaning"]
    assert "no action when matched_pct is near 100" in ctrl
    assert next(s for s in doc["pipeline_stats"] if s["name"] == "matched_pct")["value"] == 100.0


def test_one_unit_per_table_named_in_its_header(analyzed):
    txt, doc, _ = analyzed(PATCHED, "--stage-set", "all")
    tables = stage_tables(txt)
    assert set(tables) == {"ntprof", "s_notation", "stock"}
    for unit, header, rows in tables.values():
        assert unit == "us" and header[:3] == ["n", "avg", "stdev"]
        for r in rows:
            assert all(re.fullmatch(r"-?\d+(\.\d+)?|-", c) for c in r[-len(header):]), r   # no '134ms'
    e2e = next(r for r in tables["ntprof"][2] if r[0] == "end_to_end")
    assert e2e[-1] == "133657"   # max end_to_end, us (printed '134ms' in a us column before)
    # a table holding a value of 1 s or more is in ms, every cell of it
    stages = [dict(s) for s in doc["groups"][0]["stages"] if s["stage_set"] == "ntprof"]
    stages[0]["max_ns"] = 2_500_000_000
    table = render_text.stage_table(stages, "ntprof")
    assert table[0].startswith("  stage (ntprof, ms)")
    assert table[1].split()[-1] == "2500" and table[1].split()[2] == "19.7"   # avg 19737 us
    assert not any(c.endswith(("ms", "us")) for line in table[1:] for c in line.split()[1:])


def test_a_glossary_of_the_printed_stages_from_the_stage_table(analyzed):
    txt, _, html = analyzed(PATCHED)
    head = "Stages (ntprof; the stage table: sql/core/stage_definitions.sql)"
    glossary = " ".join(txt[txt.index(head) + len(head):].split())
    db = duckdb.connect()
    db.execute(open(os.path.join(views.SQL_DIR, "core/stage_definitions.sql")).read())
    defs = db.execute("SELECT stage_set, stage, meaning FROM stage_definitions ORDER BY stage_set, seq").fetchall()
    ntprof = [(st, m) for ss, st, m in defs if ss == "ntprof"]
    assert len(ntprof) == 13
    # every printed stage with its meaning, in the table's order, and nothing else
    assert glossary == " ".join(f"{st} {' '.join(m.split())}" for st, m in ntprof)
    for ss, st, meaning in defs:   # report.html: every set the run has (not initiator_only: no ACKs recorded)
        if ss != "initiator_only":
            assert html_text(meaning) in html, (ss, st)
        elif st.startswith("est_"):
            assert html_text(meaning) not in html, (ss, st)


def html_text(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#x27;").replace('"', "&quot;")


def test_percentiles_are_chosen_and_the_standard_deviation_is_the_durations(analyzed, fixture_run):
    txt, doc, html = analyzed(PATCHED, "--percentiles", "50,90,99,99.9")
    unit, header, rows = stage_tables(txt)["ntprof"]
    assert header == ["n", "avg", "stdev", "p50", "p90", "p99", "p99.9", "max"]
    assert doc["spec"]["percentiles"] == [50, 90, 99, 99.9]
    con = views.connect(fixture_run(PATCHED))
    for s in doc["groups"][0]["stages"]:
        durs = sorted(r[0] for r in con.execute(
            "SELECT dur FROM io_stages WHERE stage_set = ? AND stage = ? AND dur IS NOT NULL",
            [s["stage_set"], s["stage"]]).fetchall())
        assert len(durs) == s["count"] == 144
        assert s["stddev_ns"] == pytest.approx(statistics.stdev(durs), rel=1e-9)
        # nearest rank: the value at position ceil(q * n)
        want = [durs[-(-round(p * 10000) * len(durs) // 1000000) - 1] for p in (50, 90, 99, 99.9)]
        assert [p["dur_ns"] for p in s["percentiles"]] == want
        assert [p["pct"] for p in s["percentiles"]] == [50, 90, 99, 99.9]
        assert s["percentiles"][0]["dur_ns"] == s["p50_ns"] and s["percentiles"][3]["dur_ns"] == s["p999_ns"]
    e2e = next(r for r in rows if r[0] == "end_to_end")
    assert e2e[1:] == ["144", "19737", "14991", "16243", "34510", "77910", "133657", "133657"]
    assert "<th>stdev</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th>" in html


@pytest.mark.parametrize("value, message", [
    ("50,101", "percentile 101 is outside (0, 100]"),
    ("0", "percentile 0 is outside (0, 100]"),
    ("p99", "percentile 'p99' is not a number"),
    ("99.99999", "percentile 99.99999 has more than four decimals"),
])
def test_a_bad_percentile_is_a_clear_error(fixture_run, ntscope_cli, tmp_path, value, message):
    r = ntscope_cli("analyze", fixture_run(PATCHED), "--quiet", "--out", str(tmp_path / "o"), "--percentiles", value)
    assert r.returncode == 2 and message in r.stderr and "fix: " in r.stderr and "Traceback" not in r.stderr


def test_a_patched_run_prints_its_primary_stage_set_and_others_on_request(analyzed, fixture_run):
    txt, doc, _ = analyzed(PATCHED)
    assert list(stage_tables(txt)) == ["ntprof"]
    assert "stage sets: ntprof (also in report.json: s_notation, stock; --stage-set all)" in txt
    # the tables fit 106 columns; a line naming the run is as long as the test's scratch path
    assert max(len(l) for l in txt.splitlines() if os.path.dirname(fixture_run(PATCHED)) not in l) <= 106
    assert doc["stage_sets"] == ["ntprof", "s_notation", "stock"]   # the contract keeps every set
    assert {s["stage_set"] for s in doc["groups"][0]["stages"]} == {"ntprof", "s_notation", "stock"}
    everything, _, _ = analyzed(PATCHED, "--stage-set", "all")
    assert list(stage_tables(everything)) == ["ntprof", "s_notation", "stock"]
    chosen, cdoc, _ = analyzed(PATCHED, "--stage-set", "stock")
    assert list(stage_tables(chosen)) == ["stock"] and cdoc["stage_sets"] == ["stock"]
