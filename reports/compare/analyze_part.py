"""Compare's part of `ntscope analyze` (reports/report/command.py): the run's compare input kept
in RUN/.ntscope/compare-side (side_cache), so a later compare of the run reads it instead of
building the views again. It needs interference's document (ctx.results["interference"])."""
from ntscope.sql import compare_side_cache as side_cache, compare_sides as load


def add_analyze_arguments(p):
    p.add_argument("--no-cache", action="store_true",
                   help="keep nothing in RUN/.ntscope/ (by default analyze keeps the run's compare input "
                        "there: a later compare of the run reads it instead of building the views again)")


def before_views(ctx):
    """The run's key, read before the views read its files (None: nothing is kept: a later compare
    reads the side with the default milestones and interference, so only that one is)."""
    a = ctx.args
    keep = not a.no_interference and not a.no_cache and a.milestones in (None, "auto")
    ctx.results["compare"] = side_cache.key(ctx.run) if keep else None


def add_to_analysis(ctx):
    key, interference = ctx.results.get("compare"), ctx.results.get("interference")
    if key is not None and interference:
        load.keep_analyzed_side(ctx.con, ctx.run, key, *interference)
