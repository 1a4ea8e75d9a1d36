"""The child's tree (its exit as a pollable fd, its group, its cgroup) and what asks to stop it."""

from __future__ import annotations

import os
import select

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    import signal
    import threading
    from collections.abc import Callable, Iterable
    from types import FrameType
    from typing import Protocol

    from ckdn._lite import Process
    from ckdn.process._cgroup import Cgroup
    from ckdn.process.stop import StopRequest

    class Subreaper(Protocol):
        """ckdn as the tree's subreaper (``_strays.Reaper``), given back when the run ends."""

        def restore(self) -> None: ...
else:  # the C module that `signal` wraps in enums: no enum, functools, collections
    import _signal as signal

# The child leads its own session, so one ``killpg`` reaches everything that stays in
# its group. What leaves the group (``setsid``, a double fork) is reached another way
# (:class:`Tree`: ckdn as a child subreaper, a cgroup of the check's own); the lazily
# loaded ``_strays`` finds and stops it, and only a tree with something left loads it.
#
# Waiting sleeps in ``poll`` on a pidfd (the exit wakes it at once, so a fast check
# pays no polling floor); where there is no pidfd a thread blocks in ``waitpid`` and
# reports through a pipe.
#
# Ctrl-C, SIGTERM and SIGHUP to ckdn while a check runs are a request to stop the
# tree, never an abort (:class:`Stops`): the handler interrupts only the wait for the
# child; anywhere else (spawning, stopping the tree, sealing the log) it just records
# the request, so a second Ctrl-C can never abort the clean-up. A host's
# :class:`~ckdn.process.stop.StopRequest` counts as Ctrl-C, with the host's reason.

_KILL_SETTLE = 1.0  # how long SIGKILLed processes get to disappear
#: Replaced by tests to exercise the waiter-thread fallback of other platforms.
_pidfd_open: Callable[[int], int] | None = getattr(os, "pidfd_open", None)
#: Whether a run may make ckdn a child subreaper (``_strays.Reaper``); tests switch it off.
_adopt_orphans = True
#: Processes ckdn started beside the check, each leading a session of its own (the tree's
#: ``git status``): ckdn's children, never the check's, so the subreaper's "no child but
#: the leader", the search for what left the group and the reaping of orphans pass them by.
HELPERS: set[int] = set()


def started_beside(pid: int) -> None:
    """``pid`` is ckdn's own helper, started beside the check (in a session of its own)."""
    HELPERS.add(pid)


def ended_beside(pid: int) -> None:
    """The helper ``pid`` has been reaped by whoever started it."""
    HELPERS.discard(pid)


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
        import threading  # here: only a kernel without pidfd needs the thread

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
    members = group_members(pgid)
    return None if members is None else len(members)


_GONE = (b"Z", b"X")  # a zombie writes nothing


def group_members(pgid: int) -> list[int] | None:
    """The live processes of group ``pgid``, from /proc; None without /proc."""
    try:
        names = os.listdir("/proc")
    except FileNotFoundError:
        return None
    return [pid for pid, fields in live_processes(names) if int(fields[2]) == pgid]


def live_processes(names: Iterable[str]) -> Iterable[tuple[int, list[bytes]]]:
    """(pid, stat fields) of each live process named in ``names``."""
    for name in names:
        if name.isdigit() and (fields := stat_fields(int(name))) is not None \
                and fields[0] not in _GONE:
            yield int(name), fields


def stat_fields(pid: int) -> list[bytes] | None:
    """``/proc/PID/stat`` from its third field on (state, ppid, pgrp, session, ...), or None
    once it is gone. The command name before them may hold spaces and parentheses."""
    try:
        # raw, as every /proc read here: read whole once, so a buffer (sized by an isatty
        # ioctl) would buy nothing
        with open(f"/proc/{pid}/stat", "rb", buffering=0) as stat_file:
            stat = stat_file.read()
    except OSError:  # exited while we looked (or no /proc)
        return None
    return stat[stat.rfind(b")") + 2 :].split()


#: The variable every process of a check's tree inherits from ckdn: its run dir.
MARKER = "CKDN_RUN_DIR"


def identity(pid: int, cgroup: Cgroup | None, marker: str | None = None
             ) -> dict[str, object]:
    """What recognises the child's tree after ckdn died: its group, its leader's start (clock
    ticks since boot: a pid reused since then started later), the boot, its cgroup, and the
    ``CKDN_RUN_DIR`` its processes inherit (found also in a session of their own)."""
    found: dict[str, object] = {"pgid": pid}
    if marker:
        found["marker"] = marker
    fields, boot = stat_fields(pid), boot_id()
    if fields is not None and boot is not None:
        found.update(start=int(fields[19]), boot=boot)
    if cgroup is not None:
        found["cgroup"] = cgroup.path
    return found


def boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id", "rb", buffering=0) as boot:
            return boot.read().strip().decode()
    except OSError:
        return None


def has_children(pid: int) -> bool:
    """Whether ``pid`` has a child (in any of its threads); true where /proc cannot say."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False  # gone
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb", buffering=0) as listing:
                if listing.read(1):
                    return True
        except FileNotFoundError:
            if os.path.isdir(f"/proc/{pid}/task/{task}"):
                return True  # a kernel without the listing: assume so
        except OSError:
            continue
    return False


class Tree:
    """Where the check's processes may be besides its group: the orphans ckdn adopted as a
    child subreaper, or a cgroup of the check's own, and the descendants of what is left
    (``_strays``). ``found``: every process outside the group seen so far (pid: start
    time), for the notes.

    Both ways are taken lazily, at the first quiet look (``_runner._wait``) at which the
    leader, still running, has started a child: a command that starts nothing else (and
    a trivial run) never pays for them. What the tree is, once known, goes to ``on_spawn``
    (the lock record), again when it gains a cgroup.
    """

    __slots__ = ("cgroup", "decided", "found", "marker", "on_spawn", "reaper")

    def __init__(self, on_spawn: Callable[[dict[str, object]], None] | None,
                 marker: str | None = None) -> None:
        self.on_spawn = on_spawn
        self.marker = marker
        self.cgroup: Cgroup | None = None
        self.reaper: Subreaper | None = None
        self.found: dict[int, int] = {}
        self.decided = False

    def started(self, pid: int) -> None:
        if self.on_spawn is not None:
            self.on_spawn(identity(pid, self.cgroup, self.marker))

    def may_reach_outside(self, child: Child) -> bool:
        """Whether anything of the tree may be left outside the group (no /proc scan):
        false, the usual answer, leaves the stopping code (``_strays``) unloaded."""
        if self.cgroup is not None:
            return self.cgroup.populated()
        return bool(self.reaper or self.found or child.proc.returncode is None
                    or live_members(child.pid) != 0)

    def first_child_started(self, child: Child) -> bool:
        """At a quiet look: whether the leader, still running, has now started a child
        (true once), the moment to reach what leaves the group (``_strays.contain``)."""
        if self.decided or child.proc.returncode is not None or not has_children(child.pid):
            return False
        self.decided = True
        return True

    def close(self) -> None:
        if self.reaper:
            self.reaper.restore()
        if self.cgroup is not None:
            self.cgroup.remove()


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


