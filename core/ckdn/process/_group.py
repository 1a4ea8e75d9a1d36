"""The child's process group: its exit as a pollable fd, the tree stop, and what asks for it.

The child leads its own session, so one ``killpg`` reaches everything it
started. Waiting sleeps in ``poll`` on a pidfd (the exit wakes it at once, so a
fast check pays no polling floor); where there is no pidfd a thread blocks in
``waitpid`` and reports through a pipe. Stopping the group is SIGTERM, a grace
period, then SIGKILL, and it counts only live members: a zombie can write nothing.

Ctrl-C, SIGTERM and SIGHUP to ckdn while a check runs are a request to stop the
group, never an abort (:class:`Stops`): the handler interrupts only the wait for
the child; anywhere else (spawning, stopping the tree, sealing the log) it just
records the request, so a second Ctrl-C can never abort the clean-up. A host's
:class:`~ckdn.process.stop.StopRequest` counts as Ctrl-C, with the host's reason.
"""

from __future__ import annotations

import os
import select
import signal
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import threading
    from collections.abc import Callable
    from types import FrameType

    from ckdn._lite.spawn import Process
    from ckdn.process.stop import StopRequest

_KILL_SETTLE = 1.0  # how long SIGKILLed processes get to disappear
#: Replaced by tests to exercise the waiter-thread fallback of other platforms.
_pidfd_open: Callable[[int], int] | None = getattr(os, "pidfd_open", None)


class Child:
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


def stop_group(child: Child, grace: float) -> bool:
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
    while live_members(pgid) != 0:
        now = time.monotonic()
        if now >= deadline:
            return False
        time.sleep(min(pause, deadline - now))
        pause = min(pause * 2, 0.05)
    return True


def live_members(pgid: int) -> int | None:
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


# -- what asks for the stop ------------------------------------------------------------

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_SIGNAL_WORDS: dict[int, str] = {
    signal.SIGINT: "interrupted by Ctrl-C (SIGINT)",
    signal.SIGTERM: "ckdn received SIGTERM",
    signal.SIGHUP: "ckdn received SIGHUP",
}


def stop_word(signum: int) -> str:
    return _SIGNAL_WORDS.get(signum, f"ckdn received signal {signum}")


class _StopRequested(Exception):
    """Raised by the signal handler, only while ckdn is blocked waiting for the child."""


class Stops:
    """Ctrl-C, SIGTERM and SIGHUP become a request to stop the tree.

    The handler interrupts only the wait for the child; anywhere else (spawning,
    stopping the tree, sealing the log) it just records the request, so a second
    Ctrl-C can never abort the clean-up. Signals someone ignores on purpose
    (``nohup``) stay ignored, and old handlers come back on exit. A host's
    :class:`~ckdn.process.stop.StopRequest` counts as Ctrl-C, with the host's reason.
    """

    def __init__(self, request: StopRequest | None = None) -> None:
        self.signum: int | None = None
        self.request = request
        self._host_reason: str | None = None
        self._armed = False
        self._saved: dict[int, Callable[[int, FrameType | None], object] | int] = {}

    def __enter__(self) -> Stops:
        for signum in STOP_SIGNALS:
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
        return stop_word(self.signum or signal.SIGINT)

    def wait(self, child: Child, timeout: float) -> bool:
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


