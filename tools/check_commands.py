#!/usr/bin/env python3
"""Every command a script of this repo runs on the machine must come from something
setup.sh installs: a package of tools/apt-packages.txt, an essential/required Debian
package (present on every Debian), the venv (constraints.txt), or a toolchain the fresh
machine has (Rust, Python, gcc, git). A command nothing installs (cpio, say) fails only on
a fresh machine; this check finds it on any.

It reads the host-side shell scripts and just recipes (commands in command position:
after a pipe, ;, &&, ||, $( , `, if/then/do/!...) and the Python tests' subprocess calls,
then maps each command to its Debian package with dpkg -S. Scripts that run inside the lab
VMs (capture/lab/guest.sh, init, capture/scenarios/) use the initramfs' tools instead and
are not checked here.

Usage: check_commands.py [--explain]   Exit 0 when every command is provided, 1 otherwise."""
import os
import re
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APT_LIST = os.path.join(REPO, "tools", "apt-packages.txt")

# Host-side scripts (repo-relative; directories are walked for *.sh / *.just).
SHELL_SOURCES = ["justfile", "setup.sh", ".ci/run", "analyzer", "kernel-patches", "sql", "reports",
                 "tools", "capture/capture.just", "capture/lab/lab.sh", "capture/lab/lab-test.sh",
                 "capture/lab/build-initramfs.sh",
                 "capture/lab/make-fixture.sh", "capture/tests", "capture/lab/overhead.sh",
                 "capture/lab/topology.sh"]
PYTHON_SOURCES = ["conftest.py", "ntscope", "sql", "reports", "tools", "capture/lab/check_run.py",
                  "capture/lab/overhead_report.py",
                  "capture/lab/check_diagnosis.py", "analyzer/tests/oracle", "kernel-patches"]
GUEST_SIDE = ("capture/lab/guest.sh", "capture/lab/init", "capture/scenarios/")

BUILTINS = set("""
. : [ [[ ]] alias bg bind break builtin caller case cd command compgen complete continue declare
dirs disown do done echo elif else enable esac eval exec exit export false fc fg fi for function
getopts hash help history if in jobs kill let local logout mapfile popd printf pushd pwd read
readarray readonly return select set shift shopt source suspend test then time times trap true
type typeset ulimit umask unalias unset until wait while { } !
""".split())
# Toolchains a fresh machine has before setup.sh runs (brief: Rust, Python, gcc; git clones).
TOOLCHAIN = {"cargo", "rustup", "rustc", "python3", "python", "git", "sudo"}
# Installed into the venv by setup.sh (constraints.txt) and reached through $NTSCOPE_PYTHON.
VENV = {"just", "pytest", "ntscope"}   # ntscope: the package's own command (setup.sh links it beside just)


def files_under(paths, suffixes):
    for rel in paths:
        p = os.path.join(REPO, rel)
        if os.path.isfile(p):
            yield rel
        elif os.path.isdir(p):
            for d, _, fs in os.walk(p):
                if "/fuzz/target" in d or "/fuzz/corpus" in d or "__pycache__" in d:
                    continue
                for f in fs:
                    if f.endswith(suffixes) or (suffixes == (".sh", ".just") and f == "justfile"):
                        yield os.path.relpath(os.path.join(d, f), REPO)


