"""The timeline's part of `ntscope analyze` (reports/report/command.py): timeline.perfetto-trace
in the report set, its encoder started first so it runs beside the rest of the set."""
import os
import sys


def add_to_analysis(ctx):
    # imported here, as interference's part: the Perfetto protobuf modules are 0.1 s of every start
    from ntscope.reports.timeline import perfetto_trace as timeline
    timeline.stage_set_of(ctx.con, ctx.doc)
    # its encoder (a process of its own) runs from here on, beside the rendering and the per-I/O
    # Parquet that DuckDB writes at commit
    ctx.files.start(timeline.FILE_NAME, lambda path: timeline.start(ctx.con, path))


def note_after_writing(ctx, out):
    from ntscope.reports.timeline import perfetto_trace as timeline
    hint = timeline.size_hint(os.path.join(out, timeline.FILE_NAME))
    if hint:
        print(f"ntscope: note: {hint}", file=sys.stderr)
