"""The per-check kernel lock that keeps two runs of one check apart."""

from __future__ import annotations

import fcntl
import os
import time

from ckdn._lite.canonical import canonical
from ckdn.errors import BusyError, RefusedError, os_reason, quote
from ckdn.store._names import parse_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable

# One lock per check, ``<runs_dir>/.locks/<check>.lock``, taken with
# ``flock(LOCK_EX | LOCK_NB)`` on a close-on-exec descriptor: the kernel drops it
# when the holder dies, and the check's child process never inherits it. The
# holder writes its pid and run dir name into the file and a clean release
# truncates it, so a lock acquired with content still in it was left by a run that
# ended without releasing; :meth:`ckdn.store.Store.begin` says so in a note.

LOCKS = ".locks"
#: A holder record is one short line; never read more than this.
_HOLDER_BYTES = 4096
#: How long a refused run waits for the holder's record to be complete (seconds).
_SETTLE = 0.2


class Holder:
    """What a lock file says about the process that holds (or held) it, and its child."""

    __slots__ = ("child", "pid", "run_dir")

    def __init__(self, pid: int | None, run_dir: str | None,
                 child: dict[str, object] | None = None) -> None:
        self.pid = pid
        self.run_dir = run_dir
        self.child = child


def lock_path(runs_dir: str, check: str) -> str:
    return os.path.join(runs_dir, LOCKS, f"{check}.lock")


def open_lock(path: str) -> int:
    """The lock file's descriptor, made with its directory if need be; ``OSError`` if not."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # O_NOFOLLOW: a planted symlink must not make us truncate another file.
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
    return os.open(path, flags, 0o644)


def acquire(fd: int, check: str, runs_dir: str, shown: Callable[[str], str]) -> None:
    """Take ``check``'s lock on ``fd`` without waiting.

    Refused (one line) when another live process holds it, or when the file
    system cannot lock. ``shown`` turns a path into its one-line display form.
    """
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _held(check, _settled_holder(fd), runs_dir, shown) from None
    except OSError as exc:
        raise RefusedError(
            f"cannot lock {shown(lock_path(runs_dir, check))}: {os_reason(exc)}; the runs dir"
            " must be on a file system with flock support (set [run].runs_dir in ckdn.toml)"
        ) from exc


def _settled_holder(fd: int) -> Holder | None:
    """The busy lock's record, once the holder has had a moment to complete it.

    A holder writes its pid right after taking the lock and its run dir name
    right after making the dir. A run refused in between would read an empty or
    partial record and say "pid unknown"; the refusal is worth up to ``_SETTLE``
    seconds of waiting to name both. A holder that never completes it (stopped
    in between) is reported as it stands.
    """
    deadline = time.monotonic() + _SETTLE
    holder = read_holder(fd)
    while (holder is None or holder.pid is None or holder.run_dir is None) \
            and time.monotonic() < deadline:
        time.sleep(0.005)
        holder = read_holder(fd)
    return holder


def read_holder(fd: int) -> Holder | None:
    """The record in an open lock file; ``None`` for an empty (cleanly released) one."""
    data = os.pread(fd, _HOLDER_BYTES, 0)
    if not data.strip():
        return None
    import json  # here: json costs every run, and only a held or reclaimed lock is read

    try:
        doc = json.loads(data)
    except ValueError:
        return Holder(None, None)
    if not isinstance(doc, dict):
        return Holder(None, None)
    pid = doc.get("pid")
    run_dir = doc.get("run_dir")
    return Holder(
        pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        run_dir if isinstance(run_dir, str) and parse_name(run_dir) is not None else None,
        _child(doc.get("child")),
    )


def _child(value: object) -> dict[str, object] | None:
    """A child record as written: an object of plain strings and integers, else nothing."""
    if not isinstance(value, dict) or not value:
        return None
    for key, item in value.items():
        if not isinstance(key, str) or isinstance(item, bool) \
                or not isinstance(item, int | str):
            return None
    return value


def write_holder(fd: int, run_dir: str | None, child: dict[str, object] | None = None) -> None:
    """Write the record over the old one, then cut what is left of it: never empty meanwhile."""
    doc: dict[str, object] = {"pid": os.getpid()}
    if run_dir is not None:
        doc["run_dir"] = run_dir
    if child:
        doc["child"] = child
    data = canonical(doc) + b"\n"
    os.pwrite(fd, data, 0)
    os.ftruncate(fd, len(data))


def clear_holder(fd: int) -> None:
    """Empty the record: the mark of a clean release."""
    os.ftruncate(fd, 0)


def release(fd: int) -> None:
    """Clean release: clear the record, then drop the lock."""
    try:
        clear_holder(fd)
    finally:
        # Closing the only descriptor of this open file drops the flock.
        os.close(fd)


def take_if_free(runs_dir: str, check: str) -> int | None:
    """``check``'s lock taken, if it exists and nobody holds it (the descriptor: closing it
    drops the lock); None when it is held, missing or cannot be locked."""
    if check.startswith(".") or "/" in check:
        return None
    try:
        fd = os.open(lock_path(runs_dir, check), os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def holding(runs_dir: str, check: str) -> list[str]:
    """The run dir a holder of ``check``'s lock is writing, if its record names one."""
    if check.startswith(".") or "/" in check:
        return []
    try:
        fd = os.open(lock_path(runs_dir, check), os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:  # no lock file: an alias, or a check that never ran here
        return []
    try:
        holder = read_holder(fd)
    finally:
        os.close(fd)
    return [] if holder is None or holder.run_dir is None else [holder.run_dir]


def reclaimed_note(check: str, holder: Holder, runs_dir: str, shown: Callable[[str], str],
                   finished: Callable[[str], bool]) -> str:
    """The note a run carries when it took over a lock its holder never released."""
    who = "a previous run" if holder.pid is None else f"pid {holder.pid}"
    head = f"reclaimed the lock of check {quote(check)}: {who} ended without releasing it"
    if holder.run_dir is None:
        return f"{head} before creating its run dir"
    run_dir = os.path.join(runs_dir, holder.run_dir)
    state = "finished" if finished(run_dir) else "left unfinished"
    return f"{head}; its run dir {shown(run_dir)} was {state}"


def _held(check: str, holder: Holder | None, runs_dir: str,
          shown: Callable[[str], str]) -> BusyError:
    pid = "pid unknown" if holder is None or holder.pid is None else f"pid {holder.pid}"
    if holder is None or holder.run_dir is None:
        where = "run dir not created yet"
    else:
        where = f"run dir {shown(os.path.join(runs_dir, holder.run_dir))}"
    return BusyError(
        f"check {quote(check)} is already running ({pid}, {where});"
        " wait for it to finish or stop that process"
    )


#: In an unfinished run dir: its ckdn died holding the lock (``ckdn gc`` collects it).
ABANDONED = ".abandoned"


def mark_abandoned(run_dir: str, kind_of: Callable[[str], str]) -> None:
    """Mark the unfinished run dir of a holder that died, for ``ckdn gc``."""
    if kind_of(run_dir) != "unfinished":
        return
    try:  # noqa: SIM105 - contextlib is not imported on the run path
        os.close(os.open(os.path.join(run_dir, ABANDONED),
                         os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
    except OSError:
        pass  # gone, or not ours: gc then leaves it, as before
