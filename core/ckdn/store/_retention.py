"""Retention beyond ``keep``: finished runs older than ``max_age_days``, and the oldest
finished runs while all of them together take more than ``max_bytes``.

Applied across the whole runs dir (every check and alias), by the prune after each
run and by ``ckdn gc``. What is never touched is what ``keep`` never touches: an
unfinished run (it may still be running), the run ``latest``/``LATEST`` names, the
run a live holder of a check's lock is writing. A run's age is its name's UTC
stamp (no ``stat``); its size is what its files take (``lstat``, links not
followed). Loaded only when a limit is set, or by ``gc``.
"""

from __future__ import annotations

import os
import time

from ckdn.store._names import TIMESTAMP, parse_name
from ckdn.store._runlock import ABANDONED, clear_holder, read_holder, take_if_free

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from ckdn.store._reading import RunInfo
    from ckdn.store._store import Pruner

__all__ = ["collect", "collect_dead", "expired", "run_bytes", "sweep_trash"]

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
                 dry_run: bool = False) -> list[str]:
    """Remove the dead runs: of a check whose lock nobody holds (no run of it is going),
    the unfinished run the lock's record names (its ckdn was killed holding the lock;
    ``stop_tree`` first stops what the record names of its tree, and the record is
    cleared) and the unfinished runs marked :data:`ABANDONED` (the run that reclaimed
    the lock found them so). An unfinished run released cleanly (a host's) and an alias
    run (no lock of its own) are left as they are. The removed paths (``dry_run``: what
    would go)."""
    groups: dict[str, list[RunInfo]] = {}
    for info in runs:
        if not info.finished:
            groups.setdefault(info.check, []).append(info)
    removed: list[str] = []
    for check in sorted(groups):
        fd = take_if_free(pruner.runs_dir, check)
        if fd is None:
            continue  # running (or no lock: an alias, a check that never ran here)
        try:
            holder = read_holder(fd)
            named = None if holder is None else holder.run_dir
            dead = [info for info in groups[check] if info.name == named
                    or os.path.lexists(os.path.join(info.path, ABANDONED))]
            if dry_run or not dead:
                removed.extend(info.path for info in dead)
                continue
            if holder is not None and holder.child and stop_tree is not None:
                stop_tree(holder.child)
            removed.extend(info.path for info in dead if pruner.remove_run(info))
            if holder is not None:
                clear_holder(fd)
        finally:
            os.close(fd)
    return removed


def sweep_trash(pruner: Pruner) -> None:
    """Remove what an interrupted prune left behind (its ``.pruning.*`` entries)."""
    from ckdn.store._store import TRASH_PREFIX

    try:
        names = os.listdir(pruner.runs_dir)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise pruner.unremovable(pruner.runs_dir, exc) from exc
    from ckdn._lite.rmtree import rmtree

    for name in names:
        if name.startswith(TRASH_PREFIX):
            try:
                rmtree(os.path.join(pruner.runs_dir, name))
            except OSError as exc:
                raise pruner.unremovable(os.path.join(pruner.runs_dir, name), exc) from exc
