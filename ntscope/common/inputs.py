"""Every file ntscope reads whole (host.json, truth.json, metadata.json, a --spec file, the
kept compare side's side.json) is checked the way trace.dat is: a regular file (links
followed; a FIFO, a device, a folder, a dangling link or a link loop is refused before
anything waits on it), at most a size cap, UTF-8 text, and for JSON an object whose numbers
are finite (NaN, Infinity and 1e999 are refused). Each refusal says what, where and the fix."""
import errno
import json
import math
import os
import stat

from .errors import NtscopeError

KiB, MiB = 1 << 10, 1 << 20
# The caps: far above what ntscope writes or capture records (host.json and truth.json are a few
# kB, metadata.json grows with the trace's event types, side.json with the interference plots).
HOST_JSON_MAX = 1 * MiB
TRUTH_JSON_MAX = 4 * MiB
SPEC_MAX = 1 * MiB
METADATA_MAX = 64 * MiB
SIDE_JSON_MAX = 512 * MiB


def kind_of(mode):
    return ("a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "not a regular file")


def not_openable(path, e):
    """Why path could not be opened, in words (a link's target named)."""
    if e.errno == errno.ELOOP:
        return "is a symbolic link loop"
    if e.errno == errno.ENOENT and os.path.islink(path):
        return f"is a symbolic link to {os.readlink(path)!r}, which does not exist"
    return f"cannot be opened ({e.strerror})"


def check_regular(path, what, fix):
    """Raises unless path is a regular file (links followed): for files others open (the
    converter, DuckDB), so that none of them waits on a FIFO or reads a device."""
    named = f"{what} {path}" if what else path
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise NtscopeError(f"{named} {not_openable(path, e)}; fix: {fix}") from None
    if not stat.S_ISREG(mode):
        raise NtscopeError(f"{named} is {kind_of(mode)}, not a regular file; fix: {fix}")


def open_regular(path, what, fix):
    """(fd, stat) of path opened for reading, when it is a regular file. Opened without
    waiting (O_NONBLOCK: a FIFO does not block) and checked on the open file, so a file
    swapped for a FIFO meanwhile is refused too."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        try:
            mode = os.stat(path).st_mode   # a socket cannot be opened at all (ENXIO): say what it is
        except OSError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):
            raise NtscopeError(f"{what} {path} is {kind_of(mode)}, not a regular file; fix: {fix}") from None
        raise NtscopeError(f"{what} {path} {not_openable(path, e)}; fix: {fix}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NtscopeError(f"{what} {path} is {kind_of(st.st_mode)}, not a regular file; fix: {fix}")
    return fd, st


def read_bytes(path, what, limit, fix):
    """The bytes of a regular file of at most limit bytes."""
    fd, st = open_regular(path, what, fix)
    try:
        if st.st_size > limit:
            raise NtscopeError(f"{what} {path} is {st.st_size:,} bytes, more than the {limit:,} a {what} can be; "
                               f"fix: {fix}")
        chunks, size = [], 0
        while size <= limit:
            b = os.read(fd, min(1 << 20, limit + 1 - size))
            if not b:
                break
            chunks.append(b)
            size += len(b)
    finally:
        os.close(fd)
    if size > limit:   # it grew while read
        raise NtscopeError(f"{what} {path} is more than the {limit:,} bytes a {what} can be; fix: {fix}")
    return b"".join(chunks)


def read_text(path, what, limit, fix):
    data = read_bytes(path, what, limit, fix)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise NtscopeError(f"{what} {path} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); "
                           f"fix: {fix}") from None


def finite_float(text):
    v = float(text)
    if not math.isfinite(v):
        raise ValueError(f"the number {text} is out of range")
    return v


def no_constant(name):
    raise ValueError(f"{name} is not a number JSON allows")


def parse_json(text):
    """JSON whose numbers are all finite (ValueError otherwise)."""
    return json.loads(text, parse_float=finite_float, parse_constant=no_constant)


def read_json(path, what, limit, fix, top=dict):
    """A JSON document of type top (an object by default) from a regular file."""
    text = read_text(path, what, limit, fix)
    try:
        doc = parse_json(text)
    except ValueError as e:
        raise NtscopeError(f"{what} {path} is not valid JSON ({e}); fix: {fix}") from None
    except RecursionError:
        raise NtscopeError(f"{what} {path} nests arrays or objects too deeply to read (no file ntscope reads "
                           f"nests more than a few levels); fix: {fix}") from None
    if not isinstance(doc, top):
        raise NtscopeError(f"{what} {path} holds {json_kind(doc)}, not {json_kind(top())}; fix: {fix}")
    return doc


def json_kind(v):
    """A JSON value's kind, in words."""
    if isinstance(v, bool):
        return "true/false"
    return {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number",
            type(None): "null"}.get(type(v), type(v).__name__)
