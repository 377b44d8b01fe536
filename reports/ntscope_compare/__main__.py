"""python3 -m ntscope_compare compare BASE RUN | interference RUN  (run from reports/)."""
import argparse
import os
import sys

from . import load, model, render_html, render_text


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="ntscope_compare", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare", help="LAD per stage and a verdict: RUN vs BASE")
    c.add_argument("base")
    c.add_argument("run")
    i = sub.add_parser("interference", help="streams and who waited behind whom in RUN")
    i.add_argument("run")
    for p in (c, i):
        p.add_argument("--out", help="report folder (default RUN/report)")
        p.add_argument("--quiet", action="store_true", help="do not print the text report")
    a = ap.parse_args(argv)
    try:
        run = load.resolve_run(a.run)
        out = a.out or os.path.join(run, "report")
        os.makedirs(out, exist_ok=True)
        if a.cmd == "compare":
            base = load.resolve_run(a.base)
            m = model.compare_model(base, run)
            text, page, name = render_text.compare_text(m), render_html.compare_html(m), "compare"
        else:
            con = load.run_connection(run)
            m = model.interference_model(con, run)
            text, page, name = render_text.interference_text(m), render_html.interference_html(m), "interference"
    except load.RunError as e:
        print(f"ntscope_compare: {e}", file=sys.stderr)
        return 2
    write(os.path.join(out, name + ".txt"), text)
    write(os.path.join(out, name + ".json"), render_html.to_json(m))
    write(os.path.join(out, name + ".html"), page)
    if not a.quiet:
        sys.stdout.write(text)
    print(f"wrote {out}/{name}.{{txt,json,html}}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
