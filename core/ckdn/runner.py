"""One check's process: spawn, stream to a file, timeout, interrupt, tree stop.

Why it is built this way:

* The child's stdout and stderr *are* ``full.log`` (never a pipe), so a
  grandchild that keeps the log open cannot hang ckdn, and the bytes on disk are
  exactly the bytes the tool wrote.
* The child leads its own session, so one ``killpg`` reaches everything it
  started. The group is stopped on timeout, on Ctrl-C / SIGTERM / SIGHUP, and
  after a clean exit when something is still running, so nothing keeps writing
  into a sealed log.
* Waiting sleeps in ``poll`` on a pidfd: the exit wakes it at once, so a fast
  check pays no polling floor.
* The log is hashed while it grows, so sealing a 2 GB log costs only its tail,
  in constant memory. A small log is hashed once at the end with the builtin
  SHA-256: loading OpenSSL costs more than hashing it (bench/bench_runner.py).
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

from ckdn import spawn
from ckdn._record import Record, record
from ckdn.reconcile import RC_NOT_EXECUTABLE, RC_NOT_FOUND, RC_TIMEOUT, Exit

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Mapping, Sequence
    from types import FrameType
    from typing import Protocol

    from ckdn.progress import Progress
    from ckdn.spawn import Process
    from ckdn.stop import StopRequest

    class _Hash(Protocol):
        def update(self, data: memoryview, /) -> None: ...

        def hexdigest(self) -> str: ...

__all__ = ["Ran", "run_process"]

_CHUNK = 1 << 20  # read size while following the log
_SMALL_CHUNK = 64 << 10  # read size for a log hashed once at the end
_STREAM_FROM = 256 << 10  # a log smaller than this is hashed once, at the end
_MIN_READ = 64 << 10  # while the child runs, wait for this much before reading
_IDLE_FIRST = 0.005  # seconds between looks at a quiet log, doubling up to _IDLE_MAX
_IDLE_MAX = 0.05
_KILL_SETTLE = 1.0  # how long SIGKILLed processes get to disappear
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_SIGNAL_WORDS: dict[int, str] = {
    signal.SIGINT: "interrupted by Ctrl-C (SIGINT)",
    signal.SIGTERM: "ckdn received SIGTERM",
    signal.SIGHUP: "ckdn received SIGHUP",
}
#: Replaced by tests to exercise the waiter-thread fallback of other platforms.
_pidfd_open: Callable[[int], int] | None = getattr(os, "pidfd_open", None)


@record
class Ran(Record):
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
) -> Ran:
    """Run ``argv`` (no shell) with stdout+stderr in ``log_path``; always return a :class:`Ran`.

    Whatever the child does (missing, crashing, hanging, ignoring SIGTERM, leaving
    processes behind) and however ckdn is told to stop, the tree is stopped and the
    log sealed before this returns, so the caller can still write its evidence.
    ``stop`` lets a host that runs this off its main thread stop the run as Ctrl-C
    would (:mod:`ckdn.stop`). Raises ``OSError`` only when ``log_path`` cannot be
    created.
    """
    args = list(argv)
    if not args:
        raise ValueError("argv is empty")
    if timeout is not None and timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout!r}")
    if grace < 0:
        raise ValueError(f"grace must not be negative, got {grace!r}")
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
    try:
        log = _LogHash(log_path)
    except BaseException:
        os.close(log_fd)
        raise
    try:
        with _Stops(stop) as stops:  # installed before the spawn: no signal can orphan the child
            started_at, start = time.time(), time.monotonic()
            spawned = _spawn(args, cwd, env, log_fd)
            if isinstance(spawned, _Ended):
                ended = spawned
            else:
                ended = _supervise(
                    spawned,
                    log,
                    stops,
                    start=start,
                    timeout=timeout,
                    grace=grace,
                    label=label or args[0],
                )
            finished_at = time.time()
            sha256, size = log.seal()
            stops.host_stopped()
            ended = ended.called_off(stops.signum, stops.words())
    finally:
        log.close()
    return Ran(ended.exit(timeout), sha256, size, started_at, finished_at)


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
        return spawn.start(args, cwd, env, log_fd)
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
    log: _LogHash,
    stops: _Stops,
    *,
    start: float,
    timeout: float | None,
    grace: float,
    label: str,
) -> _Ended:
    try:
        child = _Child(proc)
        if stops.request is not None:
            child.watch(stops.request.fileno())
    except BaseException:  # out of file descriptors, say: nothing may outlive ckdn's failure
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    progress = _progress_line(label, start)
    try:
        cause = _wait(child, log, stops, progress, None if timeout is None else start + timeout)
        child.unwatch()  # whatever ended the wait, the tree stop's waits need their grace
        if progress is not None:
            progress.clear()
        return _conclude(child, cause, stops, start=start, timeout=timeout, grace=grace)
    except BaseException:
        _stop_group(child, grace=0.0)  # a failure in ckdn itself must not orphan the tree
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
    from ckdn.progress import Progress

    return Progress(stream, label, start)


def _wait(
    child: _Child,
    log: _LogHash,
    stops: _Stops,
    progress: Progress | None,
    deadline: float | None,
) -> str:
    """Hash the log as it grows until the child exits, time runs out, or ckdn must stop."""
    idle = _IDLE_FIRST
    while True:
        busy = log.follow()
        now = time.monotonic()
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
    child: _Child,
    cause: str,
    stops: _Stops,
    *,
    start: float,
    timeout: float | None,
    grace: float,
) -> _Ended:
    """Stop what must be stopped and turn the cause into codes and notes."""
    notes: list[str] = []
    if cause == "exited":
        rc = child.reap()
        live = _live_members(child.pid)
        if live != 0:
            killed = _stop_group(child, grace)
            count = "" if live is None else f"{live} "
            notes.append(
                f"stopped {count}leftover process(es) still running after the command exited"
                f" ({_how(killed, grace)})"
            )
    else:
        killed = _stop_group(child, grace)
        signum = stops.signum or signal.SIGINT
        why = f"timed out after {timeout:g}s" if cause == "timeout" else stops.words()
        notes.append(f"{why}; stopped the process group ({_how(killed, grace)})")
        rc = RC_TIMEOUT if cause == "timeout" else 128 + signum
    return _Ended(
        rc,
        time.monotonic() - start,
        notes=tuple(notes),
        timed_out=cause == "timeout",
        interrupted=cause == "signal",
    )


def _stop_word(signum: int) -> str:
    return _SIGNAL_WORDS.get(signum, f"ckdn received signal {signum}")


def _how(killed: bool, grace: float) -> str:
    return f"SIGTERM, then SIGKILL after {grace:g}s" if killed else "SIGTERM"


class _Child:
    """The spawned leader, with an fd that turns readable when it exits (poll needs no floor)."""

    def __init__(self, proc: Process) -> None:
        self.proc = proc
        self.pid = proc.pid  # also the process group id: the child leads its own session
        self._waiter: threading.Thread | None = None
        self._watched: int | None = None
        try:
            if _pidfd_open is None:
                raise OSError("pidfd_open is not available")
            self._fd = _pidfd_open(proc.pid)
        except OSError:
            self._fd = self._start_waiter()
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLIN)

    def watch(self, fd: int) -> None:
        """Also wake :meth:`exited` when ``fd`` turns readable (a host's stop request)."""
        self._poll.register(fd, select.POLLIN)
        self._watched = fd

    def unwatch(self) -> None:
        """Stop waking on the watched fd: it stays readable, and the waits of the tree
        stop that follows must last their grace period."""
        if self._watched is not None:
            self._poll.unregister(self._watched)
            self._watched = None

    def _start_waiter(self) -> int:
        """Elsewhere a thread blocks in waitpid and reports the exit through a pipe."""
        import threading  # lazy: only without pidfd

        read_fd, write_fd = os.pipe()

        def wait() -> None:
            try:
                self.proc.wait()
            finally:
                os.write(write_fd, b"x")
                os.close(write_fd)

        self._waiter = threading.Thread(target=wait, name="ckdn-waiter", daemon=True)
        self._waiter.start()
        return read_fd

    def exited(self, timeout: float | None) -> bool:
        """Wait up to ``timeout`` seconds (None: forever) for the leader to exit."""
        ready = self._poll.poll(None if timeout is None else max(0.0, timeout) * 1000)
        return any(fd == self._fd for fd, _ in ready)

    def reap(self) -> int:
        if self._waiter is not None:
            # The waiter thread reaps; a second waitpid here would race it for the status.
            self._waiter.join()
            assert self.proc.returncode is not None
            return self.proc.returncode
        return self.proc.wait()

    def close(self) -> None:
        if self._waiter is not None:
            self._waiter.join()  # the leader is reaped by now, so this returns at once
        os.close(self._fd)


def _stop_group(child: _Child, grace: float) -> bool:
    """SIGTERM the group, SIGKILL what is left after ``grace``; true when SIGKILL was needed.

    Always leaves the leader reaped.
    """
    _signal_group(child.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    if child.proc.returncode is None and child.exited(grace):
        child.reap()
    if child.proc.returncode is not None and _wait_empty(child.pid, deadline):
        return False
    _signal_group(child.pid, signal.SIGKILL)
    child.reap()
    _wait_empty(child.pid, time.monotonic() + _KILL_SETTLE)
    return True


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        pass  # the group is already empty
    except PermissionError:
        pass  # only members that changed user are left; no signal of ours reaches them


def _wait_empty(pgid: int, deadline: float) -> bool:
    """Wait until the group has no live member; only reached when something was left over."""
    pause = 0.001
    while _live_members(pgid) != 0:
        now = time.monotonic()
        if now >= deadline:
            return False
        time.sleep(min(pause, deadline - now))
        pause = min(pause * 2, 0.05)
    return True


def _live_members(pgid: int) -> int | None:
    """How many processes of the group could still write; None when some could, count unknown.

    Zombies do not count: where PID 1 never reaps orphans (many containers) they
    stay in the group forever but can write nothing.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return 0  # the cheap, usual answer: no scan of /proc
    except PermissionError:
        pass
    try:
        pids = os.listdir("/proc")
    except FileNotFoundError:
        return None
    live = 0
    for pid in pids:
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat_file:
                stat = stat_file.read()
        except (FileNotFoundError, ProcessLookupError):
            continue  # exited while we looked
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        state, _ppid, pgrp = stat[stat.rfind(b")") + 2 :].split(maxsplit=3)[:3]
        if int(pgrp) == pgid and state not in (b"Z", b"X"):
            live += 1
    return live


class _StopRequested(Exception):
    """Raised by the signal handler, only while ckdn is blocked waiting for the child."""


class _Stops:
    """Ctrl-C, SIGTERM and SIGHUP become a request to stop the tree.

    The handler interrupts only the wait for the child; anywhere else (spawning,
    stopping the tree, sealing the log) it just records the request, so a second
    Ctrl-C can never abort the clean-up. Signals someone ignores on purpose
    (``nohup``) stay ignored, and old handlers come back on exit. A host's
    :class:`~ckdn.stop.StopRequest` counts as Ctrl-C, with the host's reason.
    """

    def __init__(self, request: StopRequest | None = None) -> None:
        self.signum: int | None = None
        self.request = request
        self._host_reason: str | None = None
        self._armed = False
        self._saved: dict[int, Callable[[int, FrameType | None], object] | int] = {}

    def __enter__(self) -> _Stops:
        for signum in _STOP_SIGNALS:
            previous = signal.getsignal(signum)
            if previous is None or previous == signal.SIG_IGN:
                continue
            try:
                signal.signal(signum, self._handle)
            except ValueError:
                break  # not the main thread: signals are delivered elsewhere
            self._saved[signum] = previous
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, previous in self._saved.items():
            signal.signal(signum, previous)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
        if self._armed:
            self._armed = False
            raise _StopRequested

    def host_stopped(self) -> bool:
        """True once the host asked to stop; from then on it is ``signum`` SIGINT."""
        request = self.request
        if self.signum is None and request is not None and request.reason is not None:
            self.signum = signal.SIGINT
            self._host_reason = request.reason
        return self._host_reason is not None

    def words(self) -> str:
        """Why the run was called off, for its note."""
        if self._host_reason is not None:
            return f"stopped at the host's request ({self._host_reason})"
        return _stop_word(self.signum or signal.SIGINT)

    def wait(self, child: _Child, timeout: float) -> bool:
        """Wait for the leader's exit; a stop request cuts the wait short (returns False)."""
        try:
            self._armed = True
            exited = self.signum is None and not self.host_stopped() and child.exited(timeout)
            self._armed = False
        except _StopRequested:
            return False
        if not exited and self.host_stopped():
            child.unwatch()
        return exited


def _sha256(*, small: bool) -> _Hash:
    """OpenSSL's SHA-256 is ~10x faster, but loading it costs more than hashing a small log."""
    if small:
        # CPython's builtin module; asking for the other name first costs a failed import.
        names = ("_sha2", "_sha256") if sys.version_info >= (3, 12) else ("_sha256", "_sha2")
        for name in names:
            try:
                hasher: _Hash = __import__(name).sha256()
                return hasher
            except ImportError:
                continue
    import hashlib  # lazy: loading OpenSSL is the cost avoided above

    return hashlib.sha256()


class _LogHash:
    """SHA-256 and size of the log, computed while the child writes it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
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
