"""The lab checks' one way to say a result (check_multi_host.py, check_tenants.py): one line per
check, "ok   RUN: what" or "FAIL RUN: what", and how many failed."""
import os
import sys


class Checks:
    """Checks of one run (RUN_DIR, the script's one argument)."""

    def __init__(self, usage):
        if len(sys.argv) != 2:
            raise SystemExit(f"usage: {usage} RUN_DIR")
        self.run_dir = sys.argv[1]
        self.name = os.path.basename(os.path.normpath(self.run_dir))
        self.failed = 0

    def __call__(self, ok, what):
        print(("ok   " if ok else "FAIL ") + f"{self.name}: {what}")
        self.failed += not ok

    def exit_status(self, summary_pass, summary_fail):
        print(f"{self.name}: {summary_fail.format(failed=self.failed) if self.failed else summary_pass}")
        return 1 if self.failed else 0
