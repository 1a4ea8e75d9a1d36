"""One check's process, as a pipeline: spawn, follow and hash the log, wait, stop the tree,
seal the log."""

from __future__ import annotations

import fcntl
import os
import sys
import time

from ckdn import _lite
from ckdn._lite import Record, record
from ckdn.process._group import MARKER, Child, Stops, Tree, live_members

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import signal
    from collections.abc import Callable, Mapping, Sequence
    from types import ModuleType
    from typing import Protocol

    from ckdn._lite import Process
    from ckdn.process._progress import Progress
    from ckdn.process.stop import StopRequest

    class _Hash(Protocol):
        def update(self, data: memoryview, /) -> None: ...

        def hexdigest(self) -> str: ...
else:  # the C module that `signal` wraps in enums: no enum, functools, collections
    import _signal as signal

# Why it is built this way:
#
# * The child's stdout and stderr *are* ``full.log`` (never a pipe), so a
#   grandchild that keeps the log open cannot hang ckdn, and the bytes on disk are
#   exactly the bytes the tool wrote.
# * The child leads its own session, so one ``killpg`` reaches everything that
#   stays in its group; what leaves it stays in the check's cgroup where ckdn may
#   make one, and is adopted by ckdn elsewhere (``_group``, ``_strays``). The tree
#   is stopped on timeout, on Ctrl-C / SIGTERM / SIGHUP, and after a clean exit
#   when something is still running; the log is sealed only once nothing has it
#   open for writing (:class:`LogHash`, ``_leftovers``), so its hash stays true.
# * Waiting sleeps in ``poll`` on a pidfd: the exit wakes it at once, so a fast
#   check pays no polling floor (``_group``).
# * The log is hashed while it grows, so sealing a 2 GB log costs only its tail,
#   in constant memory (:class:`LogHash`).
# * A signal to ckdn is a request to stop the tree, never an abort (``_group``).
#
# How the process ended is data: an :class:`Exit` with the real code (or a synthetic
# 124 / 130 / 127 / 126), never prose; :mod:`ckdn.reconcile` reads it.

#: The shell's codes for a command that timed out, was interrupted, was not
#: found, or could not be executed: ckdn reports them as the run's ``rc``.
RC_TIMEOUT = 124
RC_INTERRUPTED = 130
RC_NOT_FOUND = 127
RC_NOT_EXECUTABLE = 126

_IDLE_FIRST = 0.005  # seconds between looks at a quiet log, doubling up to _IDLE_MAX
_IDLE_MAX = 0.05


# The log's hash
#
# Sealing a 2 GB log then costs only its tail, in constant memory. A small log is
# hashed once at the end with the builtin SHA-256: loading OpenSSL costs more than
# hashing it (bench/bench_runner.py). The hash is only true if nothing writes into the
# log afterwards: :meth:`LogHash.open_for_writing` asks the kernel, in one ``fcntl``,
# whether anything still has it open for writing (``_leftovers`` deals with what does).

_CHUNK = 1 << 20  # read size while following the log
_SMALL_CHUNK = 64 << 10  # read size for a log hashed once at the end
_STREAM_FROM = 256 << 10  # a log smaller than this is hashed once, at the end
_MIN_READ = 64 << 10  # while the child runs, wait for this much before reading


def _sha256(*, small: bool) -> _Hash:
    """OpenSSL's SHA-256 is ~10x faster, but loading it costs more than hashing a small log."""
    if small:
        builtin = builtin_sha256()
        if builtin is not None:
            return builtin()
    import hashlib  # here: loading OpenSSL is the cost avoided above

    return hashlib.sha256()


#: CPython's builtin SHA-256 constructor once looked up (None where it is not built in).
_builtin_sha256: list[Callable[[], _Hash] | None] = []


