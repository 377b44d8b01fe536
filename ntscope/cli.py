"""`ntscope COMMAND` (or `python3 -m ntscope COMMAND`): the front door (the justfile's recipes call it).
It parses and dispatches: `convert`, `sql`, `demo`, `completion` and `man` are here; each
analysis' command (analyze, say) is declared with its analysis
(reports/NAME/analysis.py) and runs from reports/NAME/command.py. `ntscope COMMAND --help` says
what each reads and writes; ntscope/COMMANDS.md is the whole reference.

Exit status: 0 ok; 1 data loss (lost events or unmatched commands) under --strict;
2 fatal (the message on stderr says what, where, the value and the fix; nothing that
looks complete is left behind)."""
import argparse
import os
import stat
import sys

from . import help_text
from .common import command_line as cl, converter, out_folder, read_only, runs
from .common.errors import EXIT_OK, NtscopeError
from .common.progress import Progress
from .common.text import EscapingStream, printable
from .reports import registry


fail = cl.fail


# ------------------------------------------------------------------ convert
def cmd_convert(a):
    run = runs.resolve(a.run)
    with Progress(["convert"], enabled=cl.show_progress(a)) as p:
        hosts = runs.require_hosts(run)
        if not read_only.writable(run, hosts):   # converted into its stand-in in the cache
            run = read_only.stand_in(run, hosts)
            read_only.note(a.run, run, a.quiet)
        done = runs.convert_missing(run, progress=p, quiet=a.quiet, verify=a.verify)
    if not a.quiet:
        print(f"ntscope: converted {', '.join(done) if done else 'nothing (every host is up to date)'} in {run}",
              file=sys.stderr)
    return EXIT_OK


# ------------------------------------------------------------------ sql
SCRIPT_HEADER = "-- ntscope view script (ntscope sql --script)"   # the first line of every script sql writes


