"""Display units and labels (the only conversions the pages make): ns -> us / s, log2
bucket labels, and why a stage is not drawn."""


def us(ns):
    return None if ns is None else ns / 1e3


def seconds(ns):
    return None if ns is None else ns / 1e9


def us_text(ns):
    """A duration for a table cell: 4.8 below 100 us, 536 above."""
    if ns is None:
        return "-"
    return f"{ns / 1e3:.1f}" if abs(ns) < 100_000 else f"{ns / 1e3:.0f}"


def bucket_label(bucket, lo_ns, hi_ns):
    """report_stage_histogram's bucket as a range in us: '< 0', '0-1', '2-4', ..."""
    if bucket == -2:
        return "< 0"
    return f"{lo_ns / 1e3:g}-{hi_ns / 1e3:g}"


# why a stage has nothing to draw (status of plot_stage_presence / cmp_plot_presence)
NOT_DRAWN = {
    "missing": "no I/O has both of its events",
    "all_zero": "every duration is 0: its two events coincide",
    "not_positive": "no duration above 0, which a log time axis cannot show",
    "base_only": "only the base run has it",
    "run_only": "only the compared run has it",
}


def not_drawn(rows, drawable):
    """'stage (reason); ...' for the rows (stage, status) whose status is not in drawable."""
    return "; ".join(f"{r['stage']} ({NOT_DRAWN.get(r['status'], r['status'])})"
                     for r in rows if r["status"] not in drawable)


def table_unit(values_ns, ms_from_ns=1_000_000_000):
    """One unit for a whole table (every column of it), named in its header: us, or ms when its
    largest duration is MS_FROM_NS or more (by default 1 s: 7 digits of us would fill a column).
    -> (name, ns per unit)."""
    big = max((abs(v) for v in values_ns if v is not None), default=0)
    return ("ms", 1e6) if big >= ms_from_ns else ("us", 1e3)