def builtin_sha256() -> Callable[[], _Hash] | None:
    """CPython's builtin SHA-256 (a shared library), loaded once: :func:`_supervise` asks
    while the child runs, so a small log's hash does not wait for the load after it."""
    if not _builtin_sha256:
        found: Callable[[], _Hash] | None = None
        # asking for the other name first would cost a failed import (a scan of sys.path)
        names = ("_sha2", "_sha256") if sys.version_info >= (3, 12) else ("_sha256", "_sha2")
        for name in names:
            try:
                found = __import__(name).sha256
                break
            except ImportError:
                continue
        _builtin_sha256.append(found)
    return _builtin_sha256[0]


class LogHash:
    """SHA-256 and size of the log, computed while the child writes it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = os.fspath(path)
        self._file = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by close()
        self._buffer: memoryview | None = None  # made on the first read, sized for the log
        self._hash: _Hash | None = None
        self._offset = 0

    def size(self) -> int:
        return os.fstat(self._file.fileno()).st_size

    def follow(self) -> bool:
        """Hash one chunk if enough is waiting; true when it did, so the caller comes back soon."""
        size = self.size()
        if size < self._offset:
            self._restart()
        if self._hash is None:
            if size < _STREAM_FROM:
                return False
            self._hash = _sha256(small=False)
        return size - self._offset >= _MIN_READ and self._read() > 0

    def seal(self) -> tuple[str, int]:
        """Hash the rest; the log is complete now. Returns (sha256 hex, byte count)."""
        size = self.size()
        if size < self._offset:
            self._restart()
        if self._hash is None:
            self._hash = _sha256(small=size < _STREAM_FROM)
        while self._read():
            pass
        return self._hash.hexdigest(), self._offset

    def close(self) -> None:
        self._file.close()

    def fileno(self) -> int:
        return self._file.fileno()

    def open_for_writing(self) -> bool | None:
        """Whether any process has the log open for writing; None where the kernel cannot say.

        The kernel refuses a read lease while anyone has the file open for writing, and
        ckdn's own descriptor is read-only. The lease is dropped at once; a writer opening
        the file meanwhile would break it with SIGURG, ignored unless handled (the default,
        SIGIO, would kill ckdn). Leases need a local file system that the caller owns.
        """
        fd = self._file.fileno()
        try:
            fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGURG)
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
        except BlockingIOError:
            return True
        except (OSError, AttributeError):  # no leases here (NFS, a log someone else owns, macOS)
            return None
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        return False

    def seal_copy(self) -> None:
        """Put a copy of the log in its place and hash that: a writer ckdn could not stop
        writes on into the original, which has no name any more."""
        folder, name = os.path.split(self._path)
        temporary = os.path.join(folder, f".{name}.sealing-{os.getpid()}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW
        out = os.open(temporary, flags, 0o666)
        try:
            source, offset, end = self._file.fileno(), 0, self.size()
            while offset < end and (chunk := os.pread(source, min(_CHUNK, end - offset), offset)):
                offset += len(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view):]
        except BaseException:
            os.close(out)
            os.unlink(temporary)
            raise
        os.close(out)
        os.rename(temporary, self._path)
        self._file.close()
        self._file = open(self._path, "rb", buffering=0)  # noqa: SIM115 - closed by close()
        self._hash, self._offset = None, 0

    def _read(self) -> int:
        assert self._hash is not None
        if self._buffer is None:
            # Zeroing a 1 MiB buffer costs a trivial run about as much as hashing its log.
            small = self.size() < _STREAM_FROM
            self._buffer = memoryview(bytearray(_SMALL_CHUNK if small else _CHUNK))
        count = self._file.readinto(self._buffer) or 0
        if count:
            self._hash.update(self._buffer[:count])
            self._offset += count
        return count

    def _restart(self) -> None:
        """The child truncated its log (``echo x >/dev/stderr`` reopens it): start over."""
        self._file.seek(0)
        self._offset = 0
        if self._hash is not None:
            self._hash = _sha256(small=False)


@record
class Exit(Record):
    """How the process ended, as the runner saw it.

    ``rc`` is the real code, negative for a signal; synthetic 124 / 130 / 127 /
    126 for timeout, interrupt, not found and not executable. ``started`` is
    false when the command never ran.
    """

    __slots__ = ("duration", "interrupted", "notes", "rc", "started", "timed_out", "timeout")
    rc: int
    started: bool
    timed_out: bool
    interrupted: bool
    duration: float
    timeout: float | None
    notes: tuple[str, ...]

    def __init__(  # noqa: PLR0917 - positional, as when it was a dataclass
            self, rc: int, started: bool = True, timed_out: bool = False,
            interrupted: bool = False, duration: float = 0.0, timeout: float | None = None,
            notes: tuple[str, ...] = ()) -> None:
        self._assign(rc, started, timed_out, interrupted, duration, timeout, notes)


@record
class FinishedRun(Record):
    """A finished run: how it ended, and the identity of the log it left."""

    __slots__ = ("exit", "finished_at", "log_bytes", "log_sha256", "started_at")
    exit: Exit
    log_sha256: str
    log_bytes: int
    started_at: float
    finished_at: float

    def __init__(self, exit: Exit, log_sha256: str, log_bytes: int, started_at: float,
                 finished_at: float) -> None:
        self._assign(exit, log_sha256, log_bytes, started_at, finished_at)


def run_process(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    log_path: str | os.PathLike[str],
    timeout: float | None = None,
    grace: float = 3.0,
    label: str | None = None,
    stop: StopRequest | None = None,
    on_spawn: Callable[[dict[str, object]], None] | None = None,
    private: bool = True,
) -> FinishedRun:
    """Run ``argv`` (no shell) with stdout+stderr in ``log_path``; always a :class:`FinishedRun`.

    Whatever the child does (missing, crashing, hanging, ignoring SIGTERM, leaving
    processes behind in any session) and however ckdn is told to stop, the tree is
    stopped and the log sealed before this returns, so the caller can still write its
    evidence. ``stop`` lets a host that runs this off its main thread stop the run as
    Ctrl-C would (:class:`~ckdn.process.StopRequest`). ``on_spawn`` gets, once the child
    runs, what recognises its tree should ckdn die (JSON-ready; give it to
    :func:`stop_left_running` then). ``private``: the log is created owner-only (0600).
    Raises ``OSError`` only when ``log_path`` cannot be created.
    """
    args = list(argv)
    if not args:
        raise ValueError("argv is empty")
    if timeout is not None and timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout!r}")
    if grace < 0:
        raise ValueError(f"grace must not be negative, got {grace!r}")
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC,
                     0o600 if private else 0o666)
    try:
        log = LogHash(log_path)
    except BaseException:
        os.close(log_fd)
        raise
    try:
        with Stops(stop) as stops:  # installed before the spawn: no signal can orphan the child
            started_at, start = time.time(), time.monotonic()
            spawned = _spawn(args, cwd, env, log_fd)
            if isinstance(spawned, _Ended):
                ended = spawned
            else:
                tree = Tree(on_spawn, env.get(MARKER))
                try:
                    ended = _supervise(spawned, log, stops, tree, start=start, timeout=timeout,
                                       grace=grace, label=label or args[0])
                finally:
                    tree.close()
            finished_at = time.time()
            sha256, size, notes = _seal(log, grace)
            stops.host_stopped()
            ended = ended.noted(notes).called_off(stops.signum, stops.words())
    finally:
        log.close()
    return FinishedRun(ended.exit(timeout), sha256, size, started_at, finished_at)


def stop_left_running(record: Mapping[str, object] | None, *, grace: float = 3.0) -> list[str]:
    """Stop what is still alive of the tree ``record`` (from ``on_spawn``) names; the notes.

    For a run that died with its ckdn (SIGKILL): its next run calls this before it
    starts, so two copies of one check never run side by side. Only a tree that is
    recognisably that run's is touched (``_leftovers.left_running``).
    """
    if not record:
        return []
    from ckdn.process._leftovers import left_running  # here: only after a dead run

    return left_running(record, grace)


def _seal(log: LogHash, grace: float) -> tuple[str, int, list[str]]:
    """The log's hash and size, once nothing can write into it any more; the notes."""
    notes = []
    if log.open_for_writing() is not False:  # the usual answer is one fcntl
        # Imported here: only a log something still writes into needs the leftovers' code.
        from ckdn.process._leftovers import stop_writers

        notes = stop_writers(log, grace)
    return (*log.seal(), notes)


