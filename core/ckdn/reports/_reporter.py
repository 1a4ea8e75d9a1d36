"""The report family's protocol: a format turns one :class:`Report` into the text one place reads.

A format is one module with a :class:`Reporter` and one row in the table of formats
(:mod:`ckdn.reports._formats`); it is pure, deterministic, bounded by its place's limits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ckdn.reports._model import Report

__all__ = ["AnnotationLedger", "Rendering", "Reporter"]


class AnnotationLedger(Protocol):
    """What a CI job has spent of its annotations so far, kept outside the report (a file)."""

    def used(self, step: str) -> tuple[int, dict[str, int]]:
        """Annotations the job used in all, and those of ``step`` by level."""

    def spend(self, step: str, counts: dict[str, int]) -> None:
        """Count ``counts`` (annotations by level) against the job and ``step``."""


@dataclass(frozen=True)
class Rendering:
    """How a report is rendered: colours (text), the byte budget (summary), the job's
    annotation ledger and step (github); a format reads what concerns it."""

    color: bool = False
    summary_budget: int | None = None
    ledger: AnnotationLedger | None = None
    step: str = ""


class Reporter(Protocol):
    """One format: ``report`` as the text its place reads."""

    def __call__(self, report: Report, rendering: Rendering, /) -> str: ...
