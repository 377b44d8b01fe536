"""Values users type into flags, spec files and objectives, parsed one way for every analysis
(the report's filters, --slo's selectors): I/O sizes with their units, and how a refused value
is quoted in a message."""
import re

from .errors import NtscopeError

UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20}
MAX_SIZE = 1 << 40   # 1 TiB: beyond any I/O (sizes times counts stay inside BIGINT bytes)


def shown(text, limit=40):
    """A value as a message quotes it: cut after LIMIT characters (a 5,000-digit value stays readable)."""
    t = str(text)
    return t if len(t) <= limit else f"{t[:limit]}... ({len(t)} characters)"


class SpecError(NtscopeError):
    """A filter, grouping or objective that cannot be applied (exit 2)."""


def parse_size(text):
    """'4096', '4k', '128KiB' -> bytes; SpecError on anything else or beyond MAX_SIZE."""
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", str(text))
    if not m or m.group(2).lower() not in UNITS:
        raise SpecError(f"size '{shown(text)}' is not a size; fix: use bytes or k/m suffixes, e.g. 4096, 4k, 128KiB")
    if len(m.group(1).lstrip("0")) > 15:   # beyond MAX_SIZE whatever the unit (and int() refuses 4,300 digits)
        raise SpecError(f"size '{shown(text)}' has {len(m.group(1))} digits, more than any I/O (at most {MAX_SIZE:,} "
                        "bytes); fix: e.g. 4k, 128k, 1m")
    size = int(m.group(1)) * UNITS[m.group(2).lower()]
    if size > MAX_SIZE:
        raise SpecError(f"size '{text}' is {size:,} bytes, more than any I/O (at most {MAX_SIZE:,}); fix: e.g. 4k, 128k, 1m")
    return size
