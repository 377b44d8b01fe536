"""`ntscope analyze RUN`: the report of one run (report.{txt,json,html}, io.parquet,
io_stages.parquet), with what the other analyses add to it (each analysis whose declaration
names an `in_analyze` module: the timeline, interference, the compare input kept for a later
compare; reports/registry.py), written as one set into RUN/report or --out."""
import json
import os
import sys

from ntscope.common import command_line as cl, runs
from ntscope.common.errors import EXIT_DATA_LOSS, EXIT_OK
from ntscope.common.output import OutputLock, ReportSet
from ntscope.common.progress import Progress
from ntscope.common.text import printable
from ntscope.reports import registry
from ntscope.reports.report import spec


class AnalyzeContext:
    """What analyze's parts share: the flags (args), the run, its connection (con, from the
    views step on), the report document (doc), the report set being written (files), the texts
    printed on stdout after the report's (more_text, parts append theirs), the progress line, and each part's results
    by analysis name (results) for the parts after it."""

    def __init__(self, args, run, progress):
        self.args, self.run, self.progress = args, run, progress
        self.con = self.doc = self.files = None
        self.text = ""          # what stdout shows: the report's text, then more_text
        self.more_text = []     # the parts' texts, in order, after the report's
        self.results = {}
        self.interference_views = False   # the interference part asks for its views (before_views)
        self.view_inputs = {}   # the SQL modules' inputs the parts give (before_views: a tenants file's rules)
        self.html_sections = []   # callables(page) the parts add to report.html, after the objectives


EXAMPLES = """examples:
  ntscope analyze r1                      report.txt on stdout, the set in runs/r1/report/
  ntscope analyze r1 --type read --size 4k --group-by type,size,queue
  ntscope analyze r1 --slo 'read,4k: p99 <= 2ms' --window 5:65
  ntscope analyze r1 --json | jq '.groups[0].stages[0]'"""   # under --help


def add_arguments(p):
    p.add_argument("run", help=cl.RUN_HELP)
    p.add_argument("--out", help="report folder (default RUN/report)")
    add_analyze_flags(p)
    cl.add_common(p, cl.quiet_help("report"))


def add_analyze_flags(p):
    """analyze's own flags (also demo's), then each part's (add_analyze_arguments)."""
    p.add_argument("--spec", help="TOML spec file ([filter], [group], [stages]); flags override it")
    p.add_argument("--type", help="I/O types, e.g. read or read,write")
    p.add_argument("--size", help="sizes: 4k exact, 4k-128k range, >=32k (comma list: any)")
    p.add_argument("--device", help="block devices as the reports print them, e.g. initiator/nvme0n1 (or the disk "
                                    "alone, nvme0n1, when one initiator has it)")
    p.add_argument("--queue", help="transport queues as the reports print them, e.g. initiator/c0/q1,initiator/c0/q2 "
                                   "(or the qid alone, 1, when the run has one initiator)")
    p.add_argument("--cpu", help="submitting CPUs")
    p.add_argument("--process", help="process names or pids (the bio's owner)")
    p.add_argument("--stream", help="streams as interference prints them, e.g. 'fio/117 read 4096B' "
                                    "(process/pid, type, size)")
    p.add_argument("--host", help="initiator hosts (their run folders), e.g. initiator")
    p.add_argument("--target", help="target hosts (their run folders), e.g. target")
    p.add_argument("--cgroup", help="cgroups (their paths below the cgroup v2 root), e.g. /batch")
    p.add_argument("--tenant", help="tenants (a tenants file's names, else top-level cgroups), e.g. web")
    p.add_argument("--class", dest="klass", help="classes of a tenants file, e.g. latency")
    p.add_argument("--namespace", help="namespaces as '<subsystem NQN>/ns<nsid>'")
    p.add_argument("--file", help="files as tenants.txt prints them (their path, else '<disk>:ino <n>')")
    p.add_argument("--target-device", help="target backing devices as the reports print them, e.g. target/nullb0")
    p.add_argument("--path", help="paths as the reports print them (controller@target address:port), "
                                  "e.g. initiator/nvme0@169.254.10.2:4420")
    p.add_argument("--window", help="START:END seconds from the first I/O, e.g. 1:4 or 2:")
    p.add_argument("--group-by", help=f"fields: {','.join(spec.FIELDS)} (default {','.join(spec.DEFAULT_GROUP_BY)})")
    p.add_argument("--time-bucket", type=float, help="seconds per group when grouping by time (default 1; "
                   "overrides a spec file's time_bucket_s)")
    p.add_argument("--stage-set", help="stage sets to report (stock, ntprof, s_notation, initiator_only, or all); default: report.json and "
                        "report.html hold every set the run has, report.txt prints the primary one "
                        "(ntprof with NVMe/TCP events, else stock)")
    p.add_argument("--percentiles", metavar="LIST",
                   help="the percentiles of each stage, e.g. 50,90,99,99.9 (above 0, up to 100; default "
                        "10,50,70,80,90,95,99,99.9): report.txt's columns and report.json's stages[].percentiles")
    p.add_argument("--slo", action="append", metavar="OBJECTIVE",
                   help="an objective, e.g. 'read,4k: p99 <= 2ms' or 'write: target_device p90 < 500us' "
                        "(repeatable): met or missed, per second, and the worst I/Os")
    p.add_argument("--strict", action="store_true", help="exit 1 when events were lost or commands unmatched")
    for a in registry.in_analyze():
        add = getattr(a.analyze_part(), "add_analyze_arguments", None)
        if add:
            add(p)
    cl.add_milestones_flag(p)


