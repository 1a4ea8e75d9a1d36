"""One finding builder for both pytest roads (the plugin's reports, the JUnit report).

Each road reads its own record; what a finding of a pytest outcome is (its id, kind,
message and location) is decided here only, so a baseline recorded on one road holds
on the other (docs/pytest.md).
"""

from __future__ import annotations

import re

from ckdn.parsers.base import Finding, cap_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "COLLECTION_ERROR",
    "INTERNAL_ERROR",
    "INTERNAL_ID",
    "TEST_ERROR",
    "TEST_FAILURE",
    "WORKER_CRASH",
    "collection_error",
    "exception_line",
    "internal_error",
    "phase_failure",
    "unwrapped_message",
]

TEST_FAILURE = "test_failure"
TEST_ERROR = "test_error"
COLLECTION_ERROR = "collection_error"
WORKER_CRASH = "worker_crash"
INTERNAL_ERROR = "internal_error"
#: The id of pytest's INTERNALERROR (the JUnit report names it ``pytest::internal``).
INTERNAL_ID = "INTERNALERROR"

#: ``Name: text`` where Name is an exception's (dotted) class name.
_EXCEPTION = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?::|$)")
#: Class names that say they are an exception.
_EXCEPTION_NAME = re.compile(r"(?:Error|Exception|Warning|Failed|Failure|Exit|Interrupt)$")
#: What pytest's JUnit writer wraps a setup or teardown error's message in.
_WRAPPED = re.compile(r'^failed on (?:setup|teardown) with "(?P<inner>.*)"$', re.DOTALL)


def exception_line(e_lines: Iterable[str]) -> str | None:
    """The line naming the exception among pytest's ``E`` lines (``ValueError: x``), not a
    hint pytest printed after it (``See docs: https://...``); None without ``E`` lines."""
    texts = [line[1:].strip() for line in e_lines if line[:1] == "E"]
    texts = [text for text in texts if text]
    if not texts:
        return None
    named = [text for text in texts if _EXCEPTION.match(text)]
    typed = [text for text in named if _EXCEPTION_NAME.search(text.split(":", 1)[0])]
    return cap_line((typed or named or texts[-1:])[0])


def unwrapped_message(message: str) -> str:
    """``ValueError: x`` for the JUnit report's ``failed on setup with "ValueError: x"``."""
    found = _WRAPPED.match(message)
    return found["inner"] if found is not None else message


def phase_failure(node_id: str, when: str, message: str, location: str | None,
                 detail: tuple[str, ...] = ()) -> Finding:
    """A failed phase of a test (``when``: setup, call, teardown): a failure in its call, an
    error in its setup or teardown; a teardown error is ``NODEID@teardown`` (its call may
    have failed too)."""
    kind = TEST_FAILURE if when == "call" else TEST_ERROR
    ident = f"{node_id}@teardown" if when == "teardown" else node_id
    return Finding(ident, kind, cap_line(unwrapped_message(message)), location, detail)


def collection_error(node_id: str, e_lines: Iterable[str], location: str | None,
                     detail: tuple[str, ...] = (), *, fallback: str = "") -> Finding:
    """A collector that failed (a module that does not import, a conftest, a mark pytest
    refuses): its message is the exception, its id the collector's node id."""
    message = exception_line(e_lines) or cap_line(fallback) or "collection failed"
    return Finding(node_id or ".", COLLECTION_ERROR, message, location, detail)


def internal_error(message: str, location: str | None,
                   detail: tuple[str, ...] = ()) -> Finding:
    """pytest's INTERNALERROR (a plugin or pytest itself crashed)."""
    return Finding(INTERNAL_ID, INTERNAL_ERROR, cap_line(message) or "internal error", location,
                   detail)