@record
class _Ended(Record):
    __slots__ = ("duration", "interrupted", "notes", "rc", "started", "timed_out")
    rc: int
    duration: float
    notes: tuple[str, ...]
    started: bool
    timed_out: bool
    interrupted: bool

    def __init__(  # noqa: PLR0917 - positional, as when it was a dataclass
            self, rc: int, duration: float, notes: tuple[str, ...] = (), started: bool = True,
            timed_out: bool = False, interrupted: bool = False) -> None:
        self._assign(rc, duration, notes, started, timed_out, interrupted)

    def noted(self, notes: Sequence[str]) -> _Ended:
        if not notes:
            return self
        return _Ended(self.rc, self.duration, (*self.notes, *notes), self.started,
                      self.timed_out, self.interrupted)

    def called_off(self, signum: int | None, words: str) -> _Ended:
        """A stop request during the clean-up still calls the run off: the user wants out."""
        if signum is None or self.interrupted or self.timed_out or not self.started:
            return self
        note = f"{words} after the command exited with code {self.rc}"
        return _Ended(128 + signum, self.duration, (*self.notes, note), self.started,
                      self.timed_out, interrupted=True)

    def exit(self, timeout: float | None) -> Exit:
        return Exit(
            self.rc,
            started=self.started,
            timed_out=self.timed_out,
            interrupted=self.interrupted,
            duration=self.duration,
            timeout=timeout,
            notes=self.notes,
        )


