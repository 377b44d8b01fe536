"""The report reads its stage statistics, histograms and CDFs from selected_stage_values, the
distinct durations kept once by selection.apply (sql/report/selection.sql), not from the views that
compute them again for each. On a real capture (stock-randrw-mixed: reads and writes), for two
selections applied one after the other on the same connection: the report's groups hold
exactly the rows of report_stage_stats, report_stage_histogram and report_stage_cdf of that
selection (a table left from the first selection would give the second one's groups the
first one's rows, or none)."""
import pytest

from ntscope.reports.report import model, selection, spec as specmod
from ntscope.sql import views


@pytest.fixture(scope="module")
def con(fixture_run):
    return views.connect(fixture_run("stock-randrw-mixed"))


def view_rows(con, sql):
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def expected_groups(con):
    """group key -> (stage rows, histogram rows, cdf lists) from the views, in the model's order."""
    out = {}
    for s in view_rows(con, "SELECT * EXCLUDE (seq) FROM report_stage_stats ORDER BY group_key, stage_set, seq"):
        out.setdefault(s.pop("group_key"), ([], [], []))[0].append(s)
    for h in view_rows(con, "SELECT group_key, stage_set, stage, bucket, lo_ns, hi_ns, count "
                            "FROM report_stage_histogram ORDER BY group_key, stage_set, seq, bucket"):
        out[h.pop("group_key")][1].append(h)
    for c in view_rows(con, "SELECT group_key, stage_set, stage, list(dur_ns ORDER BY pct) AS dur_ns "
                            "FROM report_stage_cdf GROUP BY group_key, stage_set, stage, seq ORDER BY group_key, stage_set, seq"):
        out[c.pop("group_key")][2].append(c)
    return out


@pytest.mark.parametrize("group_by", [None, "type"])
def test_report_groups_hold_their_selections_rows(con, group_by):
    for spec in (specmod.Spec(group_by="type" if group_by is None else None), specmod.Spec(group_by=group_by)):
        selection.apply(con, spec)   # the first selection's table must not survive the second
        doc = model.build(con, spec)
    want = expected_groups(con)
    assert sorted(g["key_text"] for g in doc["groups"]) == sorted(want)
    if group_by == "type":
        assert sorted(want) == ["type=read", "type=write"]
    for g in doc["groups"]:
        stages, hist, cdf = want[g["key_text"]]
        assert len(stages) > 5 and len(hist) > len(stages) and len(cdf) == len(stages)
        assert [{k: v for k, v in s.items() if k != "percentiles"} for s in g["stages"]] == \
            [{k: s[k] for k in g["stages"][0] if k != "percentiles"} for s in stages]
        # the default percentiles, from stage_percentiles_over, are the view's fixed columns
        cols = ["p10_ns", "p50_ns", "p70_ns", "p80_ns", "p90_ns", "p95_ns", "p99_ns", "p999_ns"]
        assert [[p["dur_ns"] for p in s["percentiles"]] for s in g["stages"]] == [[s[c] for c in cols] for s in stages]
        assert g["histograms"] == hist
        assert g["cdf_pct_1_to_100"] == cdf
        counts = {(s["stage_set"], s["stage"]): s["count"] for s in stages}
        for c in cdf:
            assert len(c["dur_ns"]) == 100 and c["dur_ns"] == sorted(c["dur_ns"])
        assert sum(h["count"] for h in hist if h["stage"] == "end_to_end") == \
            sum(n for (_, st), n in counts.items() if st == "end_to_end")
