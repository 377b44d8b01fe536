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
