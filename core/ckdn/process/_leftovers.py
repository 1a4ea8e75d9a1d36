"""What is still running once a run is over: writers of its sealed log, a dead run's tree."""

from __future__ import annotations

import os

from ckdn.process._cgroup import cgroup_pids, kill_all, made_by_ckdn, remove
from ckdn.process._group import MARKER, boot_id, stat_fields
from ckdn.process._strays import stop_pids, stop_signals

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Protocol

    class LogHash(Protocol):
        """What this module asks of the runner's :class:`~ckdn.process._runner.LogHash`
        (named here, not imported: the runner loads this module)."""

        def fileno(self) -> int: ...

        def open_for_writing(self) -> bool | None: ...

        def seal_copy(self) -> None: ...

# Both are rare, and both are looked for by scanning ``/proc``, so this module is
# loaded only when there is something to look for:
#
# * The log is sealed only once nothing has it open for writing
#   (``LogHash.open_for_writing``: one ``fcntl``, so every run can ask). A process still
#   holding it, whatever ckdn's tree stop missed, is found by its descriptors and
#   stopped; one ckdn cannot or must not stop (another user's, or the host's own
#   process) leaves a sealed *copy* in the log's place, and writes on into the
#   original, which no longer has a name.
# * A run whose ``ckdn`` was SIGKILLed leaves its tree running. Its lock record
#   names the tree (``_group.identity``); the next run of the check (or ``ckdn gc``)
#   stops what is still alive of it before it starts (:func:`left_running`): its group,
#   its session, its cgroup, and every process that inherited its ``CKDN_RUN_DIR``.


def stop_writers(log: LogHash, grace: float) -> list[str]:
    """Stop whatever still has the log open for writing, or seal a copy; the notes."""
    where = os.fstat(log.fileno())
    me = os.getpid()
    found = writers(where.st_dev, where.st_ino)
    others = {pid: start for pid, start in found.items() if pid != me}
    notes = []
    left: list[int] = []
    if others:
        killed, left = stop_pids(others, grace)
        if len(left) < len(others):
            notes.append(f"stopped {len(others) - len(left)} process(es) still writing into"
                          f" the log after the check ended ({stop_signals(killed, grace)})")
    still = log.open_for_writing()
    if still is None:  # the kernel cannot say here: look again
        still = bool(writers(where.st_dev, where.st_ino))
    if not still:
        return notes
    stuck = sorted({*left, *([me] if me in found else [])})
    who = (f"{len(stuck)} process(es) ckdn could not stop (pid {', '.join(map(str, stuck))})"
           if stuck else "a process ckdn cannot see")
    try:
        log.seal_copy()
    except OSError as error:
        notes.append(f"{who} still had the log open for writing, and no copy could be sealed"
                     f" ({error.strerror}): the log may change after its hash was taken")
    else:
        notes.append(f"{who} still had the log open for writing; the sealed log is a copy"
                     " taken when the check ended")
    return notes


def writers(dev: int, ino: int) -> dict[int, int]:
    """The processes (pid: start time) with that file open for writing, as /proc shows them."""
    found: dict[int, int] = {}
    for name in _proc():
        if not name.isdigit():
            continue
        folder = f"/proc/{name}/fd"
        try:
            fds = os.listdir(folder)
        except OSError:  # gone, or another user's
            continue
        for fd in fds:
            try:
                target = os.stat(f"{folder}/{fd}")
            except OSError:
                continue
            if (target.st_dev, target.st_ino) == (dev, ino) and _for_writing(name, fd) \
                    and (fields := stat_fields(int(name))) is not None:
                found[int(name)] = int(fields[19])
                break
    return found


def _for_writing(pid: str, fd: str) -> bool:
    """Whether the descriptor was opened for writing (a reader, ``tail -f``, is left alone)."""
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}", "rb") as info:
            for line in info:
                if line.startswith(b"flags:"):
                    return int(line.split()[1], 8) & os.O_ACCMODE != os.O_RDONLY
    except (OSError, ValueError, IndexError):
        pass
    return False


def left_running(record: Mapping[str, object], grace: float) -> list[str]:
    """Stop what is still alive of the tree a dead run's lock record names; the notes.

    Only a tree that is recognisably that run's is touched: same boot, and either its
    cgroup (made by ckdn, named so) or the processes of its group and session that
    started no earlier than its leader, while the leader, if alive, is the same process.
    A pid reused since then started later than the record says, or belongs to a
    process that is not the leader.
    """
    pgid, start, boot = record.get("pgid"), record.get("start"), record.get("boot")
    if not (isinstance(pgid, int) and pgid > 1 and isinstance(start, int)
            and isinstance(boot, str) and boot == boot_id()):
        return []
    me = os.getpid()
    pids: dict[int, int] = {}
    cgroup = record.get("cgroup")
    if not (isinstance(cgroup, str) and made_by_ckdn(cgroup)):
        cgroup = None
    else:
        pids.update((pid, _start(pid)) for pid in cgroup_pids(cgroup))
    leader = stat_fields(pgid)
    if leader is None or leader[0] in (b"Z", b"X") or int(leader[19]) == start:
        for name in _proc():
            fields = stat_fields(int(name)) if name.isdigit() else None
            if fields is not None and fields[0] not in (b"Z", b"X") \
                    and pgid in (int(fields[2]), int(fields[3])) and int(fields[19]) >= start:
                pids[int(name)] = int(fields[19])
    marker = record.get("marker")
    if isinstance(marker, str) and marker:
        pids.update(_marked(f"{MARKER}={marker}".encode(), start))
    for pid in (me, *_ancestors(me)):  # never ckdn, nor what runs it
        pids.pop(pid, None)
    pids = {pid: began for pid, began in pids.items() if began >= 0}
    notes = []
    if pids:
        killed, left = stop_pids(pids, grace)
        if cgroup is not None:
            kill_all(cgroup)
        notes.append(f"stopped {len(pids) - len(left)} process(es) the dead run left running"
                     f" (its process group {pgid}; {stop_signals(killed, grace)})")
        if left:
            notes.append(f"could not stop {len(left)} process(es) the dead run left running"
                         f" (pid {', '.join(map(str, sorted(left)))})")
    if cgroup is not None:
        remove(cgroup)
    return notes


def _marked(entry: bytes, start: int) -> dict[int, int]:
    """The live processes (pid: start time) that started no earlier than the dead run's
    leader and whose environment holds ``entry`` (the run's ``CKDN_RUN_DIR``): what left
    its group and session (``setsid``) still carries it, unless it cleared its environment."""
    found: dict[int, int] = {}
    for name in _proc():
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                environ = handle.read(1 << 20)
        except OSError:  # gone, or another user's
            continue
        if entry not in environ or entry not in environ.split(b"\0"):
            continue
        fields = stat_fields(int(name))
        if fields is not None and fields[0] not in (b"Z", b"X") and int(fields[19]) >= start:
            found[int(name)] = int(fields[19])
    return found


def _proc() -> list[str]:
    try:
        return os.listdir("/proc")
    except OSError:  # no /proc: nothing to find this way
        return []


def _ancestors(pid: int) -> list[int]:
    found = []
    while (fields := stat_fields(pid)) is not None and (pid := int(fields[1])) > 1:
        found.append(pid)
    return found


def _start(pid: int) -> int:
    fields = stat_fields(pid)
    return -1 if fields is None else int(fields[19])
