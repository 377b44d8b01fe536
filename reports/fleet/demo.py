"""`just fleet-demo`: the bundled lab fixtures as a small fleet: copied into the demo folder
(runs/fleet-demo/runs/; the fixtures stay as they are), ingested by `ntscope fleet ingest` (a
local Ray) into the demo's warehouse (runs/fleet-demo/warehouse/, or --warehouse, or
$NTSCOPE_FLEET_DIR), then `ntscope fleet report` printed. Arguments after it go to the report
(e.g. --by initiator --period day)."""
import argparse
import os
import shutil
import sys

from ntscope.common import command_line as cl, runs
from ntscope.common.errors import NtscopeError

from . import command

FIXTURES = ("lab-6.1-patched-link-flap", "lab-6.1-patched-multipath-base",
            "lab-6.1-patched-multipath-delay", "lab-6.1-patched-multipath-ana")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fleet(argv):
    """`ntscope fleet ARGV` (its own parser: this module sits below the command line)."""
    p = argparse.ArgumentParser(prog="ntscope fleet")
    command.add_arguments(p)
    try:
        return command.run(p.parse_args(argv))
    except NtscopeError as e:
        return cl.fail(str(e))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    where = []
    if "--warehouse" in argv:
        i = argv.index("--warehouse")
        where = argv[i:i + 2]
        del argv[i:i + 2]
    demo = os.path.join(runs.runs_dir(), "fleet-demo")
    if not where:
        where = ["--warehouse", os.environ.get("NTSCOPE_FLEET_DIR") or os.path.join(demo, "warehouse")]
    copies = []
    for name in FIXTURES:
        dst = os.path.join(demo, "runs", name)
        if not os.path.isdir(dst):
            tmp = dst + ".tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.copytree(os.path.join(REPO, "fixtures", name), tmp)
            os.replace(tmp, dst)
        copies.append(dst)
    status = fleet(["ingest", *copies, *where])
    if status:
        return status
    return fleet(["report", *where, *argv])


if __name__ == "__main__":
    sys.exit(main())
