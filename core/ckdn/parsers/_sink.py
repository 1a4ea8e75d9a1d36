"""The sink a parser adds its findings to: the first ``top`` kept, all counted, all tapped.

Its own module, imported when a parser first asks for it: the generic parser, on
every green run's path, keeps no findings.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ckdn.parsers.base import Finding, ParseResult

__all__ = ["FindingSink"]


class FindingSink:
    """Keeps the first ``keep`` findings and counts all of them.

    A report with a million findings must cost constant memory: the digest shows
    at most ``top`` findings anyway, and ``findings_total`` keeps the real count.
    ``tap`` (the context's, :meth:`ParseContext.sink`) is handed every finding as it
    is added: the run fingerprints them all in one parse, none of them kept. A tap
    with ``positions`` (a set) and ``take(position, finding)`` picks those findings
    alone: the others are counted without being built (:meth:`wants`).
    """

    __slots__ = ("_picks", "keep", "kept", "tap", "total")

    def __init__(self, keep: int, tap: Callable[[Finding], object] | None = None) -> None:
        self.keep = keep
        self.kept: list[Finding] = []
        self.total = 0
        self.tap = tap
        self._picks: Any = getattr(tap, "positions", None)

    def add(self, finding: Finding) -> None:
        self.total += 1
        if self.tap is not None:
            if self._picks is None:
                self.tap(finding)
            elif self.total - 1 in self._picks:
                self.tap.take(self.total - 1, finding)  # type: ignore[attr-defined]
        if len(self.kept) < self.keep:
            self.kept.append(finding)

    def keeps(self) -> bool:
        """Whether the next finding is kept (the digest may show it: worth its detail)."""
        return len(self.kept) < self.keep or self._picks is not None

    def wants(self) -> bool:
        """Whether the next finding is looked at (kept, tapped or picked): a parser builds it
        only then, and else counts it (``total += 1``)."""
        if len(self.kept) < self.keep:
            return True
        return self.tap is not None and (self._picks is None or self.total in self._picks)

    def result(self, **kwargs: Any) -> ParseResult:
        """A ParseResult carrying the kept findings and the true total."""
        from ckdn.parsers.base import ParseResult

        return ParseResult(findings=self.kept, findings_total=self.total, **kwargs)
