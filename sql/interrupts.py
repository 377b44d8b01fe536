"""Ctrl-C during a DuckDB query: every connection ntscope opens is registered (LIVE), and
InterruptQueries stops their queries when SIGINT arrives; query_interrupted tells such a
stop from a failed statement."""
import os
import signal
import threading
import weakref

# Every connection ntscope opens, so that Ctrl-C can stop the query running on it
# (InterruptQueries).
LIVE = weakref.WeakSet()


class InterruptQueries:
    """Within it, Ctrl-C (SIGINT) stops the DuckDB queries running on every connection ntscope
    opened. A query holds the main thread in DuckDB, where Python's own handler cannot run until
    it ends (minutes): the signal's wake-up byte reaches a thread here, which interrupts the
    queries (DuckDB raises InterruptException, then Python its KeyboardInterrupt: exit 130)."""

    def __enter__(self):
        self.old = None
        if threading.current_thread() is not threading.main_thread():
            return self
        self.r, self.w = os.pipe()
        os.set_blocking(self.w, False)
        self.old = signal.set_wakeup_fd(self.w, warn_on_full_buffer=False)
        self.thread = threading.Thread(target=self.watch, daemon=True)
        self.thread.start()
        return self

    def watch(self):
        while True:
            try:
                got = os.read(self.r, 64)
            except OSError:
                got = b""
            if not got:
                os.close(self.r)
                return
            if signal.SIGINT in got:
                for con in list(LIVE):
                    try:
                        con.interrupt()
                    except Exception:  # noqa: BLE001 - a closed connection: nothing runs on it
                        pass

    def __exit__(self, *exc):
        if self.old is not None:
            signal.set_wakeup_fd(self.old)
            os.close(self.w)   # the thread reads the end of the pipe and stops
            self.thread.join()
        return False


def query_interrupted(e):
    """Whether a DuckDB error is Ctrl-C stopping a query: InterruptException when InterruptQueries
    interrupted it, RuntimeError('Query interrupted') when DuckDB saw the signal first."""
    import duckdb
    return isinstance(e, duckdb.InterruptException) or (type(e) is RuntimeError and str(e).strip() == "Query interrupted")
