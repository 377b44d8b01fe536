"""A host's converted event files (<host>/parquet/) checked against what was written, before
any view reads them: derived data is never trusted blindly.

What was written is in parquet/metadata.json: the converter puts there the trace's sha256
(source.sha256), each event file with its rows (events[]) and the symbol files the views read
beside them (kallsyms.file, printk_formats.file: sql/core/symbols.sql); record() adds, right after
the conversion, each file's size and sha256 (events[].bytes, events[].sha256, kallsyms.bytes ...),
and under WRITTEN the stat (size, mtime, ctime, inode, device) of the trace and of each file as
they were then.

check() compares what is on disk with that: every listed file present, a regular file, its
size; no other event file where the views would read one; and the trace and each file either
with the stat recorded (the fast path: a stat per file) or, when the stat differs (a copy,
a touch, a rewrite) or on --verify, with its sha256 (a full read: about 0.5 GB/s here). A
file whose stat changed but whose bytes did not gets its new stat recorded (when the run can
be written), so the next check is fast again. ctime cannot be set by users: a file rewritten
and given back its old mtime is still seen.

metadata.json itself is sealed (SEAL: an HMAC under this user's key, ntscope.common.seal) when
record() writes it: one edited by hand or by another tool, or converted under another key,
is not trusted and the host is converted again (seal_problem).

A metadata.json that does not name ntscope's converter is not ntscope's: beside a trace.dat
the host is converted again (its parquet/ moved aside whole, runs.make_room); without a trace
(hand-made test runs from text) it is read as it is."""
import hashlib
import json
import os
import re
import stat

from . import inputs, seal
from .errors import NtscopeError

WRITTEN = "ntscope_written"   # the key record() adds to metadata.json
SEAL = "ntscope_seal"         # and the seal over all of it (write_metadata, seal_problem)
METADATA = "metadata.json"
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# the names the converter gives folders and files (analyzer/src/names.rs): a system may hold '.'
# and '-' (xhci-hcd), an event '-', an instance '.', '+' and '-'
SYSTEM_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
EVENT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")
INSTANCE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
FIX = "convert the run again (ntscope convert RUN)"


def stat_key(st):
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def sha256_of(path, what="file"):
    """(sha256 hex, stat) of a regular file (inputs.open_regular: never waits on a FIFO)."""
    fd, st = inputs.open_regular(path, what, FIX)
    h = hashlib.sha256()
    try:
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            h.update(b)
    finally:
        os.close(fd)
    return h.hexdigest(), st


def metadata_path(host_dir):
    return os.path.join(host_dir, "parquet", METADATA)


def load(host_dir):
    return inputs.read_json(metadata_path(host_dir), METADATA, inputs.METADATA_MAX, FIX)


def by_converter(meta):
    conv = meta.get("converter")
    return isinstance(conv, dict) and conv.get("name") == "ntscope"


def listed(meta):
    """[(relative path, its events[] entry)] of the event files metadata.json lists; a path
    that is not <system>/<event>.parquet or instances/<name>/<system>/<event>.parquet is
    refused (it would lead out of parquet/)."""
    out = []
    for ev in meta.get("events") or []:
        rel = ev.get("file") if isinstance(ev, dict) else None
        parts = rel.split("/") if isinstance(rel, str) else []
        ok = (len(parts) in (2, 4) and parts[-1].endswith(".parquet") and EVENT_NAME.match(parts[-1][:-8])
              and SYSTEM_NAME.match(parts[-2])
              and (len(parts) == 2 or (parts[0] == "instances" and INSTANCE_NAME.match(parts[1]))))
        if not ok:
            raise NtscopeError(f"metadata.json lists an event file {rel!r}, which is not <system>/<event>.parquet; fix: {FIX}")
        out.append((rel, ev))
    return out


# The files beside the event files that the views read too (sql/core/symbols.sql): metadata.json's
# key for each and the one name the converter gives it.
SYMBOL_FILES = {"kallsyms": "kallsyms.parquet", "printk_formats": "printk_formats.parquet"}


def symbol_files(meta):
    """[(relative path, its metadata.json entry)] of the symbol files metadata.json names (the
    entry: kallsyms or printk_formats, {..., file}); another file name is refused."""
    out = []
    for key, name in SYMBOL_FILES.items():
        entry = meta.get(key)
        if not isinstance(entry, dict) or "file" not in entry:
            continue
        if entry["file"] != name:
            raise NtscopeError(f"metadata.json names the {key} file {entry['file']!r}, not {name!r}; fix: {FIX}")
        out.append((name, entry))
    return out


