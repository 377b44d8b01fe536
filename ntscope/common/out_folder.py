"""Where a command may write a folder, and what it may remove there (the rule of every
ntscope command that writes one: each analysis' command into `--out` or RUN/report, the compare input kept in RUN/.ntscope/compare-side, demo into runs/demo; the
converter's own is analyzer/src/out_dir.rs, with the same meaning).

A folder is written only when it is absent, empty, or an earlier set of the same kind: a
folder holding ntscope's manifest (MANIFEST, naming its kind and the files ntscope wrote
there). Files named as ntscope names them prove nothing without it (a user's report.txt): a
folder holding only such names is refused, with a fix that says so. It is never a run, a host folder of a run, its parquet/, a folder holding
runs, or a folder inside a host folder (a run's inputs). Inside the folder only the files
the manifest names are ntscope's: everything else (a notes/ folder, a .mine file) is the
user's and is kept as it is through every rewrite (output.ReportSet).

discard() empties a folder ntscope set aside (the set a rewrite replaced, or one a writer
that died left behind) without removing anything ntscope did not write: it removes the
files its manifest names and second names (hard links) of entries still in the output
folder, puts everything else back into the output folder, and keeps the folder when that
name is taken there."""
import json
import os
import stat
import sys

from .errors import NtscopeError

MANIFEST = ".ntscope-manifest.json"
MANIFEST_MAX_BYTES = 1 << 20
REPORT = "report"               # RUN/report or --out of a command that writes a report set
COMPARE_SIDE = "compare-side"   # RUN/.ntscope/compare-side (sql/compare_side_cache.py)
# The names ntscope writes in each kind's folders. Without a manifest such names prove nothing
# (a user's report.txt has one): a folder holding only them is refused, with these words. A report
# folder's names and writers are the declared analyses' (reports/registry.py registers them).
KNOWN_NAMES = {
    REPORT: set(),
    COMPARE_SIDE: {"side.json", "stages.parquet", "ios.parquet", "info.parquet"},
}
WHO_WRITES = {REPORT: "ntscope (by default RUN/report)",
              COMPARE_SIDE: "analyze or compare (RUN/.ntscope/compare-side)"}


def register_writer(kind, names, commands):
    """The file names the commands that write a KIND folder write (the analyses' registry)."""
    KNOWN_NAMES[kind] = set(names)
    said = ", ".join(commands[:-1]) + f" or {commands[-1]}" if len(commands) > 1 else "".join(commands)
    WHO_WRITES[kind] = f"{said} (by default RUN/report)"


def fix_for(kind):
    return (f"pass --out a folder that does not exist yet, an empty one, or one an earlier ntscope "
            f"{WHO_WRITES[kind]} wrote")


def refuse(path, what, fix):
    return NtscopeError(f"refusing to write into {path}: {what}; fix: {fix}")


# ------------------------------------------------------------------ runs and their inputs
def is_host_folder(d):
    """A host folder of a run: it holds trace.dat (even a broken link) or a converted parquet/."""
    return os.path.lexists(os.path.join(d, "trace.dat")) or os.path.isfile(os.path.join(d, "parquet", "metadata.json"))


def is_converted_folder(d):
    """Event files written by the converter: its metadata.json names it."""
    meta = os.path.join(d, "metadata.json")
    try:
        if not stat.S_ISREG(os.lstat(meta).st_mode) or os.path.getsize(meta) > 64 << 20:
            return False
        with open(meta, "rb") as f:
            doc = json.loads(f.read())
        return isinstance(doc, dict) and isinstance(doc.get("converter"), dict) and doc["converter"].get("name") == "ntscope"
    except (OSError, ValueError):
        return False


def run_hosts(d):
    """The host folders directly under d (names), or [] when d is not a run folder."""
    try:
        names = sorted(os.listdir(d))
    except OSError:
        return []
    return [n for n in names if os.path.isdir(os.path.join(d, n)) and is_host_folder(os.path.join(d, n))]


