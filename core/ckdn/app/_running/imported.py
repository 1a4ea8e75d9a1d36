"""What the steps after the read know of an imported run (no process ran): apart from
:mod:`ckdn.app._running.importing` so a merge of imported shards carries the same marks
without loading an importer."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ckdn.documents.types import ImportedFacts
    from ckdn.parsers.base import Finding

__all__ = ["ImportedRun"]


class ImportedRun:
    """An import's marks: the digest's ``origin`` and ``import_summary``, the counts the
    status is decided on (:func:`ckdn.reconcile.reconcile_import`), and ``every``: the
    evidence read again for all its findings (``findings.jsonl`` beyond the digest's top)."""

    __slots__ = ("cases", "every", "facts", "mismatch")

    def __init__(self, facts: ImportedFacts, *, cases: int, mismatch: str | None,
                 every: Callable[[], Sequence[Finding]]) -> None:
        self.facts = facts
        self.cases = cases
        self.mismatch = mismatch
        self.every = every
