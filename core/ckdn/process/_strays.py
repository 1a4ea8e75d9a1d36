"""Stopping a check's tree, with the processes that left its group, and whatever still writes."""

from __future__ import annotations

import os
import signal
import time

from ckdn.process import _group
from ckdn.process._cgroup import Cgroup, cgroup_pids
from ckdn.process._group import (
    _GONE,
    _KILL_SETTLE,
    HELPERS,
    Child,
    Tree,
    group_members,
    live_processes,
    stat_fields,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

# Loaded only when something is left to stop (a timeout, Ctrl-C, leftovers after the
# command exited) or the leader has started a child: a run that ends cleanly and starts
# nothing else never imports it. What it finds:
#
# * the process group, by ``killpg``;
# * once ckdn is a child subreaper (:class:`Reaper`), every orphan of the tree: the
#   kernel hands it to ckdn instead of to init, so a process whose parent exited is
#   found under ckdn whatever session it moved to; where ckdn may not be one, every
#   process in a cgroup of the check's own, where ckdn may make one (``_cgroup``);
# * always, the descendants of what is left (the leader while it runs, the group's
#   live members).
#
# Both the subreaper and the cgroup are put in place by :func:`contain`, lazily: a
# process that leaves the tree before then (a double fork in the command's first
# milliseconds) is found only if it holds the log open (``_leftovers``).
#
# A process is known by its pid and start time, so a pid reused meanwhile is never
# signalled. Log writers and a dead run's leftovers are ``_leftovers``.

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37


def stop_tree(child: Child, tree: Tree, grace: float) -> bool:
    """SIGTERM the tree, SIGKILL what is left after ``grace``; true when SIGKILL was needed.

    Always leaves the leader reaped.
    """
    _signal_tree(child, tree, signal.SIGTERM)
    deadline = time.monotonic() + grace
    if child.proc.returncode is None and child.exited(grace):
        child.reap()
    if child.proc.returncode is not None and _wait_empty(child, tree, deadline):
        return False
    _signal_tree(child, tree, signal.SIGKILL)
    child.reap()
    _wait_empty(child, tree, time.monotonic() + _KILL_SETTLE, signal.SIGKILL)
    return True


def stop_signals(killed: bool, grace: float) -> str:
    """The signals a stop sent, for its note: ``SIGTERM, then SIGKILL after 3s``."""
    return f"SIGTERM, then SIGKILL after {grace:g}s" if killed else "SIGTERM"


def _signal_tree(child: Child, tree: Tree, signum: int) -> None:
    try:
        os.killpg(child.pid, signum)
    except ProcessLookupError:
        pass  # the group is already empty
    except PermissionError:
        pass  # only members that changed user are left; no signal of ours reaches them
    _send(outside(tree, child), signum)
    if signum == signal.SIGKILL and tree.cgroup is not None:
        tree.cgroup.kill()


def _wait_empty(child: Child, tree: Tree, deadline: float, signum: int = 0) -> bool:
    """Wait until the tree has no live process; only reached when something was left over.

    With ``signum``, a process that turns up meanwhile (forked while the others died) gets
    it too."""
    pause = 0.001
    while _group_alive(child.pid) or outside(tree, child):
        now = time.monotonic()
        if now >= deadline:
            return False
        if signum:
            _signal_tree(child, tree, signum)
        time.sleep(min(pause, deadline - now))
        pause = min(pause * 2, 0.05)
    return True


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    members = group_members(pgid)
    return members is None or bool(members)


def outside(tree: Tree, child: Child) -> list[int]:
    """The tree's live processes outside the group (the leader's), as far as ckdn can see."""
    if not tree.may_reach_outside(child):
        return []
    pgid, me = child.pid, os.getpid()
    roots = [me] if tree.reaper else [pgid, *(group_members(pgid) or ())]
    candidates = [*descendants(roots), *tree.found]
    if tree.cgroup is not None:
        candidates.extend(cgroup_pids(tree.cgroup.path))
    live = []
    for pid in dict.fromkeys(candidates):
        fields = stat_fields(pid)
        if pid in (pgid, me) or fields is None or int(fields[3]) in HELPERS:
            continue  # the leader, ckdn, gone, or ckdn's own helper (its session) and its kids
        start = int(fields[19])
        if tree.found.get(pid, start) != start:
            continue  # not the process seen before: its pid was reused
        if fields[0] in _GONE:
            if tree.reaper and int(fields[1]) == me:
                _reap(pid)  # an adopted orphan: ckdn's to reap (never the leader: Child does)
        elif int(fields[2]) != pgid:
            tree.found[pid] = start
            live.append(pid)
    return live


def _reap(pid: int) -> None:
    try:  # noqa: SIM105
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _send(pids: Iterable[int], signum: int) -> list[int]:
    """Signal each; the ones that refused (another user's now)."""
    refused = []
    for pid in pids:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass
        except PermissionError:
            refused.append(pid)
    return refused


def contain(tree: Tree, child: Child) -> None:
    """Reach what leaves the group from now on: ckdn as the tree's subreaper where it may
    be one, else a cgroup of the check's own where ckdn may make one; else neither."""
    if _group._adopt_orphans:
        tree.reaper = Reaper.start(child.pid)
        if tree.reaper is not None:
            return
    cgroup = Cgroup.make()
    if cgroup is not None and cgroup.take(child.pid, descendants([child.pid])):
        tree.cgroup = cgroup
        tree.started(child.pid)  # the lock record names the cgroup too


def children(pid: int) -> list[int]:
    """The children of ``pid``, from each of its threads; [] once it is gone."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as listing:
                found.extend(int(each) for each in listing.read().split())
        except FileNotFoundError:
            if os.path.isdir(f"/proc/{pid}/task/{task}"):  # a kernel without the listing
                return [kid for kid, fields in live_processes(os.listdir("/proc"))
                        if int(fields[1]) == pid]
        except OSError:
            continue
    return found


def descendants(roots: Iterable[int]) -> list[int]:
    """Every process below ``roots`` (not the roots themselves), parents before children."""
    found: list[int] = []
    seen = set(roots)
    level = list(seen)
    while level:
        below = [kid for pid in level for kid in children(pid) if kid not in seen]
        seen.update(below)
        found.extend(below)
        level = below
    return found


class Reaper:
    """ckdn as a child subreaper for the rest of one run (Linux ``prctl``, through ctypes).

    A process whose parent exits is handed to its nearest subreaper ancestor instead of
    init, so an orphan of the check, whatever session it moved to, becomes ckdn's child,
    where the tree stop finds it. The flag is a property of the whole process, and an
    orphan cannot be told apart from a child the host started itself, so ckdn sets it
    only while it is sure every child of its process is the check's: one thread (ckdn's
    own wait included), and no child but the leader. The ``ckdn`` command is always so;
    a host running checks in worker threads (tox) is not, and is never made a subreaper.
    ckdn sets it lazily, once the leader has started a child (importing ctypes costs more
    than a trivial run may), and gives it back at the end of the run.
    """

    __slots__ = ("_leader", "_prctl", "_previous")

    def __init__(self, prctl: Callable[..., int], previous: int, leader: int) -> None:
        self._prctl = prctl
        self._previous = previous
        self._leader = leader

    @classmethod
    def start(cls, leader: int) -> Reaper | None:
        me = os.getpid()
        try:
            if os.listdir("/proc/self/task") != [str(me)] \
                    or [pid for pid in children(me) if pid not in HELPERS] != [leader]:
                return None
            import ctypes  # here: a run whose command starts nothing else never pays for it

            prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, ImportError, AttributeError):  # no /proc, no ctypes, not Linux
            return None
        prctl.argtypes = (ctypes.c_int, *[ctypes.c_ulong] * 4)
        flag = ctypes.c_int(0)
        if prctl(PR_GET_CHILD_SUBREAPER, ctypes.addressof(flag), 0, 0, 0) != 0:
            return None
        if not flag.value and prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return None
        return cls(prctl, flag.value, leader)

    def restore(self) -> None:
        """Give the flag back, and reap the orphans that died since the tree was stopped (every
        child of this process is the check's, see above; the leader is ``Child``'s to reap)."""
        if not self._previous:
            self._prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
        for pid in children(os.getpid()):
            if pid != self._leader and pid not in HELPERS \
                    and (fields := stat_fields(pid)) is not None and fields[0] in _GONE:
                _reap(pid)


def stop_pids(pids: dict[int, int], grace: float) -> tuple[bool, list[int]]:
    """SIGTERM the processes (pid: start time), SIGKILL what is left after ``grace``.

    Returns whether SIGKILL was needed and which ones are still alive (another user's).
    """
    def alive() -> list[int]:
        return [pid for pid, start in pids.items()
                if (fields := stat_fields(pid)) is not None and fields[0] not in _GONE
                and int(fields[19]) == start]

    _send(alive(), signal.SIGTERM)
    if _gone(alive, time.monotonic() + grace):
        return False, []
    _send(alive(), signal.SIGKILL)
    _gone(alive, time.monotonic() + _KILL_SETTLE)
    return True, alive()


def _gone(alive: Callable[[], list[int]], deadline: float) -> bool:
    pause = 0.001
    while alive():
        now = time.monotonic()
        if now >= deadline:
            return False
        time.sleep(min(pause, deadline - now))
        pause = min(pause * 2, 0.05)
    return True
