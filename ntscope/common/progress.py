"""Progress of long work on a terminal: which step runs, how far it is (DuckDB's own
query progress, polled), elapsed time. Silent when stderr is not a TTY."""
import sys
import threading
import time

from .text import printable


class Progress:
    def __init__(self, steps, enabled=None, stream=sys.stderr):
        self.steps = list(steps)
        self.stream = stream
        self.enabled = stream.isatty() if enabled is None else enabled
        self.i = 0
        self.label = ""
        self.t0 = time.monotonic()
        self._stop = threading.Event()
        self._thread = None
        self._con = None

    def step(self, label, con=None):
        """Starts the next step; con: a DuckDB connection whose query progress to show."""
        self.i += 1
        self.label = label
        self._con = con
        self._draw()

    def note(self, label):
        self.label = label
        self._draw()

    def _draw(self, pct=None):
        if not self.enabled:
            return
        total = max(len(self.steps), self.i)
        how_far = f" {pct:3.0f}%" if pct is not None and pct >= 0 else ""
        line = printable(f"[{self.i}/{total}] {self.label}{how_far}  {time.monotonic() - self.t0:6.1f} s", keep="")
        self.stream.write("\r\033[K" + line[:200])
        self.stream.flush()

    def _poll(self):
        while not self._stop.wait(0.25):
            con = self._con
            pct = None
            if con is not None:
                try:
                    pct = con.query_progress()
                except Exception:  # noqa: BLE001 - a closed or busy connection: just no percentage
                    pct = None
            self._draw(pct)

    def __enter__(self):
        if self.enabled:
            self._thread = threading.Thread(target=self._poll, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread:
            self._thread.join()
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()
        return False
