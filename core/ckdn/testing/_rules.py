"""The verdict rules every parser is held to, as assertions a test can make."""

from __future__ import annotations

from ckdn.parsers.base import ParseResult
from ckdn.reconcile import PASS, Exit, reconcile

__all__ = ["assert_loud", "assert_never_green", "describe", "verdict"]

# A parser reports facts; :func:`ckdn.reconcile.reconcile` turns them and the exit
# code into a status. These helpers ask what a result reconciles to, so a test
# states a rule about the status a user would see, not about a parser's
# internals.


def verdict(result: ParseResult, rc: int) -> str:
    """The status ``result`` reconciles to when the tool exited ``rc``."""
    return reconcile(Exit(rc), result).status


def describe(result: ParseResult) -> str:
    """The facts of ``result`` in one line, for a failing assertion's message."""
    notes = "; ".join(result.notes[:2]) or "no note"
    return (f"parser_ok={result.parser_ok}, {result.total} finding(s), "
            f"{len(result.gate_failures)} gate failure(s), {notes}")


def assert_never_green(result: ParseResult, rc: int, *, what: str = "this run") -> None:
    """``result`` is not ``pass``: for input that is not the tool's own complete clean run.

    Raises :class:`AssertionError` naming ``what`` the input was.
    """
    if verdict(result, rc) == PASS:
        raise AssertionError(f"false green: {what} at exit code {rc} passes "
                             f"({describe(result)})")


def assert_loud(result: ParseResult, rc: int, *, what: str = "this run") -> None:
    """The parser says it could not read its evidence: ``parser_ok=False`` and a note.

    For a missing, empty, torn or foreign report: ``error`` at a nonzero exit code,
    ``parse_mismatch`` at 0, and a note telling the reader what was wrong.
    """
    if result.parser_ok:
        raise AssertionError(f"silent: {what} at exit code {rc} is read as evidence "
                             f"({describe(result)})")
    if not result.notes:
        raise AssertionError(f"{what}: parser_ok=False without a note saying what was wrong")
    assert_never_green(result, rc, what=what)
