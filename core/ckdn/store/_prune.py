"""Pruning: keeping ``keep`` finished runs per check, and never anything else.

Unfinished runs are never touched (a run without ``digest.json`` may still be
running), nor the run ``latest``/``LATEST`` points at, nor the run a live
holder of the check's lock is writing. A run is renamed to a dot-entry before
it is deleted, so a half-deleted run (its digest gone first) is never listed as
an unfinished one; ``gc`` sweeps what an interrupted prune left behind.
"""

from __future__ import annotations

import os

from ckdn.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from ckdn.store._reading import RunInfo

TRASH_PREFIX = ".pruning."


def validate_keep(keep: int) -> None:
    if keep < 0:
        raise UsageError(f"keep must be 0 or more, got {keep}; pass --keep N with N >= 0")


class Pruner:
    """Deletes runs of one runs dir; ``unremovable`` turns an OS failure into a refusal."""

    def __init__(self, runs_dir: str, unremovable: Callable[[str, OSError], Exception]) -> None:
        self.runs_dir = runs_dir
        self.unremovable = unremovable

    def prune_group(self, group: Iterable[RunInfo], keep: int, protected: set[str]) -> list[str]:
        """Remove all but the ``keep`` newest finished runs of ``group`` (newest first)."""
        finished = [info for info in group if info.finished]
        removed: list[str] = []
        for info in finished[keep:]:
            if info.name in protected:
                continue
            if self._remove_run(info):
                removed.append(info.path)
        return removed

    def _remove_run(self, info: RunInfo) -> bool:
        """False if someone else removed it first."""
        trash = os.path.join(self.runs_dir, f"{TRASH_PREFIX}{info.name}.{os.urandom(4).hex()}")
        try:
            os.rename(info.path, trash)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise self.unremovable(info.path, exc) from exc
        from ckdn._lite.rmtree import rmtree  # lazy: most runs prune nothing

        try:
            rmtree(trash)
        except OSError as exc:
            raise self.unremovable(info.path, exc) from exc
        return True

    def sweep_trash(self) -> None:
        try:
            names = os.listdir(self.runs_dir)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise self.unremovable(self.runs_dir, exc) from exc
        from ckdn._lite.rmtree import rmtree

        for name in names:
            if name.startswith(TRASH_PREFIX):
                try:
                    rmtree(os.path.join(self.runs_dir, name))
                except OSError as exc:
                    raise self.unremovable(os.path.join(self.runs_dir, name), exc) from exc
