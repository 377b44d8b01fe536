"""What the command line shows beyond its flags: the examples under each command's --help
(EXAMPLES; an analysis' command has its own, in reports/NAME/command.py) and shell completion
generated from the parser itself (completion_script), so neither can name a flag the parser
does not have (ntscope/tests/test_first_hour.py)."""

EXAMPLES = {
    "convert": """examples:
  ntscope convert runs/r1                 convert every host not converted yet
  ntscope convert r1 --verify             hash every converted file against metadata.json""",
    "sql": """examples:
  ntscope sql r1                          DuckDB's shell on the run's views
  ntscope sql r1 -c 'SELECT match_state, count(*) FROM io GROUP BY 1'
  ntscope sql r1 --out exports -c "COPY (FROM io) TO 'exports/io.csv'"
  ntscope sql r1 < questions.sql          statements on stdin, results as CSV""",
    "demo": """examples:
  ntscope demo                            the bundled capture -> runs/demo -> report
  ntscope demo --json | jq .pipeline_stats""",
    "man": """examples:
  ntscope man > ~/.local/share/man/man1/ntscope.1 && man ntscope""",
    "completion": """examples:
  ntscope completion bash > ~/.local/share/bash-completion/completions/ntscope
  source <(ntscope completion bash)       this shell only""",
}


def commands_and_flags(parser):
    """{command: [flag, ...]} of an argparse parser with subcommands."""
    import argparse
    out = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                # a command's own subcommands' flags too (fleet ingest / report / sql)
                nested = [q for a in sub._actions if isinstance(a, argparse._SubParsersAction) for q in a.choices.values()]
                out[name] = sorted({o for q in [sub, *nested] for a in q._actions for o in a.option_strings})
    return out


def completion_script(parser, shell):
    """A bash completion function for `ntscope` (zsh loads it through bashcompinit): the
    commands, each command's flags, and files and folders for its arguments."""
    table = commands_and_flags(parser)
    cases = "\n".join(f"        {name}) flags=\"{' '.join(flags)}\" ;;" for name, flags in sorted(table.items()))
    body = f"""# ntscope completion ({shell}), generated from ntscope's own parser: ntscope completion {shell}
_ntscope() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} cmd=${{COMP_WORDS[1]}} flags=""
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "{' '.join(sorted(table))} -h --help -V --version" -- "$cur"))
        return
    fi
    case "$cmd" in
{cases}
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    else
        COMPREPLY=($(compgen -d -- "$cur") $(compgen -f -- "$cur"))
    fi
}}
"""
    if shell == "zsh":
        body = "autoload -U +X bashcompinit && bashcompinit\n" + body
    return body + "complete -o filenames -F _ntscope ntscope\n"


def man_page(parser, version):
    """ntscope(1) in roff, from the parser: the description, then each command's own --help
    text (usage, flags with their defaults, examples)."""
    import argparse
    import datetime

    def roff(text):
        return "\n".join(("\\&" + line if line.startswith((".", "'")) else line).replace("\\", "\\\\").replace("\\\\&", "\\&")
                         for line in text.splitlines())
    sections = [f'.TH NTSCOPE 1 "{datetime.date.today().isoformat()}" "ntscope {version}" "User Commands"',
                ".SH NAME", "ntscope \\- where each NVMe-over-TCP I/O spends its time",
                ".SH SYNOPSIS", ".B ntscope", "\\fICOMMAND\\fR [\\fIflags\\fR]",
                ".SH DESCRIPTION", ".nf", roff(parser.description or ""), ".fi"]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                # a command with subcommands of its own (fleet): each one's help after its own
                nested = [q for a in sub._actions if isinstance(a, argparse._SubParsersAction) for q in a.choices.values()]
                sections += [f".SH COMMAND: {name.upper()}", ".nf",
                             "\n\n".join(roff(q.format_help()) for q in [sub, *nested]), ".fi"]
    sections += [".SH SEE ALSO", "README.md in the ntscope source tree: recipes, outputs, troubleshooting."]
    return "\n".join(sections) + "\n"
