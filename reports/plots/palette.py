"""The one stage -> colour mapping of every chart of every page.

A stage's colour is STAGE_COLOURS[seq] (stage_definitions.seq, the stage table's own
order), so the mapping is fixed by the stage table and the same in every chart that draws
the stage, whatever other stages it draws; end_to_end (seq 0 in every shipped set) is
near-black. 13 distinct colours cover the largest shipped set (ntprof, seq 0..12); stages
users add beyond them take the extra colours, then repeat."""

STAGE_COLOURS = [
    "#262626",  # 0  end_to_end
    "#1f77b4",  # 1  blue
    "#ff7f0e",  # 2  orange
    "#2ca02c",  # 3  green
    "#d62728",  # 4  red
    "#9467bd",  # 5  purple
    "#8c564b",  # 6  brown
    "#e377c2",  # 7  pink
    "#17becf",  # 8  cyan
    "#bcbd22",  # 9  olive
    "#7f7f7f",  # 10 grey
    "#393b79",  # 11 indigo
    "#c51b8a",  # 12 magenta
    # beyond the shipped sets (user stages)
    "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#9edae5",
]

# Queues, devices and streams are not stages: their lines take a palette of their own.
SERIES_COLOURS = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2",
                  "#eeca3b", "#9d755d", "#bab0ac", "#ff9da6"]
ALL_COLOUR = "#262626"   # the run total ('all') of a time series


# The "not measured" segment of a breakdown (end_to_end minus the measured top-level stages, on
# a run that lacks some): a light grey no stage has, so it never reads as a measured stage.
UNMEASURED_SEQ = 999
UNMEASURED_COLOUR = "#d9d9d9"


def stage_colour(seq):
    if int(seq) == UNMEASURED_SEQ:
        return UNMEASURED_COLOUR
    return STAGE_COLOURS[int(seq) % len(STAGE_COLOURS)]


def stage_scale(stages):
    """(domain, range) of a colour scale for (stage, seq) pairs, in seq order: the stages a
    chart draws, each with its fixed colour."""
    pairs = sorted({(seq, stage) for stage, seq in stages})
    return [s for _, s in pairs], [stage_colour(q) for q, _ in pairs]


def series_scale(names):
    """(domain, range) for queue / device / stream lines: 'all' near-black, the others in
    order."""
    names = list(dict.fromkeys(names))
    rest = [n for n in names if n != "all"]
    dom = (["all"] if "all" in names else []) + rest
    rng = ([ALL_COLOUR] if "all" in names else []) + [SERIES_COLOURS[i % len(SERIES_COLOURS)] for i in range(len(rest))]
    return dom, rng
