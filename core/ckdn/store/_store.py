"""The store of one project: its runs dir, and every way a run enters and leaves it."""

from __future__ import annotations

import os
import time

from ckdn._lite.rmtree import rmtree
from ckdn.errors import RefusedError, UsageError, one_line, os_reason
from ckdn.store import _publish, _runlock
from ckdn.store._names import TIMESTAMP, parse_name, run_name, shown_path, validate_label
from ckdn.store._reading import Resolver, RunInfo, kind_of, list_runs, names_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from types import TracebackType

# A run dir is ``<runs_dir>/<UTC stamp>[.<seq>]-<check>`` (``_names``), made with
# ``os.mkdir``, which fails rather than reuse a name, so two processes can never
# share one. Each check's runs are serialized by its kernel lock (``_runlock``); a
# lock reclaimed from a run that died holding it is reported in
# :attr:`RunDir.notes`. Documents are written atomically and ``latest`` swapped
# atomically (``_publish``); listing and references are ``_reading``. Pruning,
# at the end of this module, keeps ``keep`` finished runs per check and never anything
# else: unfinished runs are never touched (a run without ``digest.json`` may still be
# running), nor the run ``latest``/``LATEST`` points at, nor the run a live holder of
# the check's lock is writing. A run is renamed to a dot-entry before it is deleted,
# so a half-deleted run (its digest gone first) is never listed as an unfinished one;
# ``gc`` sweeps what an interrupted prune left behind. :class:`Store` is the one entry point, and
# turns every OS failure into a one-line :class:`~ckdn.errors.RefusedError` that
# says which path and how to fix it.


