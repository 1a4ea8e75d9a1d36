"""The never-raise guard: an exception inside a parser becomes ``parser_ok=False``.

A parser reads whatever a tool left behind: a truncated report, a format that
drifted, bytes that are not text at all. Whatever it meets, ckdn must still
write the digest, and must never read the run as clean; an exception that
escaped would end in a traceback instead of evidence. So a parser that breaks
is treated as a confused parser: ``parser_ok=False`` with the exception in a
note, which reconciles to ``error`` or ``parse_mismatch``, never to ``pass``.
This module is the one place that policy is written.

For plugin authors: return ``parser_ok=False`` with a note instead of raising.
Say so yourself for the problems you can foresee (no report, unreadable JSON,
totals that disagree), with a note naming what was wrong and how to fix it.
Derive from :class:`~ckdn.parsers.base.BaseParser` and implement ``read(ctx)``:
its ``parse`` runs ``read`` under :func:`guarded`, so an exception you did not
foresee still becomes loud facts. A parser that does not derive from it can
guard itself::

    from ckdn.parsers.guard import guarded

    class MyToolParser:
        name = "mytool"

        def parse(self, ctx: ParseContext) -> ParseResult:
            return guarded(self.name, self._read, ctx)

Only :class:`Exception` is caught: Ctrl-C (``KeyboardInterrupt``) and
``SystemExit`` still stop the run. ckdn applies the same guard around every
parser it runs (:func:`ckdn.app.parse_safely`), so a plugin that forgets is
contained too; ``BaseParser`` guards all the same, because a parser may be
called without the application in between (a test, another host).
"""

from __future__ import annotations

from ckdn.parsers.base import ParseContext, ParseResult, cap_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["crash_result", "guarded"]


def crash_result(parser: str, exc: BaseException) -> ParseResult:
    """The facts when parser ``parser`` broke on this run's evidence: loud, never clean."""
    return ParseResult(parser_ok=False, notes=[cap_line(
        f"parser '{parser}' crashed on this run's evidence: {type(exc).__name__}: {exc}")])


def guarded(parser: str, parse: Callable[[ParseContext], ParseResult],
            ctx: ParseContext) -> ParseResult:
    """``parse(ctx)``, or :func:`crash_result` when it raises; ``parser`` names it in the note."""
    try:
        return parse(ctx)
    except Exception as exc:  # the policy above: a loud note and parser_ok=False, never silent
        return crash_result(parser, exc)
