"""From pytest reports to ckdn findings and counts.

Only data that survives pytest-xdist's report serialisation is used (node id,
``when``, ``outcome``, ``location`` and the ``longrepr`` structure), so a
controller sees the same findings as a single process does.

Three facts of pytest's reports decide the locations: ``report.location`` is
relative to the rootdir with a **0-based** line; ``longrepr.reprcrash`` is an
**absolute** path with a **1-based** line; traceback entries are shown relative
to the cwd at the time the report was made. Every location a finding carries is
``path:line``, 1-based, relative to the rootdir (the base of node ids).

Findings are kept in a deterministic order, whatever order the reports arrive
in (pytest-randomly shuffles, xdist workers race): the core's order for pytest
runs (:func:`ckdn.app.host.order_key`, the one the JUnit parser uses too):
collection errors first, then tests by node id, setup before call before
teardown, internal errors last. Only the first ``top`` of that order are built
and kept; the rest are counted.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ckdn.app import Finding
from ckdn.app.host import (
    COLLECTION_ERROR,
    INTERNAL,
    INTERNAL_ERROR,
    OUTSIDE,
    PHASES,
    TEST,
    TEST_ERROR,
    TEST_FAILURE,
    WORKER_CRASH,
    Smallest,
    Snippet,
    cap_line,
    collection_error,
    internal_error,
    numbered,
    order_key,
    phase_failure,
    worse_outcome,
)

__all__ = [
    "COLLECTION_ERROR",
    "INTERNAL_ERROR",
    "TEST_ERROR",
    "TEST_FAILURE",
    "WORKER_CRASH",
    "Collector",
    "Paths",
]

#: pytest-xdist reports an item whose worker died with this ``when``.
CRASH_WHEN = "???"
#: terminal stats category -> counts key, named as the JUnit reader names them
#: (anything else: spaces become ``_``, e.g. ``subtests_passed``).
_COUNT_KEYS = {"error": "errors", "failed": "failures"}
#: Own counting's private category: a collector (a module, a class) skipped whole.
SKIPPED_COLLECTOR = " skipped collector"
#: The counts every digest of a session states, zero or not.
COUNT_NAMES = ("tests", "passed", "failures", "errors", "skipped", "xfailed", "xpassed",
               "deselected", "collection_errors", "warnings")

#: ``path:line: in name`` (pytest's short traceback entries).
_ENTRY = re.compile(r"^(?P<path>[^\s:][^:]*?):(?P<line>\d+): in \S")
#: ``File "path", line N`` (Python's own traceback and SyntaxError lines).
_FILE_LINE = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)')


class Paths:
    """Turns the paths pytest shows into rootdir-relative ``path:line`` locations."""

    def __init__(self, rootdir: Path, invocation_dir: Path) -> None:
        self.rootdir = rootdir
        self.invocation_dir = invocation_dir

    def absolute(self, shown: str) -> Path:
        path = Path(shown)
        return path if path.is_absolute() else self.invocation_dir / path

    def rel(self, path: str | os.PathLike[str]) -> str:
        """``path`` relative to the rootdir, forward slashes; unchanged if not expressible."""
        text = os.fspath(path)
        if os.path.isabs(text):
            try:
                text = os.path.relpath(text, self.rootdir)
            except ValueError:  # another drive on Windows
                return text.replace(os.sep, "/")
        return text.replace(os.sep, "/")

    def location(self, path: str, line: int | None) -> str:
        return f"{path}:{line}" if line is not None and line >= 1 else path


# -- reading one report ---------------------------------------------------------------------


def _first_line(text: str) -> str:
    return cap_line(text.strip().split("\n", 1)[0].rstrip())


def _e_lines(lines: Iterable[str]) -> list[str]:
    return [line for line in lines if line.startswith("E ")]


def _bounded(lines: Sequence[str], limit: int, last: str | None = None) -> Snippet:
    """At most ``limit`` lines (``last`` always among them), each cut; the lines left out
    are counted (the digest adds its own count to it)."""
    room = max(limit - (last is not None), 0)
    kept = [cap_line(line) for line in lines[:room]]
    if last is not None:
        kept.append(cap_line(last))
    return Snippet(kept, max(0, len(lines) - room))


def _last_entry(longrepr: Any) -> Any | None:
    reprtraceback = getattr(longrepr, "reprtraceback", None)
    entries = getattr(reprtraceback, "reprentries", None)
    return entries[-1] if entries else None


def report_finding(report: Any, paths: Paths, snippet_lines: int) -> Finding:
    """A failed test report (call, setup/teardown, or a crashed xdist worker) as a finding.

    Located where the JUnit road can locate it too: the traceback's last line in the
    test's own file, else the test's file alone (a JUnit report names no line)."""
    when = report.when
    test_path = report.location[0]
    longrepr = report.longrepr
    if when == CRASH_WHEN:
        return Finding(id=report.nodeid, kind=WORKER_CRASH, message=_first_line(str(longrepr)),
                       location=test_path)
    crash = getattr(longrepr, "reprcrash", None)
    if crash is None:  # a plain string: [XPASS(strict)], "contains N failed subtests", ...
        text = str(longrepr) if longrepr is not None else f"{when} failed"
        lines = text.splitlines()
        return phase_failure(report.nodeid, when, _first_line(text), test_path,
                            _bounded(_e_lines(lines) or lines[1:], snippet_lines))
    crash_path = paths.rel(crash.path)
    if crash_path == test_path:
        line: int | None = crash.lineno
    else:
        line = _line_in(longrepr, paths, paths.rootdir / test_path)
    entry = _last_entry(longrepr)
    detail = _e_lines(getattr(entry, "lines", ()))
    if not detail:
        detail = ["E   " + text for text in str(crash.message).splitlines()]
    fileloc = getattr(entry, "reprfileloc", None)
    typename = getattr(fileloc, "message", "") or ""
    where = paths.location(crash_path, crash.lineno)
    return phase_failure(report.nodeid, when, _first_line(str(crash.message)),
                        paths.location(test_path, line),
                        _bounded(detail, snippet_lines, f"{where}: {typename}" if typename
                                 else where))


def _line_in(longrepr: Any, paths: Paths, target: Path) -> int | None:
    """The line of the last traceback entry in ``target`` (the test's own file)."""
    reprtraceback = getattr(longrepr, "reprtraceback", None)
    for entry in reversed(getattr(reprtraceback, "reprentries", None) or ()):
        fileloc = getattr(entry, "reprfileloc", None)
        if fileloc is not None and paths.absolute(fileloc.path) == target:
            return int(fileloc.lineno)
    return None


def collection_finding(report: Any, paths: Paths, snippet_lines: int) -> Finding:
    """A failed collector, located at its module (with the line the error text names)."""
    nodeid = report.nodeid
    collector = report.location[0] if report.location else nodeid.split("::", 1)[0]
    text = str(report.longrepr)
    lines = text.splitlines()
    errors = _e_lines(lines)
    where = _error_location(lines, paths, collector)
    return collection_error(nodeid, errors, where,
                            _bounded(errors or lines[-snippet_lines:], snippet_lines),
                            fallback=lines[0] if lines else "")


def _error_location(lines: Sequence[str], paths: Paths, collector: str) -> str:
    """``collector:line`` from the last traceback position in the collector's own file.

    For a directory collector (a failing ``conftest.py``) the last position
    inside that directory; without any, the collector path alone.
    """
    own: str | None = None
    inside: str | None = None
    prefix = collector.rstrip("/") + "/" if collector not in ("", ".") else ""
    for raw in lines:
        text = raw[1:].strip() if raw.startswith("E ") else raw
        match = _ENTRY.match(text) or _FILE_LINE.search(text)
        if match is None:
            continue
        rel = paths.rel(paths.absolute(match["path"]))
        where = paths.location(rel, int(match["line"]))
        if rel == collector:
            own = where
        elif rel.startswith(prefix) and not rel.startswith("../"):
            inside = where
    return own or inside or collector or "."


def internal_error_finding(excrepr: Any, paths: Paths, snippet_lines: int) -> Finding:
    """pytest's INTERNALERROR: a plugin or pytest itself crashed."""
    crash = getattr(excrepr, "reprcrash", None)
    text = str(excrepr)
    lines = text.splitlines()
    if crash is not None:
        message = _first_line(str(crash.message))
        location: str | None = paths.location(paths.rel(crash.path), crash.lineno)
    else:
        message, location = _first_line(lines[-1] if lines else text), None
    errors = _e_lines(lines) or lines[-snippet_lines:]
    return internal_error(message, location, _bounded(errors, snippet_lines))


# -- the whole session ----------------------------------------------------------------------


#: The phase outcomes of a failed report (``report.failed``).
_FAILED = frozenset(("failed", "error"))


def _outcome(report: Any) -> str:
    """One phase's outcome, named as a JUnit report's reader names a testcase's.

    Read from ``report.outcome`` (an attribute) once, not through pytest's ``failed`` and
    ``skipped`` properties: this runs for every phase of every test."""
    outcome = report.outcome
    if outcome == "failed":
        return "failed" if report.when == "call" else "error"
    if outcome == "skipped":
        return "xfailed" if hasattr(report, "wasxfail") else "skipped"
    return "passed"  # as pytest counts an outcome of its own (``rerun``): not failed


class Collector:
    """Findings and counts of one session, fed report by report."""

    def __init__(self, paths: Paths, *, top: int, snippet_lines: int) -> None:
        self.paths = paths
        self.snippet_lines = snippet_lines
        self.tests = 0
        self.collection_errors = 0
        self._kept: Smallest[Finding] = Smallest(top)
        self._seen_collect: set[tuple[str, str]] = set()
        self._own: dict[str, int] = {}
        #: every test's outcome by node id, the worst of its phases (``tests.jsonl``)
        self.outcomes: dict[str, str] = {}
        #: every test's seconds by node id, its phases summed (``tests.jsonl``, for ``ckdn plan``)
        self.durations: dict[str, float] = {}

    def test_report(self, report: Any) -> None:
        outcome = _outcome(report)
        nodeid = report.nodeid  # a property on pytest's reports: read once
        took = getattr(report, "duration", None)
        if isinstance(took, (int, float)):
            durations = self.durations
            durations[nodeid] = durations.get(nodeid, 0.0) + took
        known = self.outcomes.get(nodeid)
        if known != outcome:  # most phases repeat the one before: nothing to decide
            self.outcomes[nodeid] = (outcome if known is None
                                     else worse_outcome(known, outcome))
        if outcome not in _FAILED:
            return
        key = order_key(TEST, nodeid, PHASES.get(report.when, len(PHASES)))
        self._kept.offer(key, lambda: report_finding(report, self.paths, self.snippet_lines))

    def collect_report(self, report: Any) -> None:
        """A failed collector; pytest-xdist repeats it once per worker: count it once."""
        if not report.failed:
            return
        seen = (report.nodeid, str(report.longrepr))
        if seen in self._seen_collect:
            return
        self._seen_collect.add(seen)
        self.collection_errors += 1
        self._kept.offer(order_key(OUTSIDE, report.nodeid, 0),
                         lambda: collection_finding(report, self.paths, self.snippet_lines))

    def internal_error(self, excrepr: Any) -> None:
        self._kept.offer(order_key(INTERNAL, "INTERNALERROR", 0),
                         lambda: internal_error_finding(excrepr, self.paths, self.snippet_lines))

    def count(self, category: str) -> None:
        """Own counting, for sessions without pytest's terminal reporter."""
        if category:
            self._own[category] = self._own.get(category, 0) + 1

    @property
    def findings_total(self) -> int:
        return self._kept.total

    def findings(self) -> list[Finding]:
        """In order; a test reported failing twice (a subtest and its test) gets ``#2``, as
        the JUnit path numbers it."""
        return numbered(self._kept.items())

    def counts(self, stats: Mapping[str, Sequence[Any]] | None) -> dict[str, int]:
        """Counts as pytest's terminal summary states them (from its ``stats`` when given)."""
        if stats is not None:
            found = {category: sum(1 for r in reports
                                   if getattr(r, "count_towards_summary", True))
                     for category, reports in stats.items() if category}
            skipped_collectors = sum(1 for r in stats.get("skipped", ())
                                     if getattr(r, "when", None) == "collect")
        else:
            found = dict(self._own)
            skipped_collectors = self._own.get(SKIPPED_COLLECTOR, 0)
            found.pop(SKIPPED_COLLECTOR, None)
        counts = dict.fromkeys(COUNT_NAMES, 0)
        for category, number in found.items():
            key = _COUNT_KEYS.get(category, category.replace(" ", "_"))
            counts[key] = counts.get(key, 0) + number
        # A module skipped at collection (``pytest.skip(allow_module_level=True)``) is one
        # of pytest's "skipped" and one JUnit testcase, though no test of it started: it is
        # a test here too, so passed + skipped + ... never exceeds tests.
        counts["tests"] = self.tests + skipped_collectors
        counts["collection_errors"] = self.collection_errors
        return counts