class RunDir:
    """One run being written; holds its check's lock until released.

    Use it as a context manager: leaving the block truncates the lock file (the
    clean-release mark) and closes the descriptor, which drops the lock.
    """

    def __init__(self, path: str, check: str, fd: int, notes: list[str],
                 left_running: dict[str, object] | None = None) -> None:
        self.path = path
        self.name = os.path.basename(path)
        self.check = check
        self.notes = notes
        #: The process tree a run that died holding the lock named (its child record).
        self.left_running = left_running
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

    def record_child(self, child: dict[str, object]) -> None:
        """Name the check's running process tree in the lock record (``child``), so a run
        that reclaims the lock after this one died can stop it. Best effort: a record that
        cannot be written costs only that clean-up."""
        if self._fd is not None:
            try:  # noqa: SIM105 - contextlib is not imported on the run path
                _runlock.write_holder(self._fd, self.name, child)
            except OSError:
                pass

    def release(self) -> None:
        """Clean release; idempotent."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        _runlock.release(fd)

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
    document, a few per run, is small beside running any tool. ``private`` makes
    the runs dir, the run dirs and the documents owner-only (0700, 0600).
    """

    def __init__(
        self,
        runs_dir: str | os.PathLike[str],
        cwd: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        durable: bool = True,
        private: bool = True,
    ) -> None:
        self.cwd = os.path.abspath(cwd)  # normalised too
        self.runs_dir = os.path.normpath(os.path.join(self.cwd, runs_dir))
        self.durable = durable
        #: Owner-only: the runs dir and every run dir 0700, documents 0600.
        self.private = private
        self._clock = clock

    # -- paths -----------------------------------------------------------------

    def display(self, path: str | os.PathLike[str]) -> str:
        """``path`` as a digest shows it: cwd-relative when under cwd, else absolute."""
        return shown_path(os.path.normpath(os.path.join(self.cwd, path)), self.cwd)

    def _shown(self, path: str) -> str:
        """:meth:`display` on one line, for notes (a refusal's message is made one line anyway)."""
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
            fd = _runlock.open_lock(_runlock.lock_path(self.runs_dir, check))
        except OSError as exc:
            raise self._unwritable(exc) from exc
        try:
            return self._begin_locked(check, fd)
        except BaseException:
            os.close(fd)
            raise

    def _begin_locked(self, check: str, fd: int) -> RunDir:
        _runlock.acquire(fd, check, self.runs_dir, self._shown)
        try:
            previous = _runlock.read_holder(fd)
            notes = [] if previous is None else [_runlock.reclaimed_note(
                check, previous, self.runs_dir, self._shown,
                lambda run_dir: kind_of(run_dir) != "unfinished")]
            if previous is not None and previous.run_dir is not None:
                _runlock.mark_abandoned(os.path.join(self.runs_dir, previous.run_dir),
                                        kind_of)
            _runlock.write_holder(fd, None)
            path = self._make_unique_dir(check)
            _runlock.write_holder(fd, os.path.basename(path))
        except OSError as exc:
            _runlock.clear_holder(fd)
            raise self._unwritable(exc) from exc
        except BaseException:
            _runlock.clear_holder(fd)
            raise
        return RunDir(path, check, fd, notes, None if previous is None else previous.child)

    def abandon(self, run_dir: str) -> None:
        """Remove ``run_dir`` if it is still empty (an alias run refused before it ran)."""
        try:  # noqa: SIM105 - contextlib is not imported on the run path
            os.rmdir(run_dir)
        except OSError:
            pass  # not empty, or gone: left as it is (unfinished), never half removed

    def new_dir(self, name: str) -> str:
        """A fresh uniquely named run dir, without a lock (alias aggregates)."""
        validate_label(name)
        self._ensure_runs_dir()
        try:
            return self._make_unique_dir(name)
        except OSError as exc:
            raise self._unwritable(exc) from exc

    def _ensure_runs_dir(self) -> None:
        """The runs dir, made on first use (with its ``.gitignore``); refused when its
        ``.locks`` is a symlink: lock files are never made through one."""
        try:
            _publish.make_runs_dir(self.runs_dir, 0o700 if self.private else 0o777)
        except OSError as exc:
            raise self._unwritable(exc) from exc
        locks = os.path.join(self.runs_dir, _runlock.LOCKS)
        if os.path.islink(locks):
            raise RefusedError(
                f"runs dir {self.display(self.runs_dir)} is not usable: {self.display(locks)}"
                " is a symlink, and ckdn makes lock files only in a real directory there;"
                " remove the symlink"
            )

    def _make_unique_dir(self, label: str) -> str:
        stamp = time.strftime(TIMESTAMP, time.gmtime(self._clock()))
        seq = self._next_seq(stamp, label)
        while True:
            path = os.path.join(self.runs_dir, run_name(stamp, seq, label))
            try:
                os.mkdir(path, 0o700 if self.private else 0o777)
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
        where = f"{self.display(exc.filename)}: " if named else ""
        return RefusedError(
            f"runs dir {self.display(self.runs_dir)} is not writable: {where}{os_reason(exc)};"
            " make it a writable directory or set [run].runs_dir in ckdn.toml"
        )

    # -- writing ---------------------------------------------------------------

    def write_atomic(self, path: str, data: bytes | Iterable[bytes]) -> None:
        """Replace ``path`` with ``data`` atomically (fsynced when ``durable``); refused
        in one line when it cannot be written."""
        try:
            _publish.write_atomic(path, data, durable=self.durable,
                                  mode=0o600 if self.private else 0o644)
        except OSError as exc:
            raise RefusedError(
                f"cannot write {self.display(path)}: {os_reason(exc)}; free space or fix"
                " permissions in the runs dir"
            ) from exc

    def publish(self, run_dir: str) -> None:
        """Point ``latest`` (or ``LATEST`` where symlinks fail) at ``run_dir`` atomically."""
        try:
            _publish.publish(self.runs_dir, run_dir, durable=self.durable)
        except OSError as exc:
            raise RefusedError(
                f"cannot publish {self.display(run_dir)} as latest: {os_reason(exc)};"
                f" fix permissions in {self.display(self.runs_dir)}"
            ) from exc

    # -- reading ---------------------------------------------------------------

    def runs(self, check: str | None = None) -> list[RunInfo]:
        """Every run dir (or every one of ``check``), newest first."""
        try:
            return list_runs(self.runs_dir, check)
        except OSError as exc:
            raise self._unreadable(exc) from exc

    def run_names(self, check: str) -> list[str]:
        """The run dir names of ``check``, newest first, by name alone (its lock serializes
        its runs): what a dir's mtime says, which any write into it changes, is not asked."""
        try:
            return names_of(self.runs_dir, check)
        except OSError as exc:
            raise self._unreadable(exc) from exc

    def _unreadable(self, exc: OSError) -> RefusedError:
        return RefusedError(
            f"cannot read runs dir {self.display(self.runs_dir)}: {os_reason(exc)};"
            " make it a readable directory or set [run].runs_dir in ckdn.toml"
        )

    def resolve(self, ref: str | None, *, name_only: bool = False) -> str:
        """The run dir ``ref`` names (None: the latest), never anything outside the runs dir."""
        return Resolver(self.runs_dir, self.cwd, self.display, self.runs).resolve(
            ref, name_only=name_only)

    # -- pruning ---------------------------------------------------------------

    def prune(self, check: str, keep: int, *, holding: RunDir | None = None,
              max_age_days: float | None = None, max_bytes: int | None = None) -> list[str]:
        """Delete all but the ``keep`` newest finished runs of ``check``, then apply the
        runs dir's retention limits (``max_age_days``, ``max_bytes``; :func:`collect`).

        Every run does this, so it reads as little as it can: the check's run dir
        names only (nothing when there are no more than ``keep``), and whether
        each is finished. A caller ``holding`` the check's lock says so, and its
        record is not read back.
        """
        validate_keep(keep)
        removed = [] if keep == NEVER_PRUNE else self._prune_check(check, keep, holding)
        if max_age_days is not None or max_bytes is not None:
            removed.extend(collect(self.runs(), self._pruner(), NEVER_PRUNE, self._protect,
                                   max_age_days=max_age_days, max_bytes=max_bytes,
                                   holding=holding.name if holding is not None else None))
        return removed

    def _prune_check(self, check: str, keep: int, holding: RunDir | None) -> list[str]:
        try:
            names = names_of(self.runs_dir, check)
        except OSError as exc:
            raise self._unreadable(exc) from exc
        if len(names) <= keep:
            return []
        writing = ([holding.name] if holding is not None and holding.check == check
                   else _runlock.holding(self.runs_dir, check))
        protected = {*_publish.published(self.runs_dir), *writing}
        runs = (RunInfo(name, path, check, kind != "unfinished", kind)
                for name in names
                for path in (os.path.join(self.runs_dir, name),)
                for kind in (kind_of(path),))
        return self._pruner().prune_group(runs, keep, protected)

    def gc(self, keep: int, *, max_age_days: float | None = None,
           max_bytes: int | None = None, dry_run: bool = False,
           stop_tree: Callable[[dict[str, object]], object] | None = None) -> list[str]:
        """Collect the dead runs (:func:`collect_dead`), :meth:`prune` every check and alias
        found on disk (``keep``, then the limits), then sweep what an interrupted prune left
        behind; ``dry_run`` removes nothing and returns what would go."""
        validate_keep(keep)
        pruner = self._pruner()
        runs = self.runs()
        dead = collect_dead(runs, pruner, stop_tree, dry_run=dry_run,
                            latest=self._latest_of(runs))
        removed = dead + collect([info for info in runs if info.path not in dead], pruner,
                                 keep, self._protect, max_age_days=max_age_days,
                                 max_bytes=max_bytes, dry_run=dry_run)
        if not dry_run:
            sweep_trash(pruner)
        return removed

    def _latest_of(self, runs: list[RunInfo]) -> str | None:
        """The run ``latest`` answers (None: no run), from a listing already made."""
        try:
            return Resolver(self.runs_dir, self.cwd, self.display, lambda _check: runs).latest()
        except UsageError:
            return None

    def _protect(self, check: str) -> set[str]:
        """The runs of ``check`` no prune may remove: the published one, the one being written."""
        return {*_publish.published(self.runs_dir), *_runlock.holding(self.runs_dir, check)}

    def _pruner(self) -> Pruner:
        return Pruner(self.runs_dir, self._unremovable)

    def _unremovable(self, path: str, exc: OSError) -> RefusedError:
        return RefusedError(
            f"cannot remove {self.display(path)}: {os_reason(exc)};"
            f" fix permissions in {self.display(self.runs_dir)}"
        )


