#!/usr/bin/env python3
"""Runs `ntscope` from another source tree of the project: the benchmark's baseline
(bench_analyze.py BASELINE=<commit>) is analyze as that commit's code does it, in the same
Python and on the same converted runs, side by side with this checkout's.

In:  TREE (a source tree: its ntscope/, sql/ and reports/ folders, as `git archive` gives
     them), then ntscope's own arguments.
Out: what `python -m ntscope ARGS...` of that tree prints, and its exit status.

An editable install maps ntscope.sql and ntscope.reports to this checkout's folders whatever
sys.path says, so the tree's packages are found first by a finder of their own."""
import importlib.abc
import importlib.util
import os
import runpy
import sys

# package -> its folder in a source tree (pyproject.toml's package-dir)
PACKAGES = {"ntscope": "ntscope", "ntscope.sql": "sql", "ntscope.reports": "reports"}


class TreeFinder(importlib.abc.MetaPathFinder):
    """Finds the three top packages in TREE; their modules are then found under them."""

    def __init__(self, tree):
        self.tree = tree

    def find_spec(self, name, path=None, target=None):
        if name not in PACKAGES:
            return None
        folder = os.path.join(self.tree, PACKAGES[name])
        return importlib.util.spec_from_file_location(name, os.path.join(folder, "__init__.py"),
                                                      submodule_search_locations=[folder])


def main(argv):
    if len(argv) < 1 or not os.path.isfile(os.path.join(argv[0], "ntscope", "__init__.py")):
        print(f"checkout_run: {argv[:1]} is not a source tree of ntscope (no ntscope/__init__.py); "
              "usage: checkout_run.py TREE ARGS...", file=sys.stderr)
        return 2
    sys.meta_path.insert(0, TreeFinder(os.path.abspath(argv[0])))
    sys.argv = ["ntscope"] + argv[1:]
    runpy.run_module("ntscope", run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
