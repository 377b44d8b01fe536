"""--group-by time on the hand-checkable basic case (sql/tests/cases/basic/events.txt): each
time group's rates divide by its own bucket clipped to the selected window (not by the whole
window), and groups come out in time order.

The case: reads A and B and write C submitted (nvme_setup_cmd) at 1.002, 2.002 and 3.002 ms;
the first I/O is queued at 1.000 ms, the last completes at 3.301 ms. Buckets of 1 ms from
1.000 ms: A in [1, 2), B in [2, 3), C in [3, 4) clipped to [3, 3.301) = 301 us."""
import os

import pytest

from ntscope.reports.report import selection, spec as specmod
from ntscope.sql import views
# the SQL diff tests' text cases and their writer
from ntscope.sql.tests.fixture_from_text import write_run
from ntscope.sql.tests.test_diff import SQL_CASES


@pytest.fixture(scope="module")
def basic(tmp_path_factory):
    run = str(tmp_path_factory.mktemp("time_groups") / "run")
    os.makedirs(run)
    write_run(os.path.join(SQL_CASES, "basic", "events.txt"), run)
    return views.connect(run)


def test_time_group_rates_use_their_own_bucket(basic):
    selection.apply(basic, specmod.Spec(group_by="time", time_bucket_s=0.001))
    rows = basic.execute("SELECT group_key, count, bytes, time_start_ts, rate_dur_ns, iops, mb_s "
                         "FROM report_groups ORDER BY time_start_ts").fetchall()
    assert [(r[0], r[1], r[3], r[4]) for r in rows] == [
        ("time=0.000", 1, 1_000_000, 1_000_000),     # A: a whole 1 ms bucket
        ("time=0.001", 1, 2_000_000, 1_000_000),   # B
        ("time=0.002", 1, 3_000_000, 301_000),     # C: the last bucket ends with the window
    ]
    assert [r[5] for r in rows] == pytest.approx([1000.0, 1000.0, 1e9 / 301_000])
    assert [r[6] for r in rows] == pytest.approx([4.096, 4.096, 8192 * 1e3 / 301_000])


def test_other_groupings_still_use_the_window(basic):
    selection.apply(basic, specmod.Spec(group_by="type"))
    rows = dict(basic.execute("SELECT group_key, iops FROM report_groups").fetchall())
    # window: 1.000 ms .. 3.301 ms = 2301 us
    assert rows == pytest.approx({"type=read": 2e9 / 2_301_000, "type=write": 1e9 / 2_301_000})