# -- pruning ----------------------------------------------------------------------------

TRASH_PREFIX = ".pruning."
#: ``[run].keep = 0``: the published meaning is "never prune", not "keep none".
NEVER_PRUNE = 0


def validate_keep(keep: int) -> None:
    if keep < 0:
        raise UsageError(f"keep must be 0 (never prune) or more, got {keep}")


class Pruner:
    """Deletes runs of one runs dir; ``unremovable`` turns an OS failure into a refusal."""

    def __init__(self, runs_dir: str, unremovable: Callable[[str, OSError], Exception]) -> None:
        self.runs_dir = runs_dir
        self.unremovable = unremovable

    def prune_group(self, group: Iterable[RunInfo], keep: int, protected: set[str], *,
                    dry_run: bool = False) -> list[str]:
        """Remove all but the ``keep`` newest finished runs of ``group`` (newest first)."""
        removed: list[str] = []
        kept = 0
        for info in group:
            if not info.finished:
                continue
            if kept < keep:
                kept += 1
            elif info.name not in protected and (dry_run or self.remove_run(info)):
                removed.append(info.path)
        return removed

    def remove_run(self, info: RunInfo) -> bool:
        """False if someone else removed it first."""
        trash = os.path.join(self.runs_dir, f"{TRASH_PREFIX}{info.name}.{os.urandom(4).hex()}")
        try:
            os.rename(info.path, trash)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise self.unremovable(info.path, exc) from exc
        try:
            rmtree(trash)
        except OSError as exc:
            raise self.unremovable(info.path, exc) from exc
        return True


# -- retention beyond keep: by age (the name's UTC stamp) and by bytes (lstat), across the
# runs dir; never an unfinished, published or held run -------------------------------------

_DAY = 86400.0


def run_bytes(path: str) -> int:
    """The bytes the files under ``path`` take (links counted as links)."""
    total = 0
    stack = [path]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    total += entry.stat(follow_symlinks=False).st_size
            except OSError:
                continue
    return total


