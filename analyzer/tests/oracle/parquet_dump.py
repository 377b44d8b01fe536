#!/usr/bin/env python3
"""Print a converter output directory as the oracle's canonical lines.

Usage: parquet_dump.py DIR

DIR is what `ntscope-analyzer convert TRACE.dat --out DIR` wrote:
  DIR/<system>/<event>.parquet                   the top buffer
  DIR/instances/<name>/<system>/<event>.parquet  buffer instance <name>
Every row becomes one line (format: README.md beside this file)
  <buffer>\t<cpu>\t<ts>\t<pid>\t<comm>\t<system>:<event>\t<field>=<value>...
so that it can be diffed against tracecmd_dump's output. Nothing is
normalised beyond the canonical format: a value the converter got wrong
prints differently. Exit 0 on success, 2 on bad input (message on stderr).
"""
import os
import re
import sys

import pyarrow as pa
import pyarrow.parquet as pq

ROW_COLUMNS = ("ts", "cpu", "pid", "comm")
# The converter renames an event field that collides with a row column.
RENAMED = {"field_" + name: name for name in ROW_COLUMNS}
ESCAPE_RE = re.compile(rb"[\x00-\x1f\x7f-\xff\\]")


def fail(msg):
    print(f"parquet_dump: {msg}", file=sys.stderr)
    sys.exit(2)


def escape(raw):
    """Bytes < 0x20, >= 0x7f and backslash as \\xNN; the rest literal."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogateescape")
    return ESCAPE_RE.sub(lambda m: b"\\x%02x" % m.group()[0], raw).decode("ascii")


def value_formatter(path, name, typ):
    """A function printing one value of a column of Arrow type `typ`."""
    if pa.types.is_dictionary(typ):
        return value_formatter(path, name, typ.value_type)
    if pa.types.is_integer(typ) or pa.types.is_boolean(typ):
        return lambda v: "<null>" if v is None else str(int(v))
    if (pa.types.is_string(typ) or pa.types.is_large_string(typ)
            or pa.types.is_binary(typ) or pa.types.is_large_binary(typ)
            or pa.types.is_fixed_size_binary(typ)):
        return lambda v: "<null>" if v is None else escape(v)
    if pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_fixed_size_list(typ):
        elem = typ.value_type
        if not (pa.types.is_integer(elem) or pa.types.is_boolean(elem)):
            fail(f"{path}: column '{name}' is a list of {elem}; the contract says list<int>")
        return lambda v: "<null>" if v is None else "[" + ",".join(
            "<null>" if x is None else str(int(x)) for x in v) + "]"
    fail(f"{path}: column '{name}' has type {typ}, which the converter contract does not allow "
         "(integers, strings/binary, list<int>)")


def dump_file(path, buffer, system, event, out):
    try:
        pf = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises several types for bad files
        fail(f"{path}: not a readable Parquet file: {e}")
    schema = pf.schema_arrow
    names = schema.names
    for col in ROW_COLUMNS:
        if col not in names:
            fail(f"{path}: no '{col}' column (columns: {', '.join(names)})")
    fields = [n for n in names if n not in ROW_COLUMNS]
    fmt = [value_formatter(path, n, schema.field(n).type) for n in fields]
    labels = [RENAMED.get(n, n) + "=" for n in fields]
    head = escape(buffer.encode())
    ev = f"{system}:{event}"
    for batch in pf.iter_batches(batch_size=65536):
        cols = {n: batch.column(n).to_pylist() for n in names}
        ts, cpu, pid, comm = (cols[c] for c in ROW_COLUMNS)
        values = [cols[n] for n in fields]
        lines = []
        for i in range(batch.num_rows):
            parts = [head, str(cpu[i]), str(ts[i]), str(pid[i]),
                     "<...>" if comm[i] is None else escape(comm[i]), ev]
            for label, f, col in zip(labels, fmt, values):
                parts.append(label + f(col[i]))
            lines.append("\t".join(parts))
        if lines:
            out.write("\n".join(lines))
            out.write("\n")


def event_files(root):
    """(system, event, path) of every <system>/<event>.parquet under root."""
    found = []
    for system in sorted(os.listdir(root)):
        sdir = os.path.join(root, system)
        if system == "instances" or not os.path.isdir(sdir):
            continue
        for fname in sorted(os.listdir(sdir)):
            if fname.endswith(".parquet"):
                found.append((system, fname[: -len(".parquet")], os.path.join(sdir, fname)))
    return found


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        print("usage: parquet_dump.py DIR   (DIR: the --out of `ntscope-analyzer convert`)", file=sys.stderr)
        return 2
    root = argv[1]
    if not os.path.isdir(root):
        fail(f"{root}: no such directory; pass the --out directory of `ntscope-analyzer convert`")
    buffers = [("", root)]
    inst_root = os.path.join(root, "instances")
    if os.path.isdir(inst_root):
        buffers += [(name, os.path.join(inst_root, name)) for name in sorted(os.listdir(inst_root))
                    if os.path.isdir(os.path.join(inst_root, name))]
    out = sys.stdout
    nfiles = 0
    for buffer, broot in buffers:
        for system, event, path in event_files(broot):
            dump_file(path, buffer, system, event, out)
            nfiles += 1
    # A trace with zero events legitimately yields metadata.json alone.
    if nfiles == 0 and not os.path.exists(os.path.join(root, "metadata.json")):
        fail(f"{root}: neither <system>/<event>.parquet files nor metadata.json; "
             "is this a `ntscope-analyzer convert` output?")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
