"""Writing results so that a crash, a kill -9, a full disk or a second analysis of the
same run never leaves a file that looks complete, nor a set mixed from two analyses, and
never costs a file ntscope did not write.

A report set (report.txt + report.json + ...) is written into a private directory beside
the output folder and swapped in with renames. The output folder must be one ntscope may
write (out_folder.check_target: absent, empty, or an earlier set of the same kind, named by
its manifest). Everything else already in it survives the swap: files of other sets
(compare.*, interference.*) and the user's files are carried over by hard links; the set
swapped out is then emptied by out_folder.discard, which removes only the files its manifest
names and moves everything else (the user's folders) back into the new set's folder. A crash
between the two leaves that folder aside, and the next writer empties it the same way. One writer per output folder
at a time (an flock on a lock file beside it): a second one waits, and says so."""
import errno
import fcntl
import os
import ctypes
import re
import stat
import sys

from . import out_folder
from .errors import NtscopeError
from .processes import pid_alive

STALE = re.compile(r"^\.(?P<name>.+)\.(tmp|old)-(?P<pid>\d+)$")


def fail_on_os_error(what, path, e):
    fix = {errno.ENOSPC: "free disk space", errno.EDQUOT: "free disk space (quota)",
           errno.EROFS: "the file system is read-only: copy the run elsewhere or pass --out DIR",
           errno.EACCES: "you cannot write there: copy the run elsewhere or pass --out DIR",
           errno.EPERM: "you cannot write there: copy the run elsewhere or pass --out DIR"}.get(
        e.errno, "check the path and its permissions")
    raise NtscopeError(f"{what} {path}: {e.strerror}; fix: {fix}") from None


def open_no_follow(path, flags, mode=0o644):
    """os.open that never goes through a symbolic link at PATH (O_NOFOLLOW): a link there, even
    a dangling one that would create a file elsewhere, is an NtscopeError with the fix."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as e:
        if e.errno == errno.ELOOP or (e.errno == errno.EEXIST and os.path.islink(path)):
            raise NtscopeError(f"{path} is a symbolic link (to {os.readlink(path)}); ntscope never writes through a "
                               "link; fix: remove the link (what it points to stays)") from None
        raise


def create_new(path, mode=0o644):
    """A new file at PATH opened for writing (O_EXCL: nothing there before, not even a link)."""
    return open_no_follow(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)


def write_text(path, text):
    """One file, atomically: a per-process temporary name (made new, never through a link),
    fsync, rename."""
    tmp = os.path.join(os.path.dirname(path) or ".", f".{os.path.basename(path)}.tmp-{os.getpid()}")
    try:
        if os.path.lexists(tmp):
            os.unlink(tmp)   # left by a dead writer with this pid
        with os.fdopen(create_new(tmp), "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        fail_on_os_error("cannot write", path, e)


def clean_stale(folder, name, kind):
    """Empties .<name>.tmp-<pid> / .<name>.old-<pid> left by writers of <name> that died
    (out_folder.discard: what ntscope did not write goes back into <name>, never away)."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for e in entries:
        m = STALE.match(e)
        if m and m.group("name") == name and not pid_alive(int(m.group("pid"))):
            p = os.path.join(folder, e)
            if os.path.isdir(p) and not os.path.islink(p):
                out_folder.discard(p, os.path.join(folder, name), kind)
            else:
                os.unlink(p)


