"""interference.txt's sparklines: each line from its series' lowest value to its highest, so a
queue that stays 5 to 7 deep shows its swings instead of a solid bar."""
from ntscope.reports.interference.render_text import SPARK, spark


def test_a_deep_queue_that_swings_is_not_a_solid_bar():
    line = spark([5.0, 6.7, 4.5, 6.0, 5.5])
    assert line[2] == SPARK[1] and line[1] == SPARK[8]   # the lowest one dot high, the highest a full block
    assert len(set(line)) == 5


def test_a_flat_series_sits_at_mid_height_and_an_empty_bin_is_blank():
    assert spark([3.0, 3.0, 3.0]) == SPARK[4] * 3
    assert spark([None, 2.0, 4.0]) == " " + SPARK[1] + SPARK[8]
    assert spark([None, None]) == "  "


def test_long_waits_print_in_ms_and_short_ones_in_us():
    from ntscope.reports.interference.render_text import interference_text
    doc = {"run_dir": "r", "streams": [
        {"stream_id": "fio/1 read 4096B", "ios": 10, "mb_s": 1.0, "cpus": "0", "queues": "i/c0/q1", "mean_wait_ns": 150_000_000},
        {"stream_id": "fio/2 read 4096B", "ios": 10, "mb_s": 1.0, "cpus": "1", "queues": "i/c0/q1", "mean_wait_ns": 4_663_000}],
        "sharing": [], "stream_verdicts": [], "primary_stage_set": "stock", "timeseries": [], "resource_summary": [],
        "breakdown": [{"stream_id": "fio/1 read 4096B", "stage_set": "stock", "stage": "end_to_end", "seq": 0,
                       "parent": None, "mean_ns": 4_707_000}]}
    text = interference_text(doc)
    assert "mean wait ms" in text and " 150\n" in text and " 4.7\n" in text   # one unit per table
    assert "per-stream breakdown (mean us, top-level stages)" in text and "end_to_end=4707" in text
