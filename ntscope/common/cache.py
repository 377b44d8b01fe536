"""ntscope's cache folder: $NTSCOPE_CACHE, else ~/.cache/ntscope (kernel builds, the lab's
images, each checkout's venv and cargo target, the Vega scripts the HTML pages inline)."""
import os


def cache_dir():
    return os.environ.get("NTSCOPE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "ntscope")