def _spawn(
    args: list[str], cwd: str | os.PathLike[str], env: Mapping[str, str], log_fd: int
) -> Process | _Ended:
    """Start the child with the log as its stdout and stderr; closes ``log_fd`` either way.

    A child that never starts still explains itself in the log, so an empty log
    always means the command printed nothing.
    """
    start = time.monotonic()
    try:
        return _lite.spawn(args, cwd, env, log_fd)
    except OSError as error:
        rc, note = _never_started(args[0], cwd, error)
        os.write(log_fd, f"ckdn: {note}\n".encode(errors="surrogateescape"))
        return _Ended(rc, time.monotonic() - start, notes=(note,), started=False)
    finally:
        os.close(log_fd)


def _never_started(program: str, cwd: str | os.PathLike[str], error: OSError) -> tuple[int, str]:
    """The shell's codes: 127 when nothing was found to run, 126 when it could not run."""
    missing = isinstance(error, FileNotFoundError | NotADirectoryError)
    rc = RC_NOT_FOUND if missing else RC_NOT_EXECUTABLE
    where = os.fsdecode(cwd)
    if error.filename is not None and os.fsdecode(error.filename) == where != program:
        return rc, f"cannot enter working directory {where}: {error.strerror}"
    if missing:
        return rc, f"command not found: {program}"
    if isinstance(error, PermissionError):
        return rc, f"command not executable: {program} (permission denied)"
    return rc, f"cannot execute {program}: {error.strerror or error}"


def _supervise(
    proc: Process,
    log: LogHash,
    stops: Stops,
    tree: Tree,
    *,
    start: float,
    timeout: float | None,
    grace: float,
    label: str,
) -> _Ended:
    try:
        child = Child(proc)
        if stops.request is not None:
            child.watch(stops.request.fileno())
    except BaseException:  # out of file descriptors, say: nothing may outlive ckdn's failure
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    progress = _progress_line(label, start)
    try:
        tree.started(proc.pid)  # the lock record names the tree from now on
        builtin_sha256()  # loaded while the child runs (a second core), not after it
        deadline = None if timeout is None else start + timeout
        cause = _wait(child, log, stops, tree, progress, deadline=deadline)
        child.unwatch()  # whatever ended the wait, the tree stop's waits need their grace
        if progress is not None:
            progress.clear()
        return _conclude(child, tree, cause, stops, start=start, timeout=timeout, grace=grace)
    except BaseException:
        _stopping().stop_tree(child, tree, grace=0.0)  # ckdn's own failure must not orphan it
        raise
    finally:
        if progress is not None:
            progress.clear()
        child.close()


