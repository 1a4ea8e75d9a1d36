"""Reading one JUnit XML report into counts and ordered findings, for pytest and coverage.

A report that cannot be read to its end, or whose declared totals disagree with it,
contributes nothing trusted: a torn report's first half is not a smaller run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ckdn.parsers._pytest_log import stopped
from ckdn.parsers._pytest_text import FailureText, clean, first_line, node_id
from ckdn.parsers._xml import MAX_DEPTH, XmlError, XmlReader, is_namespaced
from ckdn.parsers.base import (
    ArtifactError,
    Finding,
    Option,
    ParseContext,
    ParseResult,
    cap_line,
)
from ckdn.parsers.gates import (
    ALLOW_NO_TESTS_HINT,
    NO_TESTS_COLLECTED_STATUS,
    no_tests_collected,
    no_tests_gate,
)
from ckdn.parsers.pytest_findings import (
    collection_error,
    internal_error,
    phase_failure,
    unwrapped_message,
)
from ckdn.parsers.pytest_order import INTERNAL, OUTSIDE, TEST, Smallest, numbered, order_key

_FAILED = 1
_ERRORED = 2
_SKIPPED = 4
_XFAILED = 8


class _Pending:
    """A ``<failure>``/``<error>`` element being read."""

    __slots__ = ("base_id", "key", "kind", "location", "message", "text", "when")

    def __init__(self, kind: str, base_id: str, key: tuple[Any, ...], message: str,  # noqa: PLR0917
                 location: tuple[str, int | None] | None, text: FailureText,
                 when: str) -> None:
        self.when = when  # setup, call, teardown; collect; internal; outside (no testcase)
        self.kind = kind
        self.base_id = base_id
        self.key = key
        self.message = message
        self.location = location
        self.text = text


def _suite(attrs: dict[str, str]) -> dict[str, str]:
    """What an open ``<testsuite>`` is kept for: its name and declared totals (each bounded;
    a total too long to be a count stays too long to be one)."""
    return {key: cap_line(value, 300) for key, value in attrs.items()
            if key in ("name", "tests", "failures", "errors", "skipped")}


class JUnitReader(XmlReader):
    """Counts testcases and outcomes, and turns failures/errors into findings."""

    def __init__(self, ctx: ParseContext, name: str) -> None:
        super().__init__()
        self.ctx = ctx
        self.name = name
        self.cwd = Path(ctx.cwd)  # once a report, not once a failure
        self.kept: Smallest[Finding] = Smallest(ctx.top)
        self.root_attrs: dict[str, str] = {}
        self.suites: list[list[Any]] = []  # [attrs, has_child_suite]
        self.declared: dict[str, int] = {}
        self.bad_declared: list[str] = []
        self.excess = 0  # declared tests above the testcases, tolerated (subtests)
        self.case: dict[str, str] | None = None
        self.flags = 0
        self.tests = 0
        self.not_passed = 0  # testcases with a failure, an error or a skip
        self.failures = 0
        self.errors = 0
        self.skipped_elements = 0
        self.xfailed = 0
        self.only_skipped = 0
        self.pending: _Pending | None = None
        self.splits: dict[str, int] = {}

    # -- events ------------------------------------------------------------------

    def handlers(self) -> tuple[Callable[[str, dict[str, str]], None], Callable[[str], None]]:
        """A testcase (nearly every element of a big report) opens and closes here, one
        Python call an event; every other element goes through the guards to on_start/on_end.

        ``depth`` counts the open elements but the testcase: one at most is open (a nested
        one is refused), so the depth guard adds it while it is open."""
        on_start, on_end, too_deep = self.on_start, self.on_end, self.too_deep
        depth = 1

        def start(tag: str, attrs: dict[str, str]) -> None:
            nonlocal depth
            if tag == "testcase" and self.case is None:  # a nested one: on_start refuses it
                if depth >= MAX_DEPTH:
                    too_deep()
                self.case = attrs
                self.tests += 1
                return
            depth += 1
            if depth + (self.case is not None) > MAX_DEPTH:
                too_deep()
            on_start(tag, attrs)

        def end(tag: str) -> None:
            nonlocal depth
            if tag == "testcase":
                if self.flags:  # failed, errored or skipped: not passed
                    self._flagged()
                self.case = None
                return
            depth -= 1
            on_end(tag)

        return start, end

    def on_start(self, tag: str, attrs: dict[str, str]) -> None:
        if tag in ("failure", "error"):
            if self.pending is not None:
                raise XmlError(f"a <{tag}> inside a <{self.pending_tag()}> at "
                               f"{self.position()} is not pytest's JUnit XML")
            outcome = _FAILED if tag == "failure" else _ERRORED
            if self.case is not None:  # flags are a testcase's own, cleared as it closes
                self.flags |= outcome
            if outcome == _FAILED:
                self.failures += 1
                self._open("test_failure", attrs)
            else:
                self.errors += 1
                self._open("test_error", attrs)
        elif tag == "testcase":  # the handlers open a testcase themselves: this one is nested
            raise XmlError(f"a <testcase> inside a <testcase> at {self.position()} "
                           "is not pytest's JUnit XML")
        elif self.case is not None:
            if tag == "skipped":
                self.skipped_elements += 1
                if attrs.get("type") == "pytest.xfail":
                    self.xfailed += 1
                    self.flags |= _XFAILED
                else:
                    self.flags |= _SKIPPED
        elif tag == "testsuite":
            if self.suites:
                self.suites[-1][1] = True
            self.suites.append([_suite(attrs), False])

    def _flagged(self) -> None:
        """A testcase closes that failed, errored or was skipped (a passed one costs nothing)."""
        self.not_passed += 1
        if self.flags == _SKIPPED:
            self.only_skipped += 1
        self.flags = 0

    def on_end(self, tag: str) -> None:
        """An element but a testcase closed (the handlers close a testcase themselves)."""
        if self.pending is not None and tag in ("failure", "error"):
            self._close()
        elif tag == "testsuite" and self.suites:
            attrs, has_child = self.suites.pop()
            if not has_child:
                self._declare(attrs)

    def on_text(self, data: str) -> None:
        if self.pending is not None:
            self.pending.text.feed(data)

    # -- pieces ------------------------------------------------------------------

    def on_root(self, tag: str, attrs: dict[str, str]) -> None:
        if is_namespaced(tag, attrs):
            raise XmlError(f"namespaced root element <{tag}> is not pytest's JUnit XML")
        if tag not in ("testsuites", "testsuite"):
            raise XmlError(f"unrecognised root element <{tag}> (expected <testsuites> "
                           "or <testsuite>)")
        if tag == "testsuites":
            self.root_attrs = attrs

    def pending_tag(self) -> str:
        return "failure" if self.pending is not None and self.pending.kind == "test_failure" \
            else "error"

    def _declare(self, attrs: dict[str, str]) -> None:
        for key in ("tests", "failures", "errors", "skipped"):
            raw = attrs.get(key)
            if raw is None:
                continue
            try:
                value = int(raw)
            except ValueError:
                self.bad_declared.append(f"{key}={cap_line(raw, 40)!r}")
                continue
            self.declared[key] = self.declared.get(key, 0) + value

    def _outside_id(self) -> str:
        """The id of a failure outside any testcase: its suite, by name."""
        suite = self.suites[-1][0] if self.suites else self.root_attrs
        named = suite.get("name")
        where = "testsuite" if self.suites else "testsuites"
        return f"{self.name}::<{where} name={named!r}>" if named else f"{self.name}::<{where}>"

    def _open(self, kind: str, attrs: dict[str, str]) -> None:
        raw_message = attrs.get("message", "")
        case = self.case
        location: tuple[str, int | None] | None = None
        test_file: str | None = None
        if case is None:
            base_id, group, phase, when = self._outside_id(), OUTSIDE, 0, "outside"
        else:
            classname = case.get("classname", "")
            base_id, test_file = node_id(classname, case.get("name", ""),
                                         case.get("file") or None, self.cwd,
                                         self.splits)
            group, phase, when = TEST, 1, "call"
            if not classname:
                group, phase, when = OUTSIDE, 0, "collect"
            elif base_id == "pytest::internal":
                group, phase, when = INTERNAL, 0, "internal"
            elif kind == "test_error":
                phase, when = 1, "call"
                if raw_message.startswith("failed on teardown with"):
                    phase, when = 2, "teardown"
                elif raw_message.startswith("failed on setup with"):
                    phase, when = 0, "setup"
            if test_file is not None:
                # the line of the traceback inside the test's file, else the file: the
                # plugin's road locates it so too (xunit2 names no line; xunit1's is ignored)
                location = (test_file, None)
        key = order_key(group, base_id, phase)
        if not self.kept.wants(key):
            self.kept.skip()  # counted, never shown: no need to read its text
            return
        text = FailureText(test_file, max(self.ctx.max_snippet_lines, 0))
        self.pending = _Pending(kind, base_id, key, raw_message, location, text, when)
        self.capture_text(True)

    def _close(self) -> None:
        pending = self.pending
        assert pending is not None
        self.pending = None
        self.capture_text(False)
        text = pending.text
        text.close()
        finding = self._finding(pending, text)
        self.kept.offer(pending.key, lambda: finding)

    def _finding(self, pending: _Pending, text: FailureText) -> Finding:
        """The finding, from the builder the plugin's road uses too (``pytest_findings``)."""
        lines = self.ctx.max_snippet_lines
        location = None
        if pending.location is not None:
            path, line = pending.location
            location = self.ctx.location(path, text.test_line or line)
        if pending.when == "collect":
            return collection_error(pending.base_id, text.e_lines, location,
                                    text.detail(lines, crash=False),
                                    fallback=first_line(pending.message))
        if pending.when == "internal":
            entry = text.python_entry
            return internal_error(text.last_plain or first_line(pending.message),
                                  self.ctx.location(*entry) if entry else None,
                                  text.detail(lines))
        message = first_line(unwrapped_message(pending.message))
        if not message:
            message = cap_line(clean(text.last_e[1:].strip())) if text.last_e else (
                "test failed" if pending.kind == "test_failure" else "test error")
        if pending.when == "outside":
            return Finding(pending.base_id, pending.kind, message, location, text.detail(lines))
        return phase_failure(pending.base_id, pending.when, message, location,
                             text.detail(lines))

    # -- after the read ----------------------------------------------------------

    def findings(self) -> list[Finding]:
        """The kept findings in order; an id shown twice gets ``#2``, ``#3`` (in that order)."""
        return numbered(self.kept.items())

    def counts(self) -> dict[str, int]:
        return {
            "tests": self.tests,
            "passed": self.tests - self.not_passed,
            "failures": self.failures,
            "errors": self.errors,
            "skipped": self.skipped_elements - self.xfailed,
            "xfailed": self.xfailed,
        }

    def mismatches(self) -> list[str]:
        """Notes for every declared total that disagrees with what was counted.

        One excess is pytest's own: with subtests (pytest >= 9) it counts every
        subtest report in ``tests`` but writes one ``<testcase>`` per test, a
        passing subtest leaving no element at all. So ``tests`` declared above the
        testcases counted is no mismatch when the source's ``failures``,
        ``errors`` and ``skipped`` all match their elements: every failure the
        report declares is then present, and the excess can hide none
        (:meth:`excess_note` says it).
        """
        name = self.name
        notes = [f"{name} declares a non-numeric total: {bad}" for bad in self.bad_declared]
        counted = {"tests": self.tests, "failures": self.failures, "errors": self.errors,
                   "skipped": self.skipped_elements}
        element = {"tests": "<testcase>", "failures": "<failure>", "errors": "<error>",
                   "skipped": "<skipped>"}
        self.excess = 0
        for source, declared in (("<testsuite>", self.declared), ("<testsuites>",
                                                                  self._root_declared())):
            others_match = all(value == counted[key] for key, value in declared.items()
                               if key != "tests")
            for key, value in declared.items():
                if value == counted[key]:
                    continue
                if key == "tests" and value > counted[key] and others_match:
                    self.excess = max(self.excess, value - counted[key])
                    continue
                notes.append(f"{name}: {source} declares {key}={value} but the report "
                             f"holds {counted[key]} {element[key]} element(s)")
        return notes

    def excess_note(self) -> str | None:
        """The note for a ``tests`` total above the testcases (see :meth:`mismatches`)."""
        if not self.excess:
            return None
        return (f"{self.name} declares {self.excess} more test(s) than its {self.tests} "
                "<testcase> element(s): pytest counts each subtest report in tests; every "
                "failure, error and skip it declares is present")

    def _root_declared(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for key in ("tests", "failures", "errors", "skipped"):
            raw = self.root_attrs.get(key)
            if raw is not None and raw.isdigit():
                found[key] = int(raw)
        return found


DEFAULT_JUNIT = "junit.xml"

#: Options shared by every parser that reads JUnit (``pytest``, ``coverage``).
JUNIT_OPTIONS: Mapping[str, Option] = {
    "junit": Option("str", help="JUnit XML file in the run dir (default junit.xml)"),
    "allow_no_tests": Option(
        "bool", help="accept a run in which no test ran (none collected, or all skipped)"
    ),
}

#: What became of a report (:func:`read_report`).
READ = "read"
INCONSISTENT = "inconsistent"  # well-formed, but its declared totals disagree with it
UNREADABLE = "unreadable"
MISSING = "missing"


def missing_report_note(name: str, rc: int) -> str:
    """Why the JUnit report ``name`` is missing, and what to do about it."""
    if stopped(rc):
        how = (f"killed by signal {-rc}" if rc < 0 else
               "timed out" if rc == 124 else f"stopped, exit code {rc}")
        return (f"JUnit report {name} not found: pytest was {how} before it wrote its report "
                "(pytest writes it at the end of the session)")
    return (f"JUnit report {name} not found in the run directory (exit code {rc}); "
            f"the command must write it: --junitxml {{run_dir}}/{Path(name).name}")


def read_report(ctx: ParseContext, *, option: str = "junit",
                default: str = DEFAULT_JUNIT) -> tuple[str, ParseResult]:
    """What one JUnit report in the run dir says, and how well it could be read.

    The state is :data:`READ`, :data:`INCONSISTENT` (its declared totals disagree
    with its elements: ``parser_ok=False``, the elements reported), or
    :data:`UNREADABLE` / :data:`MISSING` (``parser_ok=False`` and nothing else:
    no finding and no count comes from a report that could not be read to its end).
    """
    try:
        path = ctx.artifact(option, default)
    except ArtifactError as exc:
        return UNREADABLE, ParseResult(parser_ok=False, notes=[str(exc)])
    name = str(ctx.options.get(option, default))
    if not path.is_file():
        if path.exists():
            return UNREADABLE, ParseResult(parser_ok=False, notes=[
                f"JUnit report {name} is not a regular file"])
        return MISSING, ParseResult(parser_ok=False, notes=[missing_report_note(name, ctx.rc)])
    reader = JUnitReader(ctx, name)
    try:
        reader.read(path)
    except XmlError as exc:
        return UNREADABLE, ParseResult(parser_ok=False, notes=[cap_line(
            f"{name} is not readable JUnit XML: {exc}; a report that cannot be read to its "
            "end contributes no findings and no counts")])
    except OSError as exc:
        return UNREADABLE, ParseResult(parser_ok=False, notes=[
            f"{name} could not be read: {exc.strerror or exc}"])
    counts = reader.counts()
    notes = reader.mismatches()
    state = INCONSISTENT if notes else READ
    excess = reader.excess_note()
    if excess is not None:
        notes.append(excess)
    gate_failures: list[str] = []
    if ctx.rc == NO_TESTS_COLLECTED_STATUS:
        notes.append(no_tests_collected())
    elif ctx.rc == 0 and state == READ and ctx.options.get("allow_no_tests") is not True:
        # only where pytest believed it finished well: any other exit code has its own cause
        gate = no_tests_gate(reader.tests, reader.tests - reader.only_skipped)
        if gate is not None:
            gate_failures.append(gate)
            notes.append(f"{gate} according to {name}; {ALLOW_NO_TESTS_HINT}")
    return state, ParseResult(findings=reader.findings(), findings_total=reader.kept.total,
                              summary={"counts": counts}, parser_ok=state == READ, notes=notes,
                              gate_failures=gate_failures)


def read_junit(ctx: ParseContext, *, option: str = "junit", default: str = DEFAULT_JUNIT,
               missing_ok: bool = False) -> ParseResult | None:
    """Facts from one JUnit XML report in the run dir (:func:`read_report`).

    ``None`` when the report does not exist and ``missing_ok`` (the ``coverage``
    parser reads JUnit only if the command wrote it); otherwise a missing report
    is ``parser_ok=False``: pytest always writes it when asked to, so its absence
    means the run never got that far or the command lacks ``--junitxml``.
    """
    state, result = read_report(ctx, option=option, default=default)
    if state == MISSING and missing_ok:
        return None
    return result