def write_metadata(host_dir, meta):
    """metadata.json written atomically, sealed with this user's key (SEAL) when it can be had."""
    from .output import write_text
    secret = seal.key()
    if secret is not None:
        meta[SEAL] = seal.sign(meta, secret, SEAL)
    write_text(metadata_path(host_dir), json.dumps(meta, indent=2) + "\n")


def seal_problem(meta):
    """Why metadata.json with checksums (WRITTEN) cannot be trusted, or None: it must carry the
    seal record() put there, under this user's key. Without it, anything in it (a checksum
    deleted, a file's hash rewritten to match a swapped file, a skipped event type erased)
    could have been edited."""
    if not isinstance(meta.get(WRITTEN), dict):
        return None
    secret = seal.key()
    if secret is None:
        return None   # no key can be had (a cache that cannot be written): checksums only
    if seal.verifies(meta, secret, SEAL):
        return None
    return ("its metadata.json is not as this user's ntscope recorded it (" +
            ("no seal: edited, or converted by an older ntscope" if SEAL not in meta else
             "its seal does not match: edited, or converted by another user or with another NTSCOPE_CACHE") + ")")


def record(host_dir, trace_stat=None, recount=False):
    """After the converter (or a tool that rewrites event files, as make_scaled_run.py) wrote
    parquet/: each listed file's bytes and sha256 (and, when recount, its rows from its footer)
    into metadata.json, and under WRITTEN the stat of each and of the trace (trace_stat, taken
    before the conversion began: a trace changed meanwhile is seen by the next check)."""
    meta = load(host_dir)
    files = {}
    for rel, ev in listed(meta):
        path = os.path.join(host_dir, "parquet", rel)
        ev["sha256"], st = sha256_of(path, "event file")
        ev["bytes"] = st.st_size
        if recount:
            import pyarrow.parquet as pq
            ev["rows"] = pq.ParquetFile(path).metadata.num_rows
        files[rel] = stat_key(st)
    for rel, entry in symbol_files(meta):
        path = os.path.join(host_dir, "parquet", rel)
        if not os.path.lexists(path):   # not written (a scaled copy of a run has none): nothing to check
            entry.pop("sha256", None)
            entry.pop("bytes", None)
            continue
        entry["sha256"], st = sha256_of(path, "symbol file")
        entry["bytes"] = st.st_size
        files[rel] = stat_key(st)
    meta[WRITTEN] = {"trace": stat_key(trace_stat) if trace_stat is not None else None, "files": files}
    write_metadata(host_dir, meta)


def unlisted(host_dir, names):
    """Event files the views would read (parquet/<system>/<IDENT>.parquet) that metadata.json
    does not list."""
    top = os.path.join(host_dir, "parquet")
    out = []
    for system in sorted(os.listdir(top)):
        d = os.path.join(top, system)
        if system == "instances" or not SYSTEM_NAME.match(system) or not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith(".parquet") and EVENT_NAME.match(f[:-8]) and f"{system}/{f}" not in names:
                out.append(f"{system}/{f}")
    return out


def foreign_entries(host_dir):
    """What of <host>/parquet/ its metadata.json does not account for (relative paths, sorted): a
    file or folder there that is not metadata.json, a listed event file, a named symbol file or
    a folder on the way to one. Only those are ntscope's to replace."""
    top = os.path.join(host_dir, "parquet")
    meta = load(host_dir)
    ours = {METADATA} | {rel for rel, _ in listed(meta)} | {rel for rel, _ in symbol_files(meta)}
    folders = {os.path.dirname(rel) for rel in ours}
    folders |= {"/".join(f.split("/")[:i]) for f in list(folders) for i in range(1, f.count("/") + 1)}
    out = []
    for d, dirs, files in os.walk(top):
        here = os.path.relpath(d, top)
        rel = lambda name: name if here == "." else f"{here}/{name}"   # noqa: E731
        out += [rel(f) for f in files if rel(f) not in ours]
        out += [rel(x) + "/" for x in dirs if rel(x) not in folders]
        dirs[:] = [x for x in dirs if rel(x) in folders]
    return sorted(out)


# The latest timestamp the views take: they subtract and add clock offsets between hosts and
# windows on nanoseconds in BIGINT; 2^62 ns is 146 years (a TAI clock reads 1.8e18 in 2025).
MAX_TS = 1 << 62


