"""Docs that cannot drift: every repository path, `just` recipe and `ntscope` command and flag
that a Markdown file of the repository names exists; ntscope/COMMANDS.md is what the parser
says today (python -m ntscope.command_reference --write makes it). Each check is shown to fail
on a planted mistake."""
import os
import re
import subprocess
import sys

import pytest

from ntscope import cli, command_reference

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP_DIRS = {".git", "runs", "node_modules", "target", "__pycache__", ".ci-cache"}
# where a repository path starts (the top-level folders and files)
TOP = ("capture/", "kernel-patches/", "analyzer/", "sql/", "reports/", "fixtures/", "ntscope/", "tools/", ".ci/")
TOP_FILES = ("README.md", "ARCHITECTURE.md", "justfile", "setup.sh", "pyproject.toml", "constraints.txt")
PATH = re.compile(r"(?<![\w/.$~-])((?:" + "|".join(re.escape(t) for t in TOP) + r")[\w./*<>{}$-]*)")
CODE = re.compile(r"`([^`\n]+)`")
JUST = re.compile(r"(?<![\w-])just\s+([a-z][\w-]*)")
# a command line: ntscope first on the line (after a prompt, sudo or VAR=value) or after | && ; $(
NTSCOPE = re.compile(r"(?:^|[|;&]\s*|\$\(|^\$ |^sudo |^(?:[A-Z_]+=\S*\s+)+)ntscope\s+([a-z][\w-]*)((?:\s+[^\s|;&<>`]+)*)", re.M)
FLAG = re.compile(r"(?<![\w-])(--[a-z][\w-]*)")
# words that are not recipes after `just` in prose ("just as", "just the") are not in code
RECIPE_LINE = re.compile(r"^(@?)([a-z_][\w-]*)(?:[ \t][^:\n]*)?:(?!=)", re.M)


def markdown_files(repo):
    for folder, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".") or d == ".ci")
        for f in sorted(files):
            if f.endswith(".md"):
                yield os.path.join(folder, f)


def code_of(text):
    """The code a Markdown text holds: fenced blocks' lines and inline `spans`."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            out.append(line)
        else:
            out += CODE.findall(line)
    return out


def recipes(repo):
    """Every recipe of the justfile and the .just files it imports."""
    names = set()
    paths = [os.path.join(repo, "justfile")] + [os.path.join(d, f) for d, _, fs in os.walk(repo)
                                                 if not set(os.path.relpath(d, repo).split(os.sep)) & SKIP_DIRS
                                                 for f in fs if f.endswith(".just")]
    for p in paths:
        with open(p) as f:
            names |= {m.group(2) for m in RECIPE_LINE.finditer(f.read())}
    return names - {"set", "import", "export", "alias", "mod"}


def concrete(path):
    """A path as written, without what only names a kind of path (placeholders, globs)."""
    path = path.rstrip(".,:;)")
    if re.search(r"[<>*{}$]|NAME|RUN|HOST|\.\.\.", path):
        return None
    return path


def missing_paths(repo, md_path, text):
    rel_md = os.path.relpath(md_path, repo)
    out = []
    for code in code_of(text) + [text]:
        for p in PATH.findall(code):
            p = concrete(p)
            if p is None:
                continue
            if not (os.path.lexists(os.path.join(repo, p)) or os.path.lexists(os.path.join(os.path.dirname(md_path), p))):
                out.append(f"{rel_md}: names {p}, which does not exist")
    for code in code_of(text):
        for f in TOP_FILES:
            if re.search(r"(?<![\w/.-])" + re.escape(f) + r"(?![\w-])", code) and not os.path.exists(os.path.join(repo, f)):
                out.append(f"{rel_md}: names {f}, which does not exist")
    return out


def wrong_commands(repo, md_path, text, known_recipes, flags_of):
    rel_md = os.path.relpath(md_path, repo)
    out = []
    for code in code_of(text):
        for name in JUST.findall(code):
            if name not in known_recipes:
                out.append(f"{rel_md}: `just {name}`: no such recipe")
        for command, rest in NTSCOPE.findall(code):
            if command not in flags_of:
                if not command.startswith(("analyzer", "capture")):   # ntscope-analyzer, ntscope-capture
                    out.append(f"{rel_md}: `ntscope {command}`: no such command")
                continue
            for flag in FLAG.findall(rest):
                if flag not in flags_of[command] and flag != "--help":
                    out.append(f"{rel_md}: `ntscope {command} ... {flag}`: {command} has no {flag}")
    return out


def drift(repo, flags_of):
    known = recipes(repo)
    found = []
    for md in markdown_files(repo):
        with open(md) as f:
            text = f.read()
        found += missing_paths(repo, md, text) + wrong_commands(repo, md, text, known, flags_of)
    return list(dict.fromkeys(found))   # each mistake once


def test_every_path_recipe_command_and_flag_the_docs_name_exists():
    found = drift(REPO, command_reference.flags_by_command(cli.parser()))
    assert not found, "the docs name what is not there:\n" + "\n".join(found)


def test_planted_mistakes_are_found(tmp_path):
    os.makedirs(tmp_path / "sql" / "core")
    (tmp_path / "sql" / "core" / "stages.sql").write_text("-- requires: none\n")
    (tmp_path / "justfile").write_text("test *ARGS:\n    true\nanalyze RUN *FLAGS: build\n    true\n")
    (tmp_path / "README.md").write_text(
        "See `sql/core/stages.sql` and `sql/core/gone.sql`.\n"
        "```\njust analyze r1\njust analyse r1\nntscope analyze r1 --group-by queue --colour\n"
        "ntscope reprot r1\n```\n")
    found = drift(str(tmp_path), command_reference.flags_by_command(cli.parser()))
    assert found == ["README.md: names sql/core/gone.sql, which does not exist",
                     "README.md: `just analyse`: no such recipe",
                     "README.md: `ntscope analyze ... --colour`: analyze has no --colour",
                     "README.md: `ntscope reprot`: no such command"], found


def test_the_command_reference_is_what_the_parser_says():
    with open(os.path.join(REPO, command_reference.REFERENCE)) as f:
        current = f.read()
    assert current == command_reference.render(cli.parser()), \
        "ntscope/COMMANDS.md is stale: python -m ntscope.command_reference --write"


def test_the_command_reference_names_every_flag_with_its_default():
    text = command_reference.render(cli.parser())
    for command, flags in command_reference.flags_by_command(cli.parser()).items():
        assert f"## ntscope {command}" in text
        for flag in flags:
            assert re.search(r"\| `(-\w, )?" + flag + r"\b", text), f"{command} {flag} is not in the reference"
    assert "| `--memory-limit MEMORY_LIMIT` |" in text and "| `--resamples N` |" in text


@pytest.mark.parametrize("argv", [["--check"]])
def test_the_reference_check_fails_on_a_stale_file(tmp_path, argv):
    stale = tmp_path / "COMMANDS.md"
    stale.write_text("# old\n")
    r = subprocess.run([sys.executable, "-m", "ntscope.command_reference", *argv, "--file", str(stale)],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "stale" in r.stderr