def exchange(a, b):
    """Atomically swaps two paths (renameat2 RENAME_EXCHANGE); False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), b)


class OutputLock:
    """Exclusive lock for writing one output folder (<parent>/.<name>.lock)."""

    def __init__(self, out_dir, what="analysis"):
        self.out_dir, self.what = os.path.abspath(out_dir), what
        parent, name = os.path.split(self.out_dir)
        self.path = os.path.join(parent, f".{name}.lock")
        self.fd = None

    def __enter__(self):
        parent = os.path.dirname(self.out_dir)
        try:
            os.makedirs(parent, exist_ok=True)
            self.fd = open_no_follow(self.path, os.O_RDWR | os.O_CREAT)
        except OSError as e:
            fail_on_os_error("cannot create the lock file", self.path, e)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"ntscope: another {self.what} is writing {self.out_dir}; waiting for it to finish", file=sys.stderr)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)
        return False


def abort_all(pending):
    """Stops the background writers of a report set that failed (ReportSet.commit)."""
    for _, running in pending:
        running.abort()


class ReportSet:
    """Files written together, visible together: add() them, then commit() swaps them into
    out_dir in one rename. Use under an OutputLock. kind: what the folder is
    (out_folder.REPORT, out_folder.COMPARE_SIDE); a folder holding anything else is refused."""

    def __init__(self, out_dir, kind=out_folder.REPORT):
        self.out_dir = os.path.abspath(out_dir)
        parent, self.name = os.path.split(self.out_dir)
        self.parent = parent
        self.kind = kind
        self.files = {}
        self.dropped = set()
        self.tmp = os.path.join(self.parent, f".{self.name}.tmp-{os.getpid()}")
        self.started = []   # (path, running) of files start() set writing before commit
        self.tmp_made = False

    def drop(self, filename):
        """A file of this set that this time it does not make (analyze --no-interference:
        interference.*): the swap removes an earlier one instead of keeping it beside files
        it no longer belongs with."""
        self.dropped.add(filename)

    def add(self, filename, content):
        """content: the text, or a function that writes the file at the path it is given
        (for outputs streamed to disk). The function may return an object whose finish()
        completes the file later (work running in the background, e.g. the timeline's
        encoder) and abort() stops it: commit writes the other files meanwhile."""
        if os.sep in filename or filename.startswith("."):
            raise ValueError(f"report file name {filename!r}")
        self.files[filename] = content

    def start(self, filename, write):
        """A file of the set written in the background from now on: write(path) as add()'s
        functions, called now, into the set's private folder (made now), so that its work runs
        beside what the caller does before commit() (analyze: the timeline's encoder beside the
        report's rendering). commit() waits for it; a caller that will not commit calls abort()."""
        self.add(filename, None)   # None: written here, commit neither writes nor carries it over
        try:
            self.make_tmp()
        except OSError as e:
            fail_on_os_error("cannot write the report set into", self.out_dir, e)
        path = os.path.join(self.tmp, filename)
        try:
            running = write(path)
        except OSError as e:
            self.abort()
            fail_on_os_error("cannot write the report set into", self.out_dir, e)
        if running is not None:
            self.started.append((path, running))
        else:
            self.written(path)

    def make_tmp(self):
        """The set's private folder, made once (one left by a dead writer with this pid is
        emptied first: its files do not belong to this set), with a manifest naming the set's
        files, so that one left by this writer's death is emptied the same way."""
        if not self.tmp_made:
            out_folder.check_target(self.out_dir, self.kind)
            if os.path.lexists(self.tmp):
                kept = out_folder.discard(self.tmp, self.out_dir, self.kind)
                if kept:
                    raise NtscopeError(f"{self.tmp} holds {', '.join(sorted(kept)[:3])}, which ntscope did not write; "
                                       f"fix: move what you need out of it, then remove it")
            os.makedirs(self.tmp)
            self.tmp_made = True
            self.write_manifest(self.files)

    def write_manifest(self, names):
        with open(os.path.join(self.tmp, out_folder.MANIFEST), "w") as f:
            f.write(out_folder.manifest_text(self.kind, names))

    def abort(self):
        """Stops what start() set writing and empties the private folder (a set not committed)."""
        abort_all(self.started)
        self.started = []
        if self.tmp_made:
            out_folder.discard(self.tmp, self.out_dir, self.kind)

    def written(self, path):
        """A file of the set is complete: on disk before the set is swapped in."""
        with open(path, "rb") as f:
            os.fsync(f.fileno())

    def carry_over(self):
        """What of out_dir the new set keeps: files of other sets and everything of the user's
        that is not a folder, linked into the private folder now (the user's folders go back
        when the set swapped out is emptied: out_folder.discard). Returns the names of
        ntscope's files carried."""
        if not os.path.isdir(self.out_dir) or os.path.islink(self.out_dir):
            return set()
        before = out_folder.ours(self.out_dir, self.kind) or set()
        ours_kept = set()
        for e in os.listdir(self.out_dir):
            if e == out_folder.MANIFEST or e in self.files or (e in self.dropped and e in before):
                continue   # replaced by this set, or dropped from it
            src = os.path.join(self.out_dir, e)
            if stat.S_ISDIR(os.lstat(src).st_mode):
                continue
            os.link(src, os.path.join(self.tmp, e), follow_symlinks=False)
            if e in before:
                ours_kept.add(e)
        return ours_kept

    def swap_in(self):
        """The private folder becomes out_dir; the set swapped out is set aside as
        .<name>.old-<pid> (returned; None when out_dir was absent)."""
        old = os.path.join(self.parent, f".{self.name}.old-{os.getpid()}")
        if not os.path.lexists(self.out_dir):
            os.rename(self.tmp, self.out_dir)
            return None
        out_folder.check_target(self.out_dir, self.kind)   # it may have changed since the set began
        if exchange(self.tmp, self.out_dir):   # readers see the old set or the new one, never none
            os.rename(self.tmp, old)
        else:
            os.rename(self.out_dir, old)
            try:
                os.rename(self.tmp, self.out_dir)
            except BaseException:
                os.rename(old, self.out_dir)
                raise
        return old

    def commit(self):
        clean_stale(self.parent, self.name, self.kind)
        tmp = self.tmp
        # (path, running) of files still being written in the background (start()'s first)
        pending, self.started = self.started, []
        try:
            self.make_tmp()
            self.write_manifest(set(self.files) | self.carry_over())
            for filename, content in self.files.items():
                path = os.path.join(tmp, filename)
                if content is None:   # start() writes it
                    continue
                if callable(content):
                    running = content(path)
                    if running is not None:
                        pending.append((path, running))
                        continue
                else:
                    with open(path, "w") as f:
                        f.write(content)
                self.written(path)
            while pending:
                path, running = pending.pop(0)   # a finish() that fails has stopped on its own
                running.finish()
                self.written(path)
            old = self.swap_in()
        except OSError as e:
            abort_all(pending)
            out_folder.discard(tmp, self.out_dir, self.kind)
            fail_on_os_error("cannot write the report set into", self.out_dir, e)
        except BaseException:
            abort_all(pending)
            out_folder.discard(tmp, self.out_dir, self.kind)
            raise
        if old:
            out_folder.discard(old, self.out_dir, self.kind)
        return [os.path.join(self.out_dir, f) for f in self.files]