def spec_from_args(a):
    kw = dict(types=a.type, sizes=a.size, devices=a.device, queues=a.queue, cpus=a.cpu,
              processes=a.process, streams=a.stream, hosts=a.host, targets=a.target, window=a.window, group_by=a.group_by,
              time_bucket_s=a.time_bucket, stage_sets=a.stage_set, slos=a.slo,
              percentiles=a.percentiles, cgroups=a.cgroup, tenants=a.tenant, classes=a.klass,
              namespaces=a.namespace, target_devices=a.target_device, files=a.file,
              paths=a.path)
    if a.spec:   # a flag given overrides the file's value
        return spec.Spec.from_toml(a.spec, **kw)
    return spec.Spec(**{k: v for k, v in kw.items() if v is not None})


def steps(parts):
    """The progress line's steps: convert, views (a run's, interference's), the report model, each
    part that has a step of its own (its STEP), write."""
    return (["convert", "views", "interference", "report model"] + [p.STEP for p in parts if hasattr(p, "STEP")]
            + ["write"])


def run(a):
    from ntscope.reports.report import export, model, plot_data, render_html, render_text, selection
    from ntscope.reports.slo import objectives as slo
    from ntscope.sql import views
    run_dir = runs.resolve(a.run)
    runs.require_hosts(run_dir)   # before the lock file: nothing is written into a folder that is no run
    out = cl.report_folder(a.out, run_dir)
    spec = spec_from_args(a)
    parts = [x.analyze_part() for x in registry.in_analyze()]
    with OutputLock(out), Progress(steps(parts), enabled=cl.show_progress(a)) as p:
        p.step("converting hosts not converted yet")
        ctx = AnalyzeContext(a, runs.prepared(run_dir, progress=p, quiet=a.quiet, verify=a.verify), p)
        for part in parts:   # what must be known before the views read the files
            if hasattr(part, "before_views"):
                part.before_views(ctx)
        ctx.con = con = views.connect(ctx.run, memory_limit=a.memory_limit, temp_dir=a.temp_dir,
                                      interference=ctx.interference_views, progress=p, milestones=a.milestones,
                                      inputs=ctx.view_inputs)
        p.step("report model (groups, stage statistics, histograms; the timeline's order)", con)
        selection.apply(con, spec)
        slo.load(con, spec.slos)
        ctx.doc = doc = model.build(con, spec)
        ctx.files = files = ReportSet(out)
        try:
            for part in parts:   # the timeline first: its encoder runs beside everything after it
                part.add_to_analysis(ctx)
            ctx.text = printable(render_text.render(doc, ctx.run)) + "".join("\n" + t for t in ctx.more_text)
            files.add("report.json", json.dumps(doc, indent=1, default=str) + "\n")
            files.add("report.html", render_html.render(doc, plot_data.build(con, doc), ctx.html_sections))
            files.add("io.parquet", lambda path: export.write_io(con, path))
            files.add("io_stages.parquet", lambda path: export.write_stages(con, path, doc["stage_sets"]))
            files.add("report.txt", ctx.text)
            p.step("writing the report set (per-I/O Parquet, timeline)")
            written = files.commit()
        except BaseException:
            files.abort()
            raise
        # a caller that reads more from the same views once the set is written (fleet ingest:
        # the run's fleet rows, the report's numbers from the same connection)
        if getattr(a, "after_report", None):
            a.after_report(ctx)
    return finish(a, out, ctx, written, parts)


def finish(a, out, ctx, written, parts):
    """What the user sees once the set is written: the report (or its JSON), where it went, each
    part's notes, and the exit status (inconsistent inputs: 2; lost data under --strict: 1)."""
    if getattr(a, "json", False):
        with open(os.path.join(out, "report.json")) as f:
            sys.stdout.write(f.read() + "\n")
    elif not a.quiet:
        sys.stdout.write(ctx.text)
    print(f"ntscope: wrote {out}/{{{','.join(sorted(os.path.basename(w) for w in written))}}}", file=sys.stderr)
    for part in parts:
        if hasattr(part, "note_after_writing"):
            part.note_after_writing(ctx, out)
    stats = ctx.doc["pipeline_stats"]
    bad = [s["name"] for s in stats if s["name"].startswith("input_error:")]
    if bad:
        return cl.fail(f"the run's inputs are inconsistent ({', '.join(bad)}); the report lists what is wrong "
                       "and its numbers are not to be trusted; fix: see the INPUT ERROR lines of report.txt")
    loss = [s for s in stats if s["severity"] != "info" and
            (s["name"].startswith(("lost_events", "unmatched", "data_loss:")) or s["name"] == "matched_pct")]
    if a.strict and loss:
        shown = ", ".join(f"{s['name']} {s['value']}" for s in loss[:4]) + (f" (and {len(loss) - 4} more)" if len(loss) > 4 else "")
        print(f"ntscope: --strict: exit 1: the run lost data or left commands unmatched ({shown}); the report says "
              "what each means (pipeline_stats); fix: record again as its fix says, or drop --strict to accept them",
              file=sys.stderr)
        return EXIT_DATA_LOSS
    return EXIT_OK
