"""Run directories: creating them, ``latest``/``LATEST``, listing, safe resolution
of a run reference, and pruning.

Naming is :mod:`ckdn.runname`: ``<UTC stamp>[.<seq>]-<check>``. The directory is
made with ``os.mkdir``, which fails rather than reuse a name, so two processes can
never share one. Each check's runs are serialized by its kernel lock,
:mod:`ckdn.runlock`; a lock reclaimed from a run that died holding it is reported
in :attr:`RunDir.notes`.

Dot-prefixed entries (``.locks``, temp files, runs being pruned) are
bookkeeping, and ``latest``/``LATEST`` are pointers: none of them is ever a run.
A run reference from a user is resolved through ``realpath`` and must land on a
run dir directly inside the runs dir, so no reference can escape it.
"""

from __future__ import annotations

import os
import time

from ckdn import runlock
from ckdn._record import Record, record
from ckdn.errors import RefusedError, UsageError
from ckdn.runname import (
    TIMESTAMP,
    check_of,
    one_line,
    os_reason,
    parse_name,
    quote,
    run_name,
    shown_path,
    validate_label,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from types import TracebackType

__all__ = ["FINISHED_MARKERS", "RunDir", "RunInfo", "Store", "check_of"]

_LATEST_LINK = "latest"
_LATEST_FILE = "LATEST"
_TRASH_PREFIX = ".pruning."
_DIGEST = "digest.json"
_AGGREGATE = "aggregate.json"
#: Marker file -> RunInfo.kind; the first present wins.
FINISHED_MARKERS = ((_DIGEST, "digest"), (_AGGREGATE, "aggregate"))
#: LATEST holds one short line; never read more than this.
_SMALL_READ = 4096
#: The run-name parser under its former name here, which tests/core/test_startup.py reads.
_parse = parse_name


@record
class RunInfo(Record):
    __slots__ = ("check", "finished", "kind", "name", "path")
    name: str
    path: str
    check: str
    finished: bool
    kind: str  # "digest" | "aggregate" | "unfinished"

    def __init__(self, name: str, path: str, check: str, finished: bool, kind: str) -> None:
        self._assign(name, path, check, finished, kind)


def _validate_keep(keep: int) -> None:
    if keep < 0:
        raise UsageError(f"keep must be 0 or more, got {keep}; pass --keep N with N >= 0")


class RunDir:
    """One run being written; holds its check's lock until released.

    Use it as a context manager: leaving the block truncates the lock file (the
    clean-release mark) and closes the descriptor, which drops the lock.
    """

    def __init__(self, path: str, check: str, fd: int, notes: list[str]) -> None:
        self.path = path
        self.name = os.path.basename(path)
        self.check = check
        self.notes = notes
        self._fd: int | None = fd

    def __enter__(self) -> RunDir:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    @property
    def locked(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Clean release; idempotent."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        runlock.release(fd)

    def __repr__(self) -> str:
        state = "locked" if self.locked else "released"
        return f"RunDir({self.path!r}, {state})"


class Store:
    """Every run of one project: the runs dir and what lives in it.

    ``clock`` returns seconds since the epoch; tests pass a fixed one to make
    several runs fall in one second. ``durable`` fsyncs each document before it
    is renamed into place: ``digest.json`` is the finished marker, and after a
    power cut a new file renamed without fsync can survive empty on ext4 and
    XFS, which would read as a finished run with no digest. A flush per
    document, a few per run, is small beside running any tool.
    """

    def __init__(
        self,
        runs_dir: str | os.PathLike[str],
        cwd: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        durable: bool = True,
    ) -> None:
        self.cwd = os.path.abspath(cwd)  # normalised too
        self.runs_dir = os.path.normpath(os.path.join(self.cwd, runs_dir))
        self.durable = durable
        self._clock = clock

    # -- paths -----------------------------------------------------------------

    def display(self, path: str | os.PathLike[str]) -> str:
        """``path`` as a digest shows it: cwd-relative when under cwd, else absolute."""
        return shown_path(os.path.normpath(os.path.join(self.cwd, path)), self.cwd)

    def _shown(self, path: str | os.PathLike[str]) -> str:
        return one_line(self.display(path))

    # -- creating runs ---------------------------------------------------------

    def begin(self, check: str) -> RunDir:
        """Take ``check``'s lock and create its run dir.

        Refused (one line) when another live process holds the lock or the runs
        dir cannot be written.
        """
        validate_label(check)
        self._ensure_runs_dir()
        try:
            fd = runlock.open_lock(runlock.lock_path(self.runs_dir, check))
        except OSError as exc:
            raise self._unwritable(exc) from exc
        try:
            return self._begin_locked(check, fd)
        except BaseException:
            os.close(fd)
            raise

    def _begin_locked(self, check: str, fd: int) -> RunDir:
        runlock.acquire(fd, check, self.runs_dir, self._shown)
        try:
            previous = runlock.read_holder(fd)
            notes = [] if previous is None else [runlock.reclaimed_note(
                check, previous, self.runs_dir, self._shown,
                lambda run_dir: self._kind(run_dir) != "unfinished")]
            runlock.write_holder(fd, None)
            path = self._make_unique_dir(check)
            runlock.write_holder(fd, os.path.basename(path))
        except OSError as exc:
            runlock.clear_holder(fd)
            raise self._unwritable(exc) from exc
        except BaseException:
            runlock.clear_holder(fd)
            raise
        return RunDir(path, check, fd, notes)

    def new_dir(self, name: str) -> str:
        """A fresh uniquely named run dir, without a lock (alias aggregates)."""
        validate_label(name)
        self._ensure_runs_dir()
        try:
            return self._make_unique_dir(name)
        except OSError as exc:
            raise self._unwritable(exc) from exc

    def _ensure_runs_dir(self) -> None:
        try:
            os.makedirs(self.runs_dir, exist_ok=True)
        except OSError as exc:
            raise self._unwritable(exc) from exc

    def _make_unique_dir(self, label: str) -> str:
        stamp = time.strftime(TIMESTAMP, time.gmtime(self._clock()))
        seq = self._next_seq(stamp, label)
        while True:
            path = os.path.join(self.runs_dir, run_name(stamp, seq, label))
            try:
                os.mkdir(path)
            except FileExistsError:
                seq += 1
                continue
            return path

    def _next_seq(self, stamp: str, label: str) -> int:
        highest = -1
        for name in os.listdir(self.runs_dir):
            if not name.startswith(stamp):
                continue
            parsed = parse_name(name)
            if parsed is not None and parsed[0] == stamp and parsed[2] == label:
                highest = max(highest, parsed[1])
        return highest + 1

    def _unwritable(self, exc: OSError) -> RefusedError:
        named = exc.filename is not None and os.path.normpath(exc.filename) != self.runs_dir
        where = f"{self._shown(exc.filename)}: " if named else ""
        return RefusedError(
            f"runs dir {self._shown(self.runs_dir)} is not writable: {where}{os_reason(exc)};"
            " make it a writable directory or set [run].runs_dir in ckdn.toml"
        )

    # -- writing ---------------------------------------------------------------

    def write_atomic(self, path: str, data: bytes) -> None:
        """Replace ``path`` with ``data`` so a reader sees the old file or the new one.

        The temp file is a dot-entry in the same directory (``os.replace`` must
        not cross file systems), so it is never read as evidence and never left
        behind on failure. It is fsynced first when the store is ``durable``.
        """
        folder, name = os.path.split(path)
        tmp = os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        created = False
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
            created = True
            with open(fd, "wb") as handle:
                handle.write(data)
                if self.durable:
                    handle.flush()
                    os.fsync(handle.fileno())
            os.replace(tmp, path)
            created = False
        except OSError as exc:
            raise RefusedError(
                f"cannot write {self._shown(path)}: {os_reason(exc)}; free space or fix"
                " permissions in the runs dir"
            ) from exc
        finally:
            if created:
                os.unlink(tmp)

    def publish(self, run_dir: str) -> None:
        """Point ``latest`` at ``run_dir`` atomically, or write ``LATEST`` where
        symlinks are unavailable.

        A ``LATEST`` left from a time symlinks failed is removed once one works;
        a ``latest`` left from a time they worked is removed when falling back,
        so the two never disagree about the newest run.
        """
        parent, name = os.path.split(run_dir)
        if parent != self.runs_dir or parse_name(name) is None:
            raise ValueError(f"{run_dir} is not a run dir of {self.runs_dir}")
        link = os.path.join(self.runs_dir, _LATEST_LINK)
        marker = os.path.join(self.runs_dir, _LATEST_FILE)
        tmp = os.path.join(self.runs_dir,
                           f".{_LATEST_LINK}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            if self._swap_symlink(name, tmp, link):
                _unlink_missing_ok(marker)
            else:
                self.write_atomic(marker, name.encode("utf-8", "surrogateescape") + b"\n")
                if os.path.islink(link):
                    os.unlink(link)
        except OSError as exc:
            raise RefusedError(
                f"cannot publish {self._shown(run_dir)} as latest: {os_reason(exc)};"
                f" fix permissions in {self._shown(self.runs_dir)}"
            ) from exc

    @staticmethod
    def _swap_symlink(name: str, tmp: str, link: str) -> bool:
        """True when ``link`` now points at ``name``; False when symlinks are unavailable."""
        try:
            os.symlink(name, tmp)
        except (OSError, NotImplementedError):
            return False
        try:
            os.replace(tmp, link)
        except OSError:
            # e.g. a real directory named `latest` is in the way: fall back, leave it.
            os.unlink(tmp)
            return False
        return True

    # -- reading ---------------------------------------------------------------

    def runs(self, check: str | None = None) -> list[RunInfo]:
        """Every run dir (or every one of ``check``), newest first.

        Naming ``check`` filters by name before anything is looked up on disk: a
        prune after each run must not pay for every other check's runs.
        """
        found: list[RunInfo] = []
        order: dict[str, tuple[str, int, int, str]] = {}
        try:
            listing = os.scandir(self.runs_dir)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise RefusedError(
                f"cannot read runs dir {self._shown(self.runs_dir)}: {os_reason(exc)};"
                " make it a readable directory or set [run].runs_dir in ckdn.toml"
            ) from exc
        with listing as entries:
            for entry in entries:
                parsed = parse_name(entry.name)
                # is_dir() treats an entry pruned meanwhile as absent rather than raising.
                if parsed is None or (check is not None and parsed[2] != check) \
                        or not entry.is_dir(follow_symlinks=False):
                    continue
                path = os.path.join(self.runs_dir, entry.name)
                kind = self._kind(path)
                try:
                    # Runs of different checks in the same second: the one sealed last
                    # (its digest renamed in last) is the newest.
                    mtime = entry.stat(follow_symlinks=False).st_mtime_ns
                except OSError:
                    mtime = 0
                found.append(RunInfo(entry.name, path, parsed[2], kind != "unfinished", kind))
                order[entry.name] = (parsed[0], mtime, parsed[1], entry.name)
        found.sort(key=lambda info: order[info.name], reverse=True)
        return found

    @staticmethod
    def _kind(path: str) -> str:
        for marker, kind in FINISHED_MARKERS:
            if os.path.isfile(os.path.join(path, marker)):
                return kind
        return "unfinished"

    def resolve(self, ref: str | None, *, name_only: bool = False) -> str:
        """The run dir ``ref`` names, never anything outside the runs dir.

        ``None`` (or ``latest``) is the ``latest`` symlink, else the ``LATEST``
        marker, else the newest finished run. Otherwise ``ref`` is a run dir
        name, or (unless ``name_only``, as for MCP run ids) a path relative to
        cwd or absolute that must land, after following symlinks, on a run dir
        directly inside the runs dir.
        """
        if ref is None or ref in (_LATEST_LINK, _LATEST_FILE):
            return self._latest()
        try:
            return self._resolve_ref(ref, name_only=name_only)
        except (OSError, ValueError) as exc:  # e.g. a NUL byte or an over-long path
            raise UsageError(
                f"run reference {quote(ref)} cannot be read: {one_line(str(exc))};"
                " pass a run dir name from `ckdn list`"
            ) from exc

    def _resolve_ref(self, ref: str, *, name_only: bool) -> str:
        is_name = "/" not in ref and (os.altsep is None or os.altsep not in ref)
        if not ref or (is_name and ref.startswith(".")):
            raise UsageError(
                f"run reference {quote(ref)} is not a run; pass a run dir name from `ckdn list`"
            )
        if is_name:
            candidate = os.path.join(self.runs_dir, ref)
        elif name_only:
            raise UsageError(
                f"run reference {quote(ref)} is a path; pass a run dir name from `ckdn list`"
            )
        else:
            candidate = os.path.join(self.cwd, ref)
        parent, name = os.path.split(os.path.realpath(candidate))
        if parent != os.path.realpath(self.runs_dir):
            raise UsageError(
                f"run reference {quote(ref)} is outside the runs dir"
                f" {self._shown(self.runs_dir)}; pass a run dir name from `ckdn list`"
            )
        if parse_name(name) is None or not os.path.isdir(os.path.join(parent, name)):
            raise UsageError(
                f"no run {quote(ref)} in {self._shown(self.runs_dir)};"
                " `ckdn list` shows the stored runs"
            )
        return os.path.join(self.runs_dir, name)

    def _contained(self, name: str) -> str | None:
        """``runs_dir/name`` when that is (or links to) a run dir inside the runs dir."""
        if "/" in name or "\0" in name or parse_name(name) is None:
            return None
        parent, real = os.path.split(os.path.realpath(os.path.join(self.runs_dir, name)))
        if parent != os.path.realpath(self.runs_dir) or parse_name(real) is None:
            return None
        if not os.path.isdir(os.path.join(parent, real)):
            return None
        return os.path.join(self.runs_dir, real)

    def _published(self) -> list[str]:
        """Names ``latest`` and ``LATEST`` point at, in that order of precedence."""
        names: list[str] = []
        try:  # noqa: SIM105 - `ckdn run` does not import contextlib
            names.append(os.readlink(os.path.join(self.runs_dir, _LATEST_LINK)))
        except OSError:
            pass  # absent, or not a symlink: not published that way
        try:
            fd = os.open(os.path.join(self.runs_dir, _LATEST_FILE), os.O_RDONLY | os.O_CLOEXEC)
            try:
                data = os.pread(fd, _SMALL_READ, 0)
            finally:
                os.close(fd)
        except OSError:  # absent, unreadable or a directory: the symlink or a listing decides
            return names
        names.extend(data.decode("utf-8", "surrogateescape").splitlines()[:1])
        return names

    def _latest(self) -> str:
        for name in self._published():
            found = self._contained(name)
            if found is not None:
                return found
        for info in self.runs():
            if info.finished:
                return info.path
        raise UsageError(
            f"no finished run in {self._shown(self.runs_dir)} yet;"
            " start one with `ckdn run <check>`"
        )

    # -- pruning ---------------------------------------------------------------

    def prune(self, check: str, keep: int, *, holding: RunDir | None = None) -> list[str]:
        """Delete all but the ``keep`` newest finished runs of ``check``.

        Unfinished runs are never touched, nor the run ``latest``/``LATEST``
        points at, nor the run a live holder of the check's lock is writing
        (it may have its digest but not yet its meta). A caller ``holding`` the
        lock says so, and the lock's record is not read back.
        """
        _validate_keep(keep)
        group = self.runs(check)
        writing = ([holding.name] if holding is not None and holding.check == check
                   else runlock.holding(self.runs_dir, check))
        protected = {*self._published(), *writing}
        return self._prune_group(group, keep, protected)

    def gc(self, keep: int) -> list[str]:
        """:meth:`prune` every check and alias found on disk, then sweep what an
        interrupted prune left behind."""
        _validate_keep(keep)
        groups: dict[str, list[RunInfo]] = {}
        for info in self.runs():
            groups.setdefault(info.check, []).append(info)
        published = set(self._published())
        removed: list[str] = []
        for check in sorted(groups):
            protected = published | set(runlock.holding(self.runs_dir, check))
            removed.extend(self._prune_group(groups[check], keep, protected))
        self._sweep_trash()
        return removed

    def _prune_group(self, group: Iterable[RunInfo], keep: int, protected: set[str]) -> list[str]:
        finished = [info for info in group if info.finished]
        removed: list[str] = []
        for info in finished[keep:]:
            if info.name in protected:
                continue
            if self._remove_run(info):
                removed.append(info.path)
        return removed

    def _remove_run(self, info: RunInfo) -> bool:
        """Rename to a dot-entry first, so a half-deleted run (say its digest gone
        first) is never listed as an unfinished run; False if someone else got
        there first."""
        trash = os.path.join(self.runs_dir, f"{_TRASH_PREFIX}{info.name}.{os.urandom(4).hex()}")
        try:
            os.rename(info.path, trash)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise self._unremovable(info.path, exc) from exc
        from ckdn.removal import rmtree  # lazy: most runs prune nothing

        try:
            rmtree(trash)
        except OSError as exc:
            raise self._unremovable(info.path, exc) from exc
        return True

    def _sweep_trash(self) -> None:
        try:
            names = os.listdir(self.runs_dir)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise self._unremovable(self.runs_dir, exc) from exc
        from ckdn.removal import rmtree

        for name in names:
            if name.startswith(_TRASH_PREFIX):
                try:
                    rmtree(os.path.join(self.runs_dir, name))
                except OSError as exc:
                    raise self._unremovable(os.path.join(self.runs_dir, name), exc) from exc

    def _unremovable(self, path: str, exc: OSError) -> RefusedError:
        return RefusedError(
            f"cannot remove {self._shown(path)}: {os_reason(exc)};"
            f" fix permissions in {self._shown(self.runs_dir)}"
        )


def _unlink_missing_ok(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
