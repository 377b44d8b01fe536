"""`just --list` is where users find the recipes: each public recipe has a description, and
the description is its whole comment (just shows only the comment line right above a recipe,
so a second line would be cut off)."""
import json
import os
import re
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = re.compile(r"^(?P<name>[a-z][a-z0-9_-]*)\b[^:]*:(?!=)")


def comment_blocks():
    """recipe name -> the comment lines right above its header (attributes skipped)."""
    files = ["justfile"] + [l.split("'")[1] for l in open(os.path.join(REPO, "justfile")) if l.startswith("import? '")]
    blocks = {}
    for f in files:
        lines = open(os.path.join(REPO, f)).read().split("\n")
        for i, line in enumerate(lines):
            m = HEADER.match(line)
            if not m or line.startswith(("set ", "export ", "import")):
                continue
            j, block = i - 1, []
            while j >= 0 and lines[j].startswith("["):
                j -= 1
            while j >= 0 and lines[j].startswith("#"):
                block.insert(0, lines[j][1:].strip())
                j -= 1
            blocks[m.group("name")] = (f, block)
    return blocks


def test_every_public_recipe_has_its_whole_description_in_the_list():
    dump = json.loads(subprocess.run(["just", "--dump", "--dump-format", "json"], cwd=REPO,
                                     capture_output=True, text=True, check=True).stdout)
    blocks = comment_blocks()
    public = {n: r for n, r in dump["recipes"].items() if not r["private"] and n != "default"}
    assert len(public) > 20
    problems = []
    for name, recipe in sorted(public.items()):
        f, block = blocks[name]
        if not recipe["doc"]:
            problems.append(f"{f}: {name} has no description")
        elif len(block) != 1 or block[0] != recipe["doc"]:
            problems.append(f"{f}: {name}: `just --list` shows {recipe['doc']!r} of {block!r}")
    assert not problems, "\n".join(problems)


def test_the_user_recipes_do_not_echo_their_command_line():
    """`just analyze r1` prints the report, not `"$NTSCOPE_PYTHON" -m ntscope analyze r1` first
    (a shebang recipe, run as one script, echoes nothing)."""
    calls = []
    for f in {f for f, _ in comment_blocks().values()}:
        shebang = False
        for line in open(os.path.join(REPO, f)):
            if HEADER.match(line):
                shebang = None                      # the next body line tells
            elif line.startswith("    ") and shebang is None:
                shebang = line.strip().startswith("#!")
            if "-m ntscope " in line and not line.lstrip().startswith("#") and not shebang:
                calls.append((f, line.strip()))
    assert len(calls) >= 7
    assert [c for c in calls if not c[1].startswith("@")] == []


def test_the_lab_vms_justfile_parses_with_the_capture_recipes(tmp_path):
    """The VMs get capture/lab/vm.justfile beside a copy of capture.just (build-initramfs.sh);
    just refuses a whole justfile for one unknown dependency, so every recipe there must resolve."""
    (tmp_path / "capture").mkdir()
    (tmp_path / "capture" / "capture.just").write_text(open(os.path.join(REPO, "capture", "capture.just")).read())
    (tmp_path / "justfile").write_text(open(os.path.join(REPO, "capture", "lab", "vm.justfile")).read())
    out = subprocess.run(["just", "-f", str(tmp_path / "justfile"), "--dump", "--dump-format", "json"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    recipes = json.loads(out.stdout)["recipes"]
    assert "capture" in recipes and "lab" in recipes
