#!/usr/bin/env python3
"""Checks that the shipped example reports are what ntscope prints today: re-analyzes
each example's fixture into a temporary run and compares the report text, and checks
that README.md quotes the stock example and the slow-device comparison verbatim, and that
ARCHITECTURE.md holds the "Performance" table the benches' results files give
(ntscope/common/bench_results.py table) and the "Test time" table of `just test`'s own records
(bench_results.py test-times).
Run by `just test-examples`. --write replaces the shipped examples with the fresh output
(review the diff)."""
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WRITE = "--write" in sys.argv
EXAMPLES = {
    "reports/examples/stock-randread-4k-qd8.report.txt": "fixtures/stock-randread-4k-qd8",
    "reports/examples/lab-6.1-patched-write-128k.report.txt": "fixtures/lab-6.1-patched-write-128k",
}

# compare examples: (base fixture, run fixture)
COMPARE_EXAMPLES = {
    "reports/compare/examples/slow-device.compare.txt":
        ("fixtures/lab-6.1-stock-base-randread", "fixtures/lab-6.1-stock-slow-device"),
    "reports/compare/examples/slow-net-delay-target.compare.txt":
        ("fixtures/lab-6.1-stock-base-randread", "fixtures/lab-6.1-stock-cmp-slow-net-delay-target"),
    "reports/compare/examples/few-queues.compare.txt":
        ("fixtures/lab-6.1-patched-few-queues-1job", "fixtures/lab-6.1-patched-few-queues"),
}


def body(text):
    # Header lines name the run directories, which differ per checkout.
    return [l.rstrip() for l in text.splitlines()
            if not l.startswith(("ntscope report:", "== interference:", "  base: ", "  run:  "))]


def fresh_copy(tmp, fixture):
    run = os.path.join(tmp, os.path.basename(fixture))
    shutil.copytree(os.path.join(REPO, fixture), run, ignore=shutil.ignore_patterns("parquet", "report"))
    return run


def main():
    failed = 0
    for example, fixture in EXAMPLES.items():
        with tempfile.TemporaryDirectory() as tmp:
            run = fresh_copy(tmp, fixture)
            subprocess.run([sys.executable, "-m", "ntscope", "analyze", run, "--quiet", "--no-progress"],
                           cwd=REPO, check=True, stdout=subprocess.DEVNULL)
            fresh = open(os.path.join(run, "report", "report.txt")).read()
        shipped = open(os.path.join(REPO, example)).read()
        if WRITE and body(fresh) != body(shipped):
            open(os.path.join(REPO, example), "w").write(fresh.replace(tmp + "/", "fixtures/"))
            print(f"WROTE {example}")
            continue
        if body(fresh) != body(shipped):
            failed += 1
            print(f"FAIL {example}: differs from a fresh `just analyze {fixture}`; "
                  f"fix: regenerate it (just analyze, copy report.txt) if the change is intended")
        else:
            print(f"OK   {example}")
    readme = open(os.path.join(REPO, "README.md")).read()
    stock = open(os.path.join(REPO, "reports/examples/stock-randread-4k-qd8.report.txt")).read()
    group = [l for l in stock.splitlines() if l.startswith("group:")][0]
    table = stock[stock.index(group):stock.index("  end_to_end histogram")].rstrip()
    if table in readme:
        print("OK   README.md quotes reports/examples/stock-randread-4k-qd8.report.txt")
    else:
        failed += 1
        print("FAIL README.md's example report differs from reports/examples/stock-randread-4k-qd8.report.txt; "
              "fix: paste the group table of the example into README.md")
    for cmp_example, (base_fx, run_fx) in COMPARE_EXAMPLES.items():
        with tempfile.TemporaryDirectory() as tmp:
            base = fresh_copy(tmp, base_fx)
            run = fresh_copy(tmp, run_fx)
            subprocess.run([sys.executable, "-m", "ntscope", "compare", base, run, "--quiet", "--no-progress"],
                           cwd=REPO, check=True, stdout=subprocess.DEVNULL)
            fresh = open(os.path.join(run, "report", "compare.txt")).read()
        if WRITE and body(fresh) != body(open(os.path.join(REPO, cmp_example)).read()):
            open(os.path.join(REPO, cmp_example), "w").write(fresh.replace(tmp + "/", "fixtures/"))
            print(f"WROTE {cmp_example}")
        elif body(fresh) == body(open(os.path.join(REPO, cmp_example)).read()):
            print(f"OK   {cmp_example}")
        else:
            failed += 1
            print(f"FAIL {cmp_example}: differs from a fresh `just compare {base_fx} {run_fx}`; fix: regenerate it")
    cmp_example = "reports/compare/examples/slow-device.compare.txt"
    cmp = open(os.path.join(REPO, cmp_example)).read()
    cmp_block = cmp[:cmp.index("  (* significant")]
    if cmp_block in readme:
        print("OK   README.md quotes reports/compare/examples/slow-device.compare.txt")
    else:
        failed += 1
        print("FAIL README.md's example comparison differs from reports/compare/examples/slow-device.compare.txt")
    from ntscope.common import bench_results
    architecture = open(os.path.join(REPO, "ARCHITECTURE.md")).read()
    for name, table, sources, verb in (
            ("Performance", bench_results.performance_table(REPO),
             "analyzer/bench/results.jsonl and sql/bench/results.jsonl", "table"),
            ("Test time", bench_results.test_time_table(REPO), bench_results.TEST_TIMES, "test-times")):
        if table in architecture:
            print(f"OK   ARCHITECTURE.md's {name} table holds the latest figures of {sources}")
        else:
            failed += 1
            print(f"FAIL ARCHITECTURE.md's {name} table differs from {sources}; "
                  f"fix: paste the output of `python -m ntscope.common.bench_results {verb}` into ARCHITECTURE.md")
    print(f"{len(EXAMPLES) + len(COMPARE_EXAMPLES) + 4 - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