def script_target(path):
    """Where `sql --script PATH` may write (None: '-', stdout): a new file, or a script it wrote
    before (its first line is SCRIPT_HEADER); never a file inside a run's inputs or outputs."""
    if path == "-":
        return None
    fix = "pass --script a new file name outside the run (or - for stdout)"
    inside = (out_folder.part_of_a_run(path) or out_folder.part_of_a_run_output(path)
              or out_folder.inside_a_run(os.path.dirname(os.path.abspath(path))))
    if inside:
        raise NtscopeError(f"refusing to write the view script to {path}: {inside}; fix: {fix}")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return os.path.abspath(path)
    except OSError as e:
        raise NtscopeError(f"cannot inspect --script {path}: {e.strerror}; fix: {fix}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise NtscopeError(f"refusing to write the view script to {path}: it is {kind}; fix: {fix}")
    try:
        with open(path, "rb") as f:
            first = f.read(len(SCRIPT_HEADER))
    except OSError as e:
        raise NtscopeError(f"cannot read --script {path}: {e.strerror}; fix: {fix}") from None
    if first != SCRIPT_HEADER.encode():
        raise NtscopeError(f"refusing to write the view script to {path}: it exists ({st.st_size} bytes) and is not a "
                           f"script ntscope wrote (its first line is not {SCRIPT_HEADER!r}); fix: {fix}, or remove "
                           "it yourself")
    return os.path.abspath(path)


def cmd_sql(a):
    from ntscope.sql import csv_runner, views
    run = runs.prepared(runs.resolve(a.run), quiet=True, verify=a.verify)
    if a.script:
        target = script_target(a.script)
        text = SCRIPT_HEADER + f" of {printable(run)!r}; load it in DuckDB, e.g. duckdb -init FILE\n" + views.build_script(run, milestones=a.milestones)
        if target is None:
            sys.stdout.write(text)
        else:
            from .common.output import write_text
            write_text(target, text)
        return EXIT_OK
    from ntscope.sql import guards
    out = None if a.unrestricted else guards.out_dir(a.out, run)
    if a.shell or (a.command is None and sys.stdin.isatty()):
        from ntscope.sql import shell
        return shell.run(run, memory_limit=a.memory_limit, temp_dir=a.temp_dir, milestones=a.milestones,
                         out=out, unrestricted=a.unrestricted)
    # -c or statements on stdin: the reports' own DuckDB connection, results as CSV
    con = views.connect(run, memory_limit=a.memory_limit, temp_dir=a.temp_dir, interference=True,
                        milestones=a.milestones)
    if not a.unrestricted:
        guards.apply(con, run, out)
    return csv_runner.run_script(con, a.command if a.command is not None else sys.stdin.read())


# ------------------------------------------------------------------ demo
def cmd_demo(a):
    from . import demo
    root = converter.checkout_root()
    if not root:
        raise NtscopeError("demo needs the source checkout (its fixtures/); fix: run it from a clone of ntscope")
    dst = os.path.join(runs.runs_dir(), "demo")
    try:
        demo.place(os.path.join(root, "fixtures", demo.FIXTURE), dst)
    except OSError as e:
        raise NtscopeError(f"cannot place the demo run in {dst}: {e.strerror} ({e.filename}); fix: check that "
                           f"{os.path.dirname(dst)} is a writable folder, or set NTSCOPE_RUNS") from None
    a.run = dst
    return registry.by_command("analyze").command_module().run(a)


# ------------------------------------------------------------------ arguments
def parser():
    ap = argparse.ArgumentParser(prog="ntscope", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    from . import __version__
    ap.add_argument("-V", "--version", action="version", version=f"ntscope {__version__}")
    sub = ap.add_subparsers(dest="command_name", required=True, metavar="COMMAND")
    sub.required = True
    c = sub.add_parser("convert", help="a run's hosts: each <host>/trace.dat not converted yet -> <host>/parquet/ "
                                       "(by `ntscope-analyzer convert`, which converts one trace.dat)")
    c.add_argument("run", help=cl.RUN_HELP)
    cl.add_common(c, "do not print which hosts were converted, nor the converter's one-line result per host "
                     "(warnings and errors still print)", memory=False, json_flag=False)
    c.set_defaults(fn=cmd_convert)
    for an in registry.analyses():   # each analysis' own command (reports/NAME/command.py)
        if an.command:
            module = an.command_module()
            p = sub.add_parser(an.command, help=an.summary)
            module.add_arguments(p)
            p.set_defaults(fn=module.run)
            p.epilog = getattr(module, "EXAMPLES", None)
    sq = sub.add_parser("sql", help="the views of a run in DuckDB's shell, or SQL from -c / stdin as CSV")
    sq.add_argument("run", help=cl.RUN_HELP)
    how = sq.add_mutually_exclusive_group()
    how.add_argument("-c", "--command", help="run these SQL statements, print results as CSV, exit 2 on error")
    how.add_argument("--shell", action="store_true", help="open DuckDB's shell even when stdin is not a terminal "
                     "(dot commands such as .mode from a file or pipe)")
    sq.add_argument("--script", metavar="FILE", help="write the whole view script to FILE instead (- for stdout): a new "
                    "file or one an earlier --script wrote, never a file of a run")
    sq.add_argument("--out", metavar="DIR", help="a folder SQL may write files to (COPY ... TO 'DIR/x.csv'), created "
                    "when missing; never inside a run. Without it SQL reads only the run's converted files "
                    "and writes nothing (README: What SQL may touch)")
    sq.add_argument("--unrestricted", action="store_true", help="lift the guards: SQL may read and write any "
                    "file you may (a run's trace.dat included), load extensions, and the shell's .read, "
                    ".output and .shell work")
    cl.add_milestones_flag(sq)
    cl.add_memory_flags(sq)
    cl.add_verify_flag(sq)
    sq.set_defaults(fn=cmd_sql)
    dm = sub.add_parser("demo", help="a bundled real two-host capture -> runs/demo -> report")
    report_command = registry.by_command("analyze").command_module()
    report_command.add_analyze_flags(dm)
    cl.add_common(dm, cl.quiet_help("report"))
    dm.set_defaults(fn=cmd_demo, out=None)
    co = sub.add_parser("completion", help="print a shell completion script (bash or zsh) for ntscope")
    co.add_argument("shell", choices=("bash", "zsh"))
    co.set_defaults(fn=cmd_completion)
    mn = sub.add_parser("man", help="print the ntscope(1) man page (roff), made from these --help texts")
    mn.set_defaults(fn=cmd_man)
    for name, p in sub.choices.items():
        p.epilog = p.epilog or help_text.EXAMPLES.get(name)
        p.formatter_class = argparse.RawDescriptionHelpFormatter
    return ap


def cmd_man(a):
    from . import __version__
    sys.stdout.write(help_text.man_page(parser(), __version__))
    return EXIT_OK


def cmd_completion(a):
    sys.stdout.write(help_text.completion_script(parser(), a.shell))
    return EXIT_OK


# spellings users type for a command (British English, other tools' words)
ALIASES = {"analyse": "analyze", "report": "analyze", "diff": "compare", "shell": "sql", "query": "sql"}


def did_you_mean(argv, commands):
    """exit 2 with the command meant, when ARGV's first word is a near miss of one."""
    import difflib
    word = next((w for w in argv if not w.startswith("-")), None)
    if word is None or word in commands:
        return
    guess = ALIASES.get(word) or next(iter(difflib.get_close_matches(word, commands, n=1, cutoff=0.75)), None)
    if guess:
        print(f"ntscope: error: no command {word!r}; did you mean {guess!r}? fix: ntscope {guess} ... "
              f"(commands: {', '.join(commands)})", file=sys.stderr)
        sys.exit(2)


def main(argv=None):
    ap = parser()
    commands = [c for act in ap._subparsers._group_actions for c in act.choices]
    did_you_mean(sys.argv[1:] if argv is None else list(argv), commands)
    a = ap.parse_args(argv)
    streams = sys.stdout, sys.stderr
    # names from runs and traces are data: no message or terminal report carries a terminal
    # sequence (progress draws on the original stderr, its label escaped there)
    sys.stderr = EscapingStream(sys.stderr)
    if sys.stdout.isatty():
        sys.stdout = EscapingStream(sys.stdout)
    try:
        with views_interrupt():
            return run_command(a)
    except KeyboardInterrupt:
        return interrupted()
    finally:
        sys.stdout, sys.stderr = streams


def interrupted():
    print("ntscope: interrupted; nothing was written under a final name", file=sys.stderr)
    return 130


def views_interrupt():
    from ntscope.sql import interrupts
    return interrupts.InterruptQueries()


def run_command(a):
    try:
        return a.fn(a)
    except NtscopeError as e:
        return fail(str(e))
    except KeyboardInterrupt:
        return interrupted()
    except Exception as e:  # noqa: BLE001 - every failure exits 2 with a message, never 1
        import duckdb
        if os.environ.get("NTSCOPE_DEBUG"):   # the traceback the messages below offer
            raise
        from ntscope.sql import interrupts
        if interrupts.query_interrupted(e):   # Ctrl-C stopped a query (interrupts.InterruptQueries, or DuckDB itself)
            return interrupted()
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if isinstance(e, duckdb.OutOfMemoryException):
            from ntscope.sql import memory_policy
            return fail(f"DuckDB ran out of memory ({first}) at memory limit "
                        f"{memory_policy.memory_limit_setting(getattr(a, 'memory_limit', None))}; fix: a larger --memory-limit "
                        "(or NTSCOPE_MEMORY_LIMIT; below ~200MB DuckDB cannot run the views), and free space "
                        "for its spill files under --temp-dir / TMPDIR; NTSCOPE_DEBUG=1 shows where")
        if isinstance(e, duckdb.IOException) and ("No space left" in str(e) or "Disk" in first):
            return fail(f"DuckDB could not write ({first}); fix: free disk space where it writes: the output folder, "
                        "and its spill folder under --temp-dir / NTSCOPE_TEMP_DIR / TMPDIR")
        if isinstance(e, duckdb.Error):
            # the run's event files are checked against metadata.json before the views read them
            # (runs.convert_missing), so the cause is rarely there: say what failed, not a guess
            return fail(f"DuckDB failed ({type(e).__name__}): {first}; fix: if it names a value you gave (a flag, "
                        "a spec file), give one in range; if it names a Parquet file of the run, run again with "
                        "--verify (every file checked against metadata.json, what differs converted again); else "
                        "report it with the command line (NTSCOPE_DEBUG=1 shows the traceback)")
        if isinstance(e, OSError) and e.errno is not None:
            from .common.output import fail_on_os_error
            try:
                fail_on_os_error("cannot read or write", e.filename or "a file", e)
            except NtscopeError as err:
                return fail(str(err))
        return fail(f"internal error ({type(e).__name__}: {e}); this is a bug: please report it with the "
                    "command line; set NTSCOPE_DEBUG=1 for the traceback")
