"""What every ntscope command shares on the command line: the flags every command has
(--quiet, --json, --verify, --no-progress, the memory flags, --milestones), where a report set
goes (report_folder) and how it is written and announced. The commands themselves live with
their analyses (reports/NAME/command.py); ntscope/cli.py only parses and dispatches."""
import json
import os
import sys

from . import out_folder, runs
from .errors import EXIT_FATAL
from .output import ReportSet


def fail(msg):
    print(f"ntscope: error: {msg}", file=sys.stderr)
    return EXIT_FATAL


def show_progress(a):
    return False if a.no_progress else None  # None: on a TTY only


def report_folder(out_arg, run):
    """The folder a report set goes to (--out, else RUN/report), checked before any work:
    one ntscope may write (out_folder.check_target)."""
    runs.host_dirs(run)   # a host folder named report is said as such, not as a refused output
    out = os.path.abspath(out_arg) if out_arg else os.path.join(run, runs.REPORT_DIR)
    out_folder.check_target(out, out_folder.REPORT)
    return out


def write_three(out, stem, text, doc, html, progress):
    """STEM.txt, STEM.json and STEM.html swapped into `out` as one set."""
    files = ReportSet(out)
    files.add(f"{stem}.txt", text)
    files.add(f"{stem}.json", json.dumps(doc, indent=1, default=str))
    files.add(f"{stem}.html", html)
    progress.step("writing the report set")
    files.commit()


def announce_written(out, stem, text, quiet, why="", as_json=False):
    """The text report on stdout (unless quiet; as_json: the JSON document written instead, byte
    for byte), and where the set went on stderr (why: a note on why there, for a default folder
    that is not the obvious one)."""
    if as_json:
        with open(os.path.join(out, f"{stem}.json")) as f:
            sys.stdout.write(f.read() + "\n")
    elif not quiet:
        sys.stdout.write(text)
    print(f"ntscope: wrote {out}/{stem}.{{txt,json,html}}{why}", file=sys.stderr)


RUN_HELP = "run name under $NTSCOPE_RUNS (default ./runs) or a path"


def quiet_help(stem):
    """--quiet of a command that writes STEM.{txt,json,html}: what it leaves out (warnings,
    errors and the line naming what was written still go to stderr)."""
    return (f"do not print {stem}.txt on stdout (the report set is still written; its folder is named "
            "on stderr)")


def add_common(p, quiet, memory=True, json_flag=True):
    """The flags every command has; QUIET is its --quiet help (quiet_help)."""
    p.add_argument("--quiet", action="store_true", help=quiet)
    if json_flag:
        p.add_argument("--json", action="store_true", help="print the JSON document (what the set's .json file holds) "
                       "on stdout instead of the text report, for scripts and jq")
    add_verify_flag(p)
    p.add_argument("--no-progress", action="store_true", help="no progress line even on a terminal")
    if memory:
        add_memory_flags(p)


def add_verify_flag(p):
    p.add_argument("--verify", action="store_true",
                   help="check every trace.dat and event file against the checksums in metadata.json (a full read) "
                        "instead of only the files whose size, times or inode changed since conversion")


def add_milestones_flag(p):
    """--milestones: where a host that recorded both the patched events and the capture's probes
    takes its NVMe/TCP milestones from (sql/core/events.sql, host_milestones)."""
    p.add_argument("--milestones", default=None, choices=("auto", "tracepoint", "probe"),
                   help="NVMe/TCP milestones of a host that recorded both: auto (default: the patched events), "
                        "tracepoint, or probe (the capture's probes; the lab's agreement check)")


def add_memory_flags(p):
    """--memory-limit / --temp-dir: DuckDB's bound and spill folder (ntscope.sql.connection.new_connection)."""
    p.add_argument("--memory-limit", default=None,
                   help="DuckDB memory limit per connection, e.g. 3GB, 500MB; beyond it DuckDB spills to disk "
                        "(default $NTSCOPE_MEMORY_LIMIT, else 2GB or half the RAM of a smaller machine; "
                        "none: DuckDB's own default, 80%% of RAM)")
    p.add_argument("--temp-dir", default=None,
                   help="folder under which a private spill folder is made and removed afterwards "
                        "(default $NTSCOPE_TEMP_DIR, else TMPDIR or /tmp)")
