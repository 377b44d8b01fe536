"""ntscope-report: analyze one run (convert what is not converted, load the SQL views,
write report.txt, report.json, report.html and timeline.json under RUN/report/).

Exit status: 0 ok; 1 data loss (lost events or unmatched commands) under --strict;
2 fatal (bad input: the message says what, where, the value and the fix)."""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "sql"))

import load_views  # noqa: E402
from . import model, render_html, render_text, spec as specmod, timeline  # noqa: E402


def fail(msg):
    print(f"ntscope-report: {msg}", file=sys.stderr)
    sys.exit(2)


def resolve_run(run, runs_dir):
    for cand in (run, os.path.join(runs_dir, run)):
        if os.path.isdir(cand):
            return os.path.abspath(cand)
    fail(f"no run directory '{run}' (looked in . and {runs_dir}); fix: pass a run name under runs/ or a path")


def convert_missing(run_dir, ntscope):
    for host in sorted(os.listdir(run_dir)):
        trace = os.path.join(run_dir, host, "trace.dat")
        out = os.path.join(run_dir, host, "parquet")
        if not os.path.isfile(trace) or os.path.exists(os.path.join(out, "metadata.json")):
            continue
        if not ntscope or not os.path.exists(ntscope):
            fail(f"{trace} is not converted and the converter '{ntscope}' does not exist; fix: run `just build`")
        print(f"ntscope-report: converting {trace}", file=sys.stderr)
        r = subprocess.run([ntscope, "convert", trace, "--out", out])
        if r.returncode != 0:
            fail(f"converting {trace} failed (exit {r.returncode}); see the converter's message above")


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def interference_section(con, run_dir, out):
    """The interference report (views of sql/compare/interference_*.sql, rendered by
    ntscope_compare) over every I/O of the run: written as interference.{txt,json,html}
    and returned as text for the end of report.txt."""
    from ntscope_compare import load as cload, model as cmodel, render_html as chtml, render_text as ctext
    cload.run_sql_files(con, "interference")
    m = cmodel.interference_model(con, run_dir)
    itext = ctext.interference_text(m)
    write_atomic(os.path.join(out, "interference.txt"), itext)
    write_atomic(os.path.join(out, "interference.json"), chtml.to_json(m))
    write_atomic(os.path.join(out, "interference.html"), chtml.interference_html(m))
    return itext


def spec_from_args(a):
    kw = dict(types=a.type, sizes=a.size, devices=a.device, queues=a.queue, cpus=a.cpu,
              processes=a.process, window=a.window, group_by=a.group_by,
              time_bucket_s=a.time_bucket, stage_sets=a.stage_set)
    if a.spec:
        return specmod.Spec.from_toml(a.spec, **{k: v for k, v in kw.items() if k != "time_bucket_s"})
    return specmod.Spec(**kw)


def analyze(a):
    run_dir = resolve_run(a.run, a.runs)
    convert_missing(run_dir, a.ntscope)
    try:
        spec = spec_from_args(a)
        con = load_views.connect(run_dir, memory_limit=a.memory_limit)
        con.execute(spec.view_sql())
        doc = model.build(con, spec)
    except (specmod.SpecError, load_views.RunError) as e:
        fail(str(e))
    out = os.path.join(run_dir, "report")
    os.makedirs(out, exist_ok=True)
    text = render_text.render(doc, run_dir)
    write_atomic(os.path.join(out, "report.txt"), text)
    write_atomic(os.path.join(out, "report.json"), json.dumps(doc, indent=1, default=str) + "\n")
    write_atomic(os.path.join(out, "report.html"), render_html.render(doc))
    set_for_timeline = "stock" if doc["mode"] == "stock" or not doc["stage_sets"] else doc["stage_sets"][0]
    timeline.write(con, os.path.join(out, "timeline.json"), set_for_timeline)
    written = "report.txt, report.json, report.html, timeline.json"
    if not a.no_interference:
        text += "\n" + interference_section(con, run_dir, out)
        write_atomic(os.path.join(out, "report.txt"), text)
        written += ", interference.{txt,json,html}"
    if not a.quiet:
        sys.stdout.write(text)
    print(f"ntscope-report: wrote {out}/{written}", file=sys.stderr)
    loss = [s for s in doc["pipeline_stats"] if s["severity"] != "info" and
            (s["name"].startswith("lost_events") or s["name"].startswith("unmatched") or s["name"] == "matched_pct")]
    return 1 if (a.strict and loss) else 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="ntscope-report", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="run name under --runs, or a path to a run directory")
    ap.add_argument("--runs", default=os.environ.get("NTSCOPE_RUNS", os.path.join(REPO, "runs")))
    ap.add_argument("--ntscope", default=os.environ.get("NTSCOPE_BIN"), help="converter binary")
    ap.add_argument("--spec", help="TOML spec file ([filter], [group], [stages]); flags override it")
    ap.add_argument("--type", help="I/O types, e.g. read or read,write")
    ap.add_argument("--size", help="sizes: 4k exact, 4k-128k range, >=32k (comma list: any)")
    ap.add_argument("--device", help="block devices, e.g. nvme0n1")
    ap.add_argument("--queue", help="NVMe queue ids, e.g. 1,2")
    ap.add_argument("--cpu", help="submitting CPUs")
    ap.add_argument("--process", help="process names or pids (the bio's owner)")
    ap.add_argument("--window", help="START:END seconds from the first I/O, e.g. 1:4 or 2:")
    ap.add_argument("--group-by", help="fields: type,size,device,queue,cpu,process,pid,host,time (default type,size)")
    ap.add_argument("--time-bucket", default=1.0, type=float, help="seconds per group when grouping by time")
    ap.add_argument("--stage-set", help="stage sets to report (stock, ntprof, s_notation); default all present")
    ap.add_argument("--memory-limit", help="DuckDB memory limit, e.g. 4GB (it spills beyond)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when events were lost or commands unmatched")
    ap.add_argument("--quiet", action="store_true", help="do not print report.txt")
    ap.add_argument("--no-interference", action="store_true",
                    help="skip the interference section (streams sharing queues/devices; see just interference)")
    a = ap.parse_args(argv)
    return analyze(a)
