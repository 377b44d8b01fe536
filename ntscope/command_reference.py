"""ntscope/COMMANDS.md, the command reference, made from the parser itself: every command, its
arguments, every flag with its default, and its examples. ntscope/tests/test_docs.py fails when
the file is not what the parser says.

  python -m ntscope.command_reference --write   rewrite ntscope/COMMANDS.md
  python -m ntscope.command_reference --check   exit 1 when it differs (--file F: another file)"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join("ntscope", "COMMANDS.md")   # from the checkout's root


def subcommands(parser):
    return {name: p for act in parser._actions if isinstance(act, argparse._SubParsersAction)
            for name, p in act.choices.items()}


def summaries(parser):
    return {a.dest: a.help for act in parser._actions if isinstance(act, argparse._SubParsersAction)
            for a in act._choices_actions}


def with_nested(p):
    """P and its own subcommands' parsers (`fleet ingest`, `fleet report`: a command's flags are
    its own and theirs)."""
    return [p, *subcommands(p).values()]


def flags_by_command(parser):
    """{command: {--flag, -f, ...}} of every subcommand, its own subcommands' included (-h/--help
    left out)."""
    return {name: {o for q in with_nested(p) for a in q._actions if not isinstance(a, argparse._HelpAction)
                   for o in a.option_strings}
            for name, p in subcommands(parser).items()}


def cell(text):
    return (text or "").replace("|", "\\|").replace("\n", " ").replace("%%", "%")


def default_of(action):
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
        return "off"
    if action.default in (None, argparse.SUPPRESS):
        return "-"   # the meaning says what applies (an environment variable, the run, a spec file)
    return f"`{action.default}`"


def flag_rows(p):
    rows = []
    for a in p._actions:
        if not a.option_strings or isinstance(a, argparse._HelpAction):
            continue
        shown = ", ".join(a.option_strings)
        if a.nargs != 0:
            meta = a.metavar or (("{" + ",".join(a.choices) + "}") if a.choices else a.dest.upper())
            shown += f" {meta}"
        rows.append(f"| `{shown}` | {default_of(a)} | {cell(a.help)} |")
    return rows


def positional_rows(p):
    return [f"| `{a.metavar or a.dest}` | {cell(a.help or ('one of ' + ', '.join(a.choices) if a.choices else ''))} |"
            for a in p._actions if not a.option_strings and not isinstance(a, argparse._SubParsersAction)]


def section(title, summary, p):
    """A command's lines: its title, summary, usage, arguments and flags."""
    usage = " ".join(p.format_usage().split())
    usage = usage[len("usage: "):] if usage.startswith("usage: ") else usage
    out = [title, "", cell(summary), "", "```", usage, "```", ""]
    pos = positional_rows(p)
    if pos:
        out += ["| argument | meaning |", "|---|---|", *pos, ""]
    return out + ["| flag | default | meaning |", "|---|---|---|", *flag_rows(p), ""]


def render(parser):
    out = ["# ntscope command reference", "",
           "Made from the command line's own parser (`python -m ntscope.command_reference --write`); "
           "`ntscope COMMAND --help` prints the same. README.md has the recipes, ARCHITECTURE.md where each "
           "command's code lives.", ""]
    helps = summaries(parser)
    for name, p in subcommands(parser).items():
        out += section(f"## ntscope {name}", helps.get(name), p)
        if p.epilog:
            out += ["```", p.epilog.strip(), "```", ""]
        nested = summaries(p)
        for sub, q in subcommands(p).items():
            out += section(f"### ntscope {name} {sub}", nested.get(sub), q)
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m ntscope.command_reference")
    how = ap.add_mutually_exclusive_group(required=True)
    how.add_argument("--write", action="store_true")
    how.add_argument("--check", action="store_true")
    ap.add_argument("--file", default=os.path.join(os.path.dirname(HERE), REFERENCE))
    a = ap.parse_args(argv)
    from ntscope import cli
    text = render(cli.parser())
    if a.write:
        with open(a.file + ".tmp", "w") as f:
            f.write(text)
        os.replace(a.file + ".tmp", a.file)
        print(f"wrote {a.file}", file=sys.stderr)
        return 0
    try:
        with open(a.file) as f:
            current = f.read()
    except FileNotFoundError:
        current = None
    if current != text:
        print(f"{a.file} is stale: python -m ntscope.command_reference --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