def inside_a_run(path, run_folders=True):
    """What run path is or lies inside (its folder, a host folder, converted files, its report
    or .ntscope): a phrase, else None. Unlike part_of_a_run, a folder that merely holds runs
    is not one. run_folders=False: only a host folder or converted files count (a folder
    holding host folders, e.g. /tmp beside a /tmp/x/trace.dat, does not). path need not exist;
    its existing part is resolved (links followed)."""
    p = os.path.realpath(path)
    while True:
        if is_converted_folder(p) or is_host_folder(p):
            return f"it lies inside the host folder {p if is_host_folder(p) else os.path.dirname(p)} of a run"
        if run_folders and run_hosts(p):
            return f"it lies inside the run folder {p}"
        up = os.path.dirname(p)
        if up == p:
            return None
        p = up


def part_of_a_run(path):
    """What path is, when it is (or lies inside) what ntscope reads: a phrase, else None.
    path need not exist; its existing part is resolved (links followed)."""
    real = os.path.realpath(path)
    p = real
    while True:
        if is_converted_folder(p):
            return (f"it is the converted event files {p} (metadata.json written by the converter)" if p == real
                    else f"it lies inside the converted event files {p}")
        if is_host_folder(p):
            return (f"it is the host folder {p} of a run (trace.dat, host.json, parquet/)" if p == real
                    else f"it lies inside the host folder {p} of a run (the run's inputs)")
        up = os.path.dirname(p)
        if up == p:
            break
        p = up
    if not os.path.isdir(real):
        return None
    hosts = run_hosts(real)
    if hosts:
        return f"it is the run folder {real} (hosts: {', '.join(hosts)})"
    try:
        runs = sorted(n for n in os.listdir(real) if run_hosts(os.path.join(real, n)))
    except OSError:
        runs = []
    if runs:
        shown = ", ".join(runs[:3]) + (", ..." if len(runs) > 3 else "")
        return f"it holds runs ({len(runs)}: {shown})"
    return None


def part_of_a_run_output(path):
    """What path lies inside, when that is an output folder ntscope writes in a run (a folder
    holding a manifest, RUN/report, RUN/.ntscope): a phrase, else None."""
    p = os.path.dirname(os.path.realpath(path))
    while True:
        if os.path.lexists(os.path.join(p, MANIFEST)):
            return f"it lies inside {p}, a folder ntscope writes ({MANIFEST})"
        name, up = os.path.basename(p), os.path.dirname(p)
        if name in ("report", ".ntscope") and run_hosts(up):
            return f"it lies inside {p}, where ntscope writes the run's {'reports' if name == 'report' else 'kept data'}"
        if up == p:
            return None
        p = up


# ------------------------------------------------------------------ the manifest
def read_manifest(folder, kind):
    """The names the folder's manifest lists as ntscope's, when the manifest is of this kind;
    None when there is no manifest; NtscopeError-free: a manifest that cannot be read or is
    of another kind gives ('other', its kind or None)."""
    path = os.path.join(folder, MANIFEST)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return ("other", None)
    if not stat.S_ISREG(st.st_mode) or st.st_size > MANIFEST_MAX_BYTES:
        return ("other", None)
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read())
    except (OSError, ValueError):
        return ("other", None)
    if not isinstance(doc, dict) or doc.get("kind") != kind:
        return ("other", doc.get("kind") if isinstance(doc, dict) else None)
    files = doc.get("files")
    if not (isinstance(files, list) and all(isinstance(n, str) and n and os.sep not in n and n not in (".", "..")
                                            for n in files)):
        return ("other", kind)
    return set(files)


def manifest_text(kind, names):
    return json.dumps({"kind": kind, "files": sorted(names),
                       "about": "files ntscope wrote here; everything else in this folder is kept as it is"},
                      indent=1) + "\n"


def ours(folder, kind):
    """The names in folder that ntscope wrote: its manifest's; None when the folder is not a set
    of this kind (no manifest, or another kind's). Only a manifest makes a file ntscope's."""
    listed = read_manifest(folder, kind)
    return listed if isinstance(listed, set) else None


