"""Other processes: whether one still runs (a stale lock's, temporary folder's or spill
folder's owner, by the pid in its name)."""
import os


def pid_alive(pid):
    """Whether process PID exists (one of another user's counts: it may not be signalled)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
