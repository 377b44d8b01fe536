"""Tenants' part of `ntscope analyze` (reports/report/command.py): a tenants file read before
the run is (its rules are an input of the views, so the io rows carry their tenants), then
tenants.{txt,json}, tenant_seconds.parquet, file_seconds.parquet and class_seconds.parquet
in the report set.
Its text follows the report's on stdout, and its charts and class table are a section of
report.html, when some I/O's cgroup is known or a tenants file was given."""
import json

from ntscope.common.text import printable
from ntscope.reports.report.export import copy_query

STEM = "tenants"
SECONDS_COLUMNS = ("tenant, class, second, full_second, ios, iops, bytes, mb_s, mean_us, p99_us, max_us, "
                   "top_stage, top_stage_share")


def add_analyze_arguments(p):
    p.add_argument("--tenants", metavar="FILE", help="tenants file (TOML): cgroup patterns -> tenants -> classes "
                   "with objectives (reports/tenants/README.md); default: a tenant per top-level cgroup")


def before_views(ctx):
    """The file's rules replace tenant_rules' (empty) default before the io rows are built."""
    from ntscope.reports.tenants import tenants_file
    ctx.tenants_file = tenants_file.read(ctx.args.tenants) if ctx.args.tenants else ([], {})
    if ctx.args.tenants:
        ctx.view_inputs["tenant_rules"] = tenants_file.rule_rows(ctx.tenants_file[0])


def load(con, classes):
    """The class objectives (parsed against the run's stages) and the tenants views."""
    from ntscope.reports.tenants import tenants_file
    from ntscope.sql import views
    rows = []
    if classes:
        primary = con.execute("SELECT stage_set FROM primary_stage_set").fetchone()[0]
        stages = set(con.execute("SELECT stage_set, stage FROM io_stage_definitions").fetchall())
        rows = tenants_file.objective_rows(classes, primary, stages)
    views.load_modules(con, ["tenants/seconds"], {"class_objectives": rows})


def add_to_analysis(ctx):
    from ntscope.reports.tenants import model, render_html, render_text
    from ntscope.sql.query_rows import rows_of
    _, classes = ctx.tenants_file
    load(ctx.con, classes)
    # a run without any I/O's owner and no tenants file: the document says why, and the
    # per-second views (a pass over every I/O and its stages) are not computed
    recorded = bool(ctx.args.tenants) or ctx.con.execute(
        "SELECT EXISTS (SELECT 1 FROM io_selected WHERE cgroup_id IS NOT NULL OR file IS NOT NULL)").fetchone()[0]
    doc = model.build(ctx.con, ctx.run, ctx.args.tenants) if recorded else model.unrecorded(ctx.con, ctx.run)
    text = printable(render_text.tenants_text(doc))
    if model.recorded(doc):
        ctx.more_text.append(text)
    ctx.files.add(f"{STEM}.txt", text)
    ctx.files.add(f"{STEM}.json", json.dumps(doc, indent=1, default=str) + "\n")
    if model.recorded(doc):   # report.html's tenants section: per-tenant rate and p99 per second, the classes
        seconds = rows_of(ctx.con, f"SELECT {SECONDS_COLUMNS} FROM tenant_seconds ORDER BY tenant, second")
        ctx.html_sections.append(lambda page: render_html.tenants_section(
            page, doc, [dict(r, t_s=r["second"]) for r in seconds]))
    rows = "" if recorded else " LIMIT 0"   # the files' columns alone
    ctx.files.add("tenant_seconds.parquet", lambda path: copy_query(
        ctx.con, f"SELECT {SECONDS_COLUMNS} FROM tenant_seconds ORDER BY tenant, second{rows}", path))
    ctx.files.add("file_seconds.parquet", lambda path: copy_query(
        ctx.con, f"SELECT {SECONDS_COLUMNS.replace('tenant, ', 'file, ')} FROM file_seconds ORDER BY file, second{rows}", path))
    ctx.files.add("class_seconds.parquet", lambda path: copy_query(
        ctx.con, f"SELECT * FROM class_seconds ORDER BY class, second{rows}", path))
    ctx.results[STEM] = doc
