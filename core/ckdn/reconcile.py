"""The status model: one pure function from (exit, parse result) to a status."""

from __future__ import annotations

from ckdn._lite import Record, record
from ckdn.process import RC_INTERRUPTED, RC_NOT_EXECUTABLE, RC_NOT_FOUND, RC_TIMEOUT, Exit

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from ckdn.parsers.base import ParseResult

__all__ = [
    "ERROR",
    "FAIL",
    "PARSE_MISMATCH",
    "PASS",
    "RC_INTERRUPTED",
    "RC_NOT_EXECUTABLE",
    "RC_NOT_FOUND",
    "RC_TIMEOUT",
    "SKIPPED",
    "STATUSES",
    "Exit",
    "Verdict",
    "exit_code",
    "reconcile",
    "reconcile_import",
]

# This is the only place a status is decided. The rules, in order:
#
# 1. A command that never started (not found, not executable) is ``error``.
# 2. A run that timed out or was interrupted is ``error``.
# 3. A parser that could not read its evidence (``parser_ok=False``) is ``error``
#    on a nonzero exit code and ``parse_mismatch`` on exit code 0.
# 4. Exit code 0: findings anyway -> ``parse_mismatch``; a failed gate -> ``fail``;
#    otherwise ``pass``.
# 5. Nonzero exit code: findings or a failed gate -> ``fail``; nothing at all ->
#    ``error`` when the parser promised evidence, ``fail`` when it did not
#    (``generic``).
#
# So text never upgrades a nonzero exit code, a zero exit code never survives
# contradicting evidence, and a confused parser is never ``pass``.

PASS = "pass"  # noqa: S105 - a status, not a password
FAIL = "fail"
ERROR = "error"
PARSE_MISMATCH = "parse_mismatch"
#: Only in aggregates: a member that fail-fast never reached.
SKIPPED = "skipped"
STATUSES = (PASS, FAIL, ERROR, PARSE_MISMATCH)


@record
class Verdict(Record):
    __slots__ = ("reason", "status")
    status: str
    reason: str | None

    def __init__(self, status: str, reason: str | None) -> None:
        self._assign(status, reason)

    @property
    def green(self) -> bool:
        return self.status == PASS


def _gates(result: ParseResult) -> str:
    return "; ".join(result.gate_failures)


#: Signals whose numbers are the same on Linux, macOS and the BSDs, by name in a reason.
_SIGNALS = {1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV",
            13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM"}


def _code(rc: int) -> str:
    """``exit code -9 (killed by SIGKILL)``: a negative code is a signal, not the tool's word."""
    if rc >= 0:
        return f"exit code {rc}"
    return f"exit code {rc} (killed by {_SIGNALS.get(-rc, f'signal {-rc}')})"


def reconcile(exit: Exit, result: ParseResult) -> Verdict:  # "exit" is the domain word
    """Decide the status of one run. Pure: same inputs, same verdict."""
    rc = exit.rc
    if not exit.started:
        return Verdict(ERROR, f"command never started (exit code {rc})")
    if exit.timed_out:
        limit = f" after {exit.timeout:g}s" if exit.timeout is not None else ""
        return Verdict(ERROR, f"timed out{limit} (exit code {rc})")
    if exit.interrupted:
        return Verdict(ERROR, f"interrupted (exit code {rc})")
    total = result.total
    if not result.parser_ok:
        # The parser's first note says what is missing or unrecognised: the reader gets the
        # cause in the reason itself, not "could not interpret" beside a correct finding.
        why = f": {result.notes[0]}" if result.notes else ""
        if rc != 0:
            return Verdict(ERROR, f"{_code(rc)} and the parser's evidence is incomplete{why}")
        if result.unrun:
            return Verdict(ERROR, f"exit code 0 but part of the check never ran{why}")
        return Verdict(PARSE_MISMATCH, f"exit code 0 but the parser's evidence is incomplete{why}")
    if rc == 0:
        if total:
            return Verdict(PARSE_MISMATCH, f"exit code 0 but {total} finding(s)")
        if result.gate_failures:
            return Verdict(FAIL, f"exit code 0 but gate failed: {_gates(result)}")
        return Verdict(PASS, None)
    if total:
        return Verdict(FAIL, f"{_code(rc)} with {total} finding(s)")
    if result.gate_failures:
        return Verdict(FAIL, f"{_code(rc)}; gate failed: {_gates(result)}")
    if result.evidence_expected:
        return Verdict(
            ERROR, f"{_code(rc)} with no finding(s) although the parser expects evidence")
    return Verdict(FAIL, _code(rc))


# An imported run had no process ckdn saw, so no exit code speaks for it; its file's own
# words are all there is, and they are trusted only as far as they agree with themselves:
#
# 1. A file that could not be read to its end, or says its producer failed, is ``error``.
# 2. Declared totals (JUnit's tests/failures, CTRF's summary, the TAP plan, coverage's
#    line counts) that disagree with what was read are ``parse_mismatch``.
# 3. Nothing checked (zero testcases, files, diagnostics) is ``error``: never green.
# 4. Findings or a failed gate are ``fail``; otherwise ``pass``.


def reconcile_import(result: ParseResult, *, cases: int, mismatch: str | None) -> Verdict:
    """Decide the status of an imported run (see above). Pure."""
    if not result.parser_ok:
        why = f": {result.notes[0]}" if result.notes else ""
        return Verdict(ERROR, f"the imported file's evidence is incomplete{why}")
    if mismatch is not None:
        return Verdict(PARSE_MISMATCH, f"the imported file disagrees with itself: {mismatch}")
    if cases <= 0:
        return Verdict(ERROR, "the imported file holds nothing checked (zero cases): an empty "
                              "report is never green")
    if result.total:
        return Verdict(FAIL, f"imported: {result.total} finding(s)")
    if result.gate_failures:
        return Verdict(FAIL, f"imported: gate failed: {_gates(result)}")
    return Verdict(PASS, None)


def exit_code(status: str, rc: int) -> int:
    """The process exit code for a run: the exit-code contract in one place.

    The tool's own code when it is 1-255; 1 when the code is 0 but the status is
    not ``pass``, or when the code is outside 1-255 (a negative signal code).
    """
    if 1 <= rc <= 255:
        return rc
    if rc == 0 and status == PASS:
        return 0
    return 1
