"""Fault injection for tests, outside the installed code: runs `ntscope ARGS` with
output.ReportSet patched so that the process kills itself with SIGKILL at one point of
writing the set whose folder has the given name.

    python kill_at.py written|swapped FOLDER_NAME ARGS...
      written: after the first file of the set is complete; swapped: right after the swap
      (the user's folders still in the set swapped out)."""
import os
import signal
import sys

from ntscope.common import output


def kill_after(method, name):
    original = getattr(output.ReportSet, method)

    def patched(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        if self.name == name:
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    setattr(output.ReportSet, method, patched)


if __name__ == "__main__":
    point, name, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    kill_after({"written": "written", "swapped": "swap_in"}[point], name)
    from ntscope.cli import main
    sys.argv = ["ntscope", *args]
    sys.exit(main())