def skeleton(text):
    """The shell text with quoted literals, comments, heredoc bodies and arithmetic removed,
    keeping line breaks, and command substitutions ($(...), `...`) opened as new commands
    (also inside double quotes): what is left has commands in command position."""
    out, i, n = [], 0, len(text)
    stack = []   # open contexts: '"' double quote, ')' command substitution
    heredocs = []
    while i < n:
        c = text[i]
        top = stack[-1] if stack else None
        if c == "\n":
            out.append("\n")
            i += 1
            if heredocs and top != '"':   # skip heredoc bodies up to their end words
                while heredocs and i < n:
                    end = text.find("\n", i)
                    end = n if end < 0 else end
                    line = text[i:end]
                    out.append("\n")
                    i = end + 1
                    if line.strip() == heredocs[0]:
                        heredocs.pop(0)
            continue
        if top == '"':
            if c == "\\":
                i += 2
            elif c == '"':
                stack.pop()
                i += 1
            elif text.startswith("$((", i):
                depth, i = 0, i + 1
                while i < n:
                    depth += {"(": 1, ")": -1}.get(text[i], 0)
                    i += 1
                    if depth == 0:
                        break
            elif text.startswith("$(", i):
                stack.append(")")
                out.append(" ; ")
                i += 2
            elif c == "`":
                stack.append("`")
                out.append(" ; ")
                i += 1
            else:
                if c == "\n":
                    out.append("\n")
                i += 1
            continue
        if c == "'":
            j = text.find("'", i + 1)
            j = n if j < 0 else j
            out.append("''" + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == '"':
            stack.append('"')
            out.append('""')
            i += 1
        elif c == "\\":
            i += 2
        elif c == "#" and (i == 0 or text[i - 1] in " \t\n;"):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("$((", i) or (text.startswith("((", i) and (i == 0 or text[i - 1] in " \t\n;")):
            depth = 0
            i += text[i] == "$"
            while i < n:
                depth += {"(": 1, ")": -1}.get(text[i], 0)
                i += 1
                if depth == 0:
                    break
        elif text.startswith("$(", i):
            stack.append(")")
            out.append(" ; ")
            i += 2
        elif c == ")" and top == ")":
            stack.pop()
            out.append(" ; ")
            i += 1
        elif c == "`":
            if top == "`":
                stack.pop()
            else:
                stack.append("`")
            out.append(" ; ")
            i += 1
        elif text.startswith("<<", i) and not text.startswith("<<<", i):
            m = re.match(r"<<-?\s*['\"]?(\w+)['\"]?", text[i:])
            if m:
                heredocs.append(m.group(1))
                i += m.end()
            else:
                i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


SPLIT = re.compile(r"\|\||&&|\||;|\(|\)|\bthen\b|\bdo\b|\belse\b|\bif\b|\bwhile\b|\buntil\b|!|\{|\}")
CASE_PATTERN = re.compile(r"(^|;;|\bin\b)[ \t]*\(?[\w*.\-\"'$| \t]*\)", re.M)
ARRAY_LITERAL = re.compile(r"=\([^()]*\)")
FOR_HEAD = re.compile(r"\bfor\s+\w+\s+in\b[^;\n]*")
# ${NAME-default} and the like are one word (SPLIT cuts at braces)
PARAM_EXPANSION = re.compile(r"\$\{[^{}()\n]*\}")   # not one holding a $(command)


def shell_commands(text, functions=()):
    """(line number, command) for words in command position."""
    functions = set(functions) | set(re.findall(r"^\s*(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\)", text, re.M))
    sk = FOR_HEAD.sub("", CASE_PATTERN.sub(r"\1 ", ARRAY_LITERAL.sub("=", PARAM_EXPANSION.sub("$P", skeleton(text)))))
    for n, line in enumerate(sk.splitlines(), 1):
        for part in SPLIT.split(line):
            words = part.split()
            while words and (re.match(r"^[A-Za-z_]\w*(\[[^]]*\])?\+?=", words[0]) or words[0] in ("command", "exec", "time", "nice", "env", "sudo")):
                if words[0] == "command" and len(words) > 1 and words[1].startswith("-"):
                    words = []   # command -v X: a lookup, not a run
                    break
                words = words[1:]
            if not words:
                continue
            w = words[0]
            if (w in BUILTINS or w in functions or w.startswith(("$", "-", '"', "'", "/", ".", "~", "{{", "<", ">", "@", "%"))
                    or "=" in w or not re.match(r"^[A-Za-z][\w.+-]*$", w)):
                continue
            yield n, w


def just_recipe_bodies(text):
    """The shell lines of a justfile's recipes (indented lines)."""
    return "\n".join(l.strip().lstrip("@-") for l in text.splitlines() if l.startswith((" ", "\t")))


def python_commands(text):
    for m in re.finditer(r"subprocess\.\w+\(\s*\[\s*[\"']([\w.+-]+)[\"']", text):
        yield text[:m.start()].count("\n") + 1, m.group(1)
    for m in re.finditer(r"shutil\.which\(\s*[\"']([\w.+-]+)[\"']", text):
        yield text[:m.start()].count("\n") + 1, m.group(1)


def apt_list():
    with open(APT_LIST) as f:
        return {l.split("#")[0].split()[0] for l in f if l.split("#")[0].strip()}


def package_of(cmd):
    path = shutil.which(cmd)
    if not path:
        return None, None
    base = os.path.basename(path)
    # usrmerge: dpkg may know /bin/x for /usr/bin/x
    for p in (path, os.path.realpath(path), "/bin/" + base, "/sbin/" + base, "/usr/bin/" + base, "/usr/sbin/" + base):
        r = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True)
        if r.returncode == 0:
            return path, r.stdout.split(":")[0].split(",")[0].strip()
    return path, ""