def expired(runs: Sequence[RunInfo], protected: set[str], *, max_age_days: float | None,
            max_bytes: int | None, now: float | None = None,
            size: Callable[[str], int] = run_bytes) -> list[RunInfo]:
    """The finished, unprotected runs retention removes (``runs`` newest first), oldest first."""
    finished = [info for info in runs if info.finished]
    going: list[RunInfo] = []
    if max_age_days is not None:
        clock = time.time() if now is None else now
        cutoff = time.strftime(TIMESTAMP, time.gmtime(clock - max_age_days * _DAY))
        for info in finished:
            parsed = parse_name(info.name)
            if parsed is not None and parsed[0] < cutoff and info.name not in protected:
                going.append(info)
    if max_bytes is not None:
        left = [info for info in finished if info not in going]
        sizes = {info.name: size(info.path) for info in left}
        total = sum(sizes.values())
        for info in reversed(left):  # oldest first
            if total <= max_bytes:
                break
            if info.name in protected:
                continue
            going.append(info)
            total -= sizes[info.name]
    going.sort(key=lambda info: info.name)
    return going


def collect(runs: Sequence[RunInfo], pruner: Pruner, keep: int,
            protect: Callable[[str], set[str]], *, max_age_days: float | None,
            max_bytes: int | None, holding: str | None = None,
            dry_run: bool = False) -> list[str]:
    """Prune every group of ``runs`` (newest first) to ``keep`` (0: no count limit), then
    remove what the limits say; the removed paths (``dry_run``: what would go)."""
    groups: dict[str, list[RunInfo]] = {}
    for info in runs:
        groups.setdefault(info.check, []).append(info)
    protected: set[str] = set() if holding is None else {holding}
    for check in sorted(groups):
        protected |= protect(check)
    removed: list[str] = []
    if keep:
        for check in sorted(groups):
            removed.extend(pruner.prune_group(groups[check], keep, protected, dry_run=dry_run))
    if max_age_days is None and max_bytes is None:
        return removed
    gone = set(removed)
    left = [info for info in runs if info.path not in gone]
    for info in expired(left, protected, max_age_days=max_age_days, max_bytes=max_bytes):
        if dry_run or pruner.remove_run(info):
            removed.append(info.path)
    return removed


def collect_dead(runs: Iterable[RunInfo], pruner: Pruner,
                 stop_tree: Callable[[dict[str, object]], object] | None = None, *,
                 dry_run: bool = False, latest: str | None = None) -> list[str]:
    """Remove the dead runs: of a check whose lock nobody holds (no run of it is going),
    the unfinished run the lock's record names (its ckdn was killed holding the lock;
    ``stop_tree`` first stops what the record names of its tree, and the record is
    cleared) and the unfinished runs marked :data:`ABANDONED` (the run that reclaimed
    the lock found them so). An unfinished run released cleanly (a host's) and an alias
    run (no lock of its own) are left as they are. The dead run that is the ``latest``
    is stopped and marked but kept: removing it would make an older (green) run the
    latest; a later gc collects it once a newer run exists. The removed paths
    (``dry_run``: what would go)."""
    groups: dict[str, list[RunInfo]] = {}
    for info in runs:
        if not info.finished:
            groups.setdefault(info.check, []).append(info)
    removed: list[str] = []
    for check in sorted(groups):
        fd = _runlock.take_if_free(pruner.runs_dir, check)
        if fd is None:
            continue  # running (or no lock: an alias, a check that never ran here)
        try:
            holder = _runlock.read_holder(fd)
            named = None if holder is None else holder.run_dir
            dead = [info for info in groups[check] if info.name == named
                    or os.path.lexists(os.path.join(info.path, _runlock.ABANDONED))]
            going = [info for info in dead if info.path != latest]
            if dry_run or not dead:
                removed.extend(info.path for info in going)
                continue
            if holder is not None and holder.child and stop_tree is not None:
                stop_tree(holder.child)
            for info in dead:
                if info.path == latest:
                    _runlock.mark_abandoned(info.path, kind_of)
            removed.extend(info.path for info in going if pruner.remove_run(info))
            if holder is not None:
                _runlock.clear_holder(fd)
        finally:
            os.close(fd)
    return removed


def sweep_trash(pruner: Pruner) -> None:
    """Remove what an interrupted prune left behind (its ``.pruning.*`` entries)."""

    try:
        names = os.listdir(pruner.runs_dir)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise pruner.unremovable(pruner.runs_dir, exc) from exc

    for name in names:
        if name.startswith(TRASH_PREFIX):
            try:
                rmtree(os.path.join(pruner.runs_dir, name))
            except OSError as exc:
                raise pruner.unremovable(os.path.join(pruner.runs_dir, name), exc) from exc
