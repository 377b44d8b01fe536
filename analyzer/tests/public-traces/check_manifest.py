#!/usr/bin/env python3
"""Check the public traces folder against manifest.tsv beside this script.

Usage: check_manifest.py DIR

DIR holds <name>/trace.dat for names of the manifest (README.md says why the files
are not in the repository and where they come from). Every trace.dat under DIR must
be a listed one, byte for byte (its sha256); listed ones that are missing are named.
Exit 0 when what is there is right (also when DIR does not exist), 1 otherwise.
"""
import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def manifest():
    rows = {}
    with open(os.path.join(HERE, "manifest.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            cols = line.rstrip("\n").split("\t")
            rows[cols[0]] = {"sha256": cols[1], "bytes": int(cols[2]), "source": f"{cols[3]}@{cols[4][:12]}:{cols[5]}"}
    return rows


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main(argv):
    if len(argv) != 2:
        print("usage: check_manifest.py DIR", file=sys.stderr)
        return 2
    root, rows = argv[1], manifest()
    if not os.path.isdir(root):
        print(f"differential: note: no public traces at {root} ({len(rows)} listed in "
              f"analyzer/tests/public-traces/README.md); those files are not compared")
        return 0
    bad = 0
    found = set()
    for dirpath, _, files in os.walk(root):
        if "trace.dat" not in files:
            continue
        path = os.path.join(dirpath, "trace.dat")
        name = os.path.relpath(dirpath, root)
        row = rows.get(name)
        if row is None:
            print(f"differential: {path} is not in analyzer/tests/public-traces/manifest.tsv; "
                  f"fix: list it there with its source and licence, or remove it")
            bad += 1
        elif sha256(path) != row["sha256"]:
            print(f"differential: {path} is not the file the manifest names ({row['source']}, "
                  f"sha256 {row['sha256'][:16]}...); fix: copy it again from its source")
            bad += 1
        found.add(name)
    missing = sorted(set(rows) - found)
    if missing:
        print(f"differential: note: public traces missing under {root}: {', '.join(missing)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