# ------------------------------------------------------------------ may a command write there?
def check_target(out_dir, kind):
    """Raises NtscopeError (what, where, fix) unless out_dir may receive a set of this kind:
    absent (and not inside a run's inputs), empty, or an earlier set of this kind."""
    fix = fix_for(kind)
    run_part = part_of_a_run(out_dir)
    if run_part:
        raise refuse(out_dir, run_part + "; ntscope never writes over what it reads", fix)
    try:
        st = os.lstat(out_dir)
    except FileNotFoundError:
        return
    except OSError as e:
        raise refuse(out_dir, f"cannot inspect it ({e.strerror})", fix) from None
    if stat.S_ISLNK(st.st_mode):
        raise refuse(out_dir, f"it is a symbolic link (to {os.readlink(out_dir)})", fix + " (the link's target itself)")
    if not stat.S_ISDIR(st.st_mode):
        what = f"a regular file ({st.st_size} bytes)" if stat.S_ISREG(st.st_mode) else "not a directory"
        raise refuse(out_dir, f"it is {what}", fix)
    try:
        entries = sorted(os.listdir(out_dir))
    except OSError as e:
        raise refuse(out_dir, f"cannot list it ({e.strerror})", fix) from None
    if not entries:
        return
    listed = read_manifest(out_dir, kind)
    if isinstance(listed, tuple):
        other = listed[1]
        what = (f"its {MANIFEST} says it is a {other} folder, not a {kind} folder" if other and other != kind
                else f"its {MANIFEST} cannot be read")
        raise refuse(out_dir, what, fix)
    if listed is None:
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        known = KNOWN_NAMES.get(kind, set())
        why = (f"ntscope cannot tell they are its own (no {MANIFEST}: written by an ntscope from before manifests, or "
               "yours)" if all(e in known for e in entries) else f"ntscope did not write it (no {MANIFEST})")
        raise refuse(out_dir, f"it is not empty ({len(entries)} {'entry' if len(entries) == 1 else 'entries'}: {shown}) "
                              f"and {why}", fix + ("; or remove those files if an older ntscope wrote them"
                                                   if all(e in known for e in entries) else ""))


# ------------------------------------------------------------------ emptying a folder set aside
def same_entry(a, b):
    try:
        sa, sb = os.lstat(a), os.lstat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def discard(folder, out_dir, kind, note=True):
    """Removes folder (set aside by a rewrite of out_dir, or left by a writer that died)
    without removing anything ntscope did not write there: the files its manifest names (and
    the manifest) go, second names of entries still in out_dir go, everything else is moved
    back into out_dir; what cannot go back (its name is taken there) stays, and so does the
    folder, with a note on stderr. Returns the names kept."""
    try:
        entries = os.listdir(folder)
    except FileNotFoundError:
        return []
    listed = read_manifest(folder, kind)
    mine = listed if isinstance(listed, set) else set()
    kept = []
    for e in entries:
        p, q = os.path.join(folder, e), os.path.join(out_dir, e)
        try:
            mode = os.lstat(p).st_mode
            if same_entry(p, q) and not stat.S_ISDIR(mode):
                os.unlink(p)            # a second name of what out_dir holds (carried over by a hard link)
            elif stat.S_ISREG(mode) and (e in mine or e == MANIFEST):
                os.unlink(p)            # ntscope wrote it
            elif not os.path.lexists(q) and os.path.isdir(out_dir):
                os.rename(p, q)         # not ntscope's: back where it was
            else:
                kept.append(e)
        except OSError:
            kept.append(e)
    if not kept:
        try:
            os.rmdir(folder)
        except OSError:
            pass
    elif note:
        shown = ", ".join(sorted(kept)[:3]) + (", ..." if len(kept) > 3 else "")
        print(f"ntscope: note: kept {folder}: it holds {shown}, which ntscope did not write and whose name is "
              f"taken in {out_dir}; fix: move what you need out of it, then remove it", file=sys.stderr)
    return kept