def time_range_problem(host_dir):
    """What is wrong with the times of the host's events as metadata.json gives them (the
    converter's u64 nanoseconds after the file's own corrections: OFFSET, DATE, TSC2NSEC), or
    None: times beyond MAX_TS wrap or overflow in the views."""
    try:
        meta = load(host_dir)
    except NtscopeError:
        return None   # said by check()
    if not by_converter(meta):
        return None
    worst = max((c.get("last_ts") or 0 for c in meta.get("cpus") or [] if isinstance(c, dict)
                 and isinstance(c.get("last_ts"), int)), default=0)
    worst = max([worst] + [c.get("first_ts") for c in meta.get("cpus") or [] if isinstance(c, dict)
                           and isinstance(c.get("first_ts"), int)])
    if worst <= MAX_TS:
        return None
    corr = meta.get("timestamp_corrections") if isinstance(meta.get("timestamp_corrections"), dict) else {}
    named = ", ".join(f"{k.upper()} {corr[k]}" for k in ("offset", "date") if corr.get(k) not in (None, 0, "0"))
    return (f"the events of {host_dir} are stamped up to {worst} ns, beyond {MAX_TS} ns (146 years) where the "
            f"views' clock arithmetic overflows" + (f"; the trace's own time corrections say {named}" if named else ""))


def check(host_dir, full=False):
    """What on disk differs from what was written: a list of problems, each naming the file
    (empty when the files are as converted). full: hash every file whatever its stat."""
    try:
        meta = load(host_dir)
    except NtscopeError as e:
        return [str(e).split("; fix:")[0]]
    if not by_converter(meta):
        return []
    unsealed = seal_problem(meta)
    if unsealed:
        return [f"{metadata_path(host_dir)}: {unsealed}"]
    where = os.path.join(host_dir, "parquet")
    written = meta.get(WRITTEN)
    trace = os.path.join(host_dir, "trace.dat")
    has_trace = os.path.lexists(trace)
    if not isinstance(written, dict):
        if has_trace:
            return [f"{where} has no checksums (converted by an older ntscope, or by `ntscope-analyzer convert` alone)"]
        written = {"files": {}}
    try:
        files = listed(meta)
        symbols = [(rel, entry) for rel, entry in symbol_files(meta) if "sha256" in entry]
    except NtscopeError as e:
        return [str(e).split("; fix:")[0]]
    problems, changed = [], False
    if has_trace:
        src = meta.get("source") if isinstance(meta.get("source"), dict) else {}
        try:
            st = os.stat(trace)
        except OSError as e:
            return [f"{trace} {inputs.not_openable(trace, e)}"]
        if full or stat_key(st) != written.get("trace"):
            digest, st = sha256_of(trace, "trace")
            if digest != src.get("sha256"):
                return [f"{trace} is not the trace {where} was converted from (sha256 {digest[:16]}..., "
                        f"metadata.json says {str(src.get('sha256'))[:16]}...)"]
            written["trace"], changed = stat_key(st), True
    stamps = written.get("files") if isinstance(written.get("files"), dict) else {}
    # the symbol files recorded with a checksum, as the event files (one recorded by an older
    # ntscope has none: not checked)
    for rel, ev in files + symbols:
        path = os.path.join(where, rel)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            problems.append(f"{path} is missing (metadata.json lists it"
                            + (f" with {ev['rows']} rows)" if "rows" in ev else ")"))
            continue
        if not stat.S_ISREG(st.st_mode):
            problems.append(f"{path} is {inputs.kind_of(st.st_mode) if not stat.S_ISLNK(st.st_mode) else 'a symbolic link'}, "
                            "not the file the converter wrote")
            continue
        if "sha256" not in ev:   # no checksum (and no trace to convert again): its rows at least
            import pyarrow.parquet as pq
            try:
                rows = pq.ParquetFile(path).metadata.num_rows
            except Exception as e:  # noqa: BLE001 - pyarrow raises its own ArrowInvalid / OSError
                rows = f"unreadable ({str(e).splitlines()[0]})"
            if rows != ev.get("rows"):
                problems.append(f"{path} has {rows} rows, metadata.json says {ev.get('rows')}")
            continue
        if st.st_size != ev.get("bytes"):
            problems.append(f"{path} is {st.st_size} bytes, metadata.json says {ev.get('bytes')} (changed since "
                            "it was converted)")
            continue
        if full or stat_key(st) != stamps.get(rel):
            digest, st = sha256_of(path, "event file")
            if digest != ev["sha256"]:
                problems.append(f"{path} is not the file the converter wrote (sha256 {digest[:16]}..., "
                                f"metadata.json says {ev['sha256'][:16]}...)")
                continue
            stamps[rel], changed = stat_key(st), True
    extra = unlisted(host_dir, {rel for rel, _ in files})
    if extra:
        problems.append(f"{os.path.join(where, extra[0])} is an event file the converter did not write "
                        f"(metadata.json does not list it){f' (and {len(extra) - 1} more)' if len(extra) > 1 else ''}")
    if changed and not problems and isinstance(meta.get(WRITTEN), dict):
        written["files"] = stamps
        meta[WRITTEN] = written
        try:
            write_metadata(host_dir, meta)   # the stat of now: the next check is fast again
        except NtscopeError:
            pass   # a read-only run: checked in full each time
    return problems