def _progress_line(label: str, start: float) -> Progress | None:
    """The live status line, only when stderr is a terminal (and only then imported)."""
    stream = sys.stderr
    try:
        terminal = stream is not None and stream.isatty()
    except ValueError:  # closed
        terminal = False
    if not terminal:
        return None
    from ckdn.process._progress import Progress  # here: only a terminal shows the line

    return Progress(stream, label, start)


def _wait(
    child: Child,
    log: LogHash,
    stops: Stops,
    tree: Tree,
    progress: Progress | None,
    *,
    deadline: float | None,
) -> str:
    """Hash the log as it grows until the child exits, time runs out, or ckdn must stop.

    Each quiet look also lets the tree adopt orphans once the leader starts children.
    """
    idle = _IDLE_FIRST
    watch_at = time.monotonic() + _IDLE_FIRST
    while True:
        busy = log.follow()
        now = time.monotonic()
        if now >= watch_at:
            if tree.first_child_started(child):
                _stopping().contain(tree, child)
            watch_at = now + _IDLE_FIRST
        pause = 0.0 if busy else idle
        if progress is not None:
            progress.tick(now, log.size())
            pause = min(pause, progress.due - now)
        if deadline is not None:
            pause = min(pause, deadline - now)
        if stops.wait(child, pause):
            return "exited"
        if stops.signum is not None:
            return "signal"
        if deadline is not None and time.monotonic() >= deadline:
            return "timeout"
        idle = _IDLE_FIRST if busy else min(idle * 2, _IDLE_MAX)


def _conclude(
    child: Child,
    tree: Tree,
    cause: str,
    stops: Stops,
    *,
    start: float,
    timeout: float | None,
    grace: float,
) -> _Ended:
    """Stop what must be stopped and turn the cause into codes and notes."""
    notes: list[str] = []
    if cause == "exited":
        rc = child.reap()
        live = live_members(child.pid)
        if live != 0 or (tree.may_reach_outside(child) and _stopping().outside(tree, child)):
            strays = _stopping()
            killed = strays.stop_tree(child, tree, grace)
            count = "" if live is None else f"{live + len(tree.found)} "
            beyond = _outside(tree, ", {} of them outside its process group")
            notes.append(f"stopped {count}leftover process(es) still running after the command"
                         f" exited{beyond} ({strays.stop_signals(killed, grace)})")
    else:
        strays = _stopping()
        strays.outside(tree, child)  # what left the group, found while the leader lives
        killed = strays.stop_tree(child, tree, grace)
        signum = stops.signum or signal.SIGINT
        why = f"timed out after {timeout:g}s" if cause == "timeout" else stops.words()
        beyond = _outside(tree, " and {} process(es) outside it")
        notes.append(f"{why}; stopped the process group{beyond} "
                     f"({strays.stop_signals(killed, grace)})")
        rc = RC_TIMEOUT if cause == "timeout" else 128 + signum
    return _Ended(
        rc,
        time.monotonic() - start,
        notes=tuple(notes),
        timed_out=cause == "timeout",
        interrupted=cause == "signal",
    )


def _stopping() -> ModuleType:
    """The code that contains and stops a tree with something left (``_strays``)."""
    # Imported here, the one way in: a run whose command exits cleanly and starts nothing
    # else never needs it (nor the cgroup code it brings).
    from ckdn.process import _strays

    return _strays


def _outside(tree: Tree, words: str) -> str:
    return words.format(len(tree.found)) if tree.found else ""