def closure(pkgs):
    """The listed packages and everything they depend on (installed with them)."""
    r = subprocess.run(["apt-cache", "depends", "--recurse", "--installed", "--no-recommends", "--no-suggests",
                        "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *sorted(pkgs)],
                       capture_output=True, text=True)
    deps = set(pkgs)
    for line in r.stdout.splitlines():
        m = re.match(r"^\s*(?:\|?(?:Pre)?Depends:\s*)?<?([a-z0-9][a-z0-9+.-]*)(?::\w+)?>?$", line.strip())
        if m:
            deps.add(m.group(1))
    return deps


def always_there(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Essential} ${Priority}", pkg], capture_output=True, text=True)
    return r.returncode == 0 and (r.stdout.startswith("yes") or r.stdout.endswith("required"))


def collect():
    uses = {}
    texts = {}
    for rel in files_under(SHELL_SOURCES, (".sh", ".just")):
        if rel.startswith(GUEST_SIDE):
            continue
        text = open(os.path.join(REPO, rel)).read()
        if rel.endswith(".just") or os.path.basename(rel) == "justfile":
            text = just_recipe_bodies(text)
        texts[rel] = text
    # functions of sourced libraries (kernel-patches/lib.sh) count everywhere
    functions = {f for t in texts.values() for f in re.findall(r"^\s*(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\)", t, re.M)}
    for rel, text in texts.items():
        for n, cmd in shell_commands(text, functions):
            uses.setdefault(cmd, []).append(f"{rel}:{n}")
    for rel in files_under(PYTHON_SOURCES, (".py",)):
        for n, cmd in python_commands(open(os.path.join(REPO, rel)).read()):
            uses.setdefault(cmd, []).append(f"{rel}:{n}")
    return uses


def check(uses, installed_pkgs):
    problems, ok = [], []
    for cmd in sorted(uses):
        where = ", ".join(uses[cmd][:3]) + (" ..." if len(uses[cmd]) > 3 else "")
        if cmd in TOOLCHAIN or cmd in VENV:
            ok.append((cmd, "toolchain/venv"))
            continue
        path, pkg = package_of(cmd)
        if path is None:
            problems.append(f"{cmd}: not on this machine after setup ({where}); fix: add its Debian package to "
                            f"tools/apt-packages.txt, or stop calling it")
        elif not pkg:
            problems.append(f"{cmd}: {path} belongs to no Debian package ({where}); fix: install it from "
                            f"tools/apt-packages.txt or the venv, not by hand")
        elif pkg in installed_pkgs or always_there(pkg):
            ok.append((cmd, pkg))
        else:
            problems.append(f"{cmd}: from Debian package {pkg}, which setup.sh does not install ({where}); "
                            f"fix: add {pkg} to tools/apt-packages.txt")
    return problems, ok


def main(argv):
    uses = collect()
    problems, ok = check(uses, closure(apt_list()))
    if "--explain" in argv:
        for cmd, pkg in ok:
            print(f"ok   {cmd:20} {pkg}")
    for p in problems:
        print("FAIL " + p)
    print(f"check_commands: {len(ok)} commands provided, {len(problems)} not")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
