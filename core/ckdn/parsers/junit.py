"""The ``pytest`` parser: test findings from pytest's JUnit XML.

Both families pytest writes are read: ``xunit2`` (the default: ``classname`` and
``name`` only) and ``xunit1`` (adds ``file`` and a **0-based** ``line``). Each
``<failure>`` is a ``test_failure``; each ``<error>`` (setup, teardown,
collection) a ``test_error``. The id is the pytest node id rebuilt from
``classname``/``name`` (and ``file`` when present), so it is stable across runs
and across families. A test that fails in its call and errors in teardown is
written by pytest as two testcases with the same name: the teardown error's id
gets an ``@teardown`` suffix so both findings stay distinct.

Guards: the totals every ``<testsuite>`` declares must match what was counted
(a truncated or hand-edited report is loud, not quietly short); a report that
is missing, not well-formed, namespaced or rooted in anything but
``testsuites``/``testsuite`` is ``parser_ok=False``; and a run in which no test
ran (none collected, or every one skipped) is a gate failure unless the check
sets ``allow_no_tests = true``: a run that checked nothing is not a pass.

The reading is shared with the ``coverage`` parser (:func:`read_junit`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ckdn.parsers._pytest_text import FailureText, clean, first_line, node_id
from ckdn.parsers._xml import XmlError, XmlReader, is_namespaced
from ckdn.parsers.base import (
    ArtifactError,
    BaseParser,
    Finding,
    FindingSink,
    Option,
    ParseContext,
    ParseResult,
    cap_line,
)
from ckdn.parsers.gates import ALLOW_NO_TESTS_HINT, no_tests_gate
from ckdn.parsers.guard import guarded

__all__ = [
    "DEFAULT_JUNIT",
    "JUNIT_OPTIONS",
    "PytestParser",
    "node_id",
    "read_junit",
]

DEFAULT_JUNIT = "junit.xml"

#: Options shared by every parser that reads JUnit (``pytest``, ``coverage``).
JUNIT_OPTIONS: Mapping[str, Option] = {
    "junit": Option("str", help="JUnit XML file in the run dir (default junit.xml)"),
    "allow_no_tests": Option(
        "bool", help="accept a run in which no test ran (none collected, or all skipped)"
    ),
}

_FAILED = 1
_ERRORED = 2
_SKIPPED = 4
_XFAILED = 8


class _Pending:
    """A ``<failure>``/``<error>`` element being read."""

    __slots__ = ("base_id", "kind", "location", "message", "text")

    def __init__(self, kind: str, base_id: str, message: str, location: tuple[str, int | None]
                 | None, text: FailureText) -> None:
        self.kind = kind
        self.base_id = base_id
        self.message = message
        self.location = location
        self.text = text


class _JUnitReader(XmlReader):
    """Counts testcases and outcomes, and turns failures/errors into findings."""

    def __init__(self, ctx: ParseContext, sink: FindingSink) -> None:
        super().__init__()
        self.ctx = ctx
        self.sink = sink
        self.root: str | None = None
        self.root_attrs: dict[str, str] = {}
        self.suites: list[list[Any]] = []  # [attrs, has_child_suite]
        self.declared: dict[str, int] = {}
        self.bad_declared: list[str] = []
        self.case: dict[str, str] | None = None
        self.flags = 0
        self.tests = 0
        self.passed = 0
        self.failures = 0
        self.errors = 0
        self.skipped_elements = 0
        self.xfailed = 0
        self.only_skipped = 0
        self.pending: _Pending | None = None
        self.kept_ids: set[str] = set()

    # -- events ------------------------------------------------------------------

    def on_start(self, tag: str, attrs: dict[str, str]) -> None:
        if tag == "testcase":
            self.case = attrs
            self.flags = 0
            self.tests += 1
        elif self.case is not None:
            if tag == "failure":
                self.failures += 1
                self.flags |= _FAILED
                self._open("test_failure", attrs)
            elif tag == "error":
                self.errors += 1
                self.flags |= _ERRORED
                self._open("test_error", attrs)
            elif tag == "skipped":
                self.skipped_elements += 1
                if attrs.get("type") == "pytest.xfail":
                    self.xfailed += 1
                    self.flags |= _XFAILED
                else:
                    self.flags |= _SKIPPED
        elif tag == "testsuite":
            if self.suites:
                self.suites[-1][1] = True
            self.suites.append([attrs, False])

    def on_end(self, tag: str) -> None:
        if tag == "testcase":
            flags = self.flags
            if not flags:
                self.passed += 1
            elif flags == _SKIPPED:
                self.only_skipped += 1
            self.case = None
        elif self.pending is not None and tag in ("failure", "error"):
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
        self.root = tag
        if is_namespaced(tag, attrs):
            raise XmlError(f"namespaced root element <{tag}> is not pytest's JUnit XML")
        if tag not in ("testsuites", "testsuite"):
            raise XmlError(f"unrecognised root element <{tag}> (expected <testsuites> "
                           "or <testsuite>)")
        if tag == "testsuites":
            self.root_attrs = attrs

    def _declare(self, attrs: dict[str, str]) -> None:
        for key in ("tests", "failures", "errors", "skipped"):
            raw = attrs.get(key)
            if raw is None:
                continue
            try:
                value = int(raw)
            except ValueError:
                self.bad_declared.append(f"{key}={raw!r}")
                continue
            self.declared[key] = self.declared.get(key, 0) + value

    def _open(self, kind: str, attrs: dict[str, str]) -> None:
        sink = self.sink
        if len(sink.kept) >= sink.keep:
            sink.total += 1  # counted, never shown: no need to read its text
            return
        case = self.case or {}
        file = case.get("file") or None
        base_id, test_file = node_id(case.get("classname", ""), case.get("name", ""), file,
                                     Path(self.ctx.cwd))
        raw_message = attrs.get("message", "")
        if kind == "test_error" and raw_message.startswith("failed on teardown with"):
            base_id += "@teardown"
        location: tuple[str, int | None] | None = None
        if test_file is not None:
            line = case.get("line")
            location = (test_file, int(line) + 1 if line and line.isdigit() else None)
        text = FailureText(test_file, max(self.ctx.max_snippet_lines, 0))
        self.pending = _Pending(kind, base_id, raw_message, location, text)
        self.capture_text(True)

    def _close(self) -> None:
        pending = self.pending
        assert pending is not None
        self.pending = None
        self.capture_text(False)
        text = pending.text
        text.close()
        message = first_line(pending.message)
        if message == "collection failure" and text.last_e:
            message = cap_line(f"{message}: {clean(text.last_e[1:].strip())}")
        elif not message:
            message = cap_line(clean(text.last_e[1:].strip())) if text.last_e else (
                "test failed" if pending.kind == "test_failure" else "test error")
        location = None
        if pending.location is not None:
            path, line = pending.location
            location = self.ctx.location(path, text.test_line or line)
        finding_id = pending.base_id
        if finding_id in self.kept_ids:
            n = 2
            while f"{finding_id}#{n}" in self.kept_ids:
                n += 1
            finding_id = f"{finding_id}#{n}"
        self.kept_ids.add(finding_id)
        self.sink.add(Finding(finding_id, pending.kind, message, location,
                              text.detail(self.ctx.max_snippet_lines)))

    # -- after the read ----------------------------------------------------------

    def counts(self) -> dict[str, int]:
        return {
            "tests": self.tests,
            "passed": self.passed,
            "failures": self.failures,
            "errors": self.errors,
            "skipped": self.skipped_elements - self.xfailed,
            "xfailed": self.xfailed,
        }

    def mismatches(self, name: str) -> list[str]:
        """Notes for every declared total that disagrees with what was counted."""
        notes = [f"{name} declares a non-numeric total: {bad}" for bad in self.bad_declared]
        counted = {"tests": self.tests, "failures": self.failures, "errors": self.errors,
                   "skipped": self.skipped_elements}
        element = {"tests": "<testcase>", "failures": "<failure>", "errors": "<error>",
                   "skipped": "<skipped>"}
        for source, declared in (("<testsuite>", self.declared), ("<testsuites>",
                                                                  self._root_declared())):
            for key, value in declared.items():
                if value != counted[key]:
                    notes.append(f"{name}: {source} declares {key}={value} but the report "
                                 f"holds {counted[key]} {element[key]} element(s)")
        return notes

    def _root_declared(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for key in ("tests", "failures", "errors", "skipped"):
            raw = self.root_attrs.get(key)
            if raw is not None and raw.isdigit():
                found[key] = int(raw)
        return found


def read_junit(ctx: ParseContext, *, option: str = "junit", default: str = DEFAULT_JUNIT,
               missing_ok: bool = False) -> ParseResult | None:
    """Facts from one JUnit XML report in the run dir.

    ``None`` when the report does not exist and ``missing_ok`` (the ``coverage``
    parser reads JUnit only if the command wrote it); otherwise a missing report
    is ``parser_ok=False``: pytest always writes it when asked to, so its absence
    means the run never got that far or the command lacks ``--junitxml``.
    """
    try:
        path = ctx.artifact(option, default)
    except ArtifactError as exc:
        return ParseResult(parser_ok=False, notes=[str(exc)])
    name = str(ctx.options.get(option, default))
    if not path.is_file():
        if missing_ok and not path.exists():
            return None
        return ParseResult(parser_ok=False, notes=[
            f"JUnit report {name} not found in the run directory (exit code {ctx.rc}); "
            f"the command must write it: --junitxml {{run_dir}}/{Path(name).name}"])
    sink = FindingSink(ctx.top)
    reader = _JUnitReader(ctx, sink)
    notes: list[str] = []
    parser_ok = True
    try:
        reader.read(path)
    except XmlError as exc:
        parser_ok = False
        notes.append(f"{name} is not readable JUnit XML: {exc}")
    except OSError as exc:
        parser_ok = False
        notes.append(f"{name} could not be read: {exc.strerror or exc}")
    else:
        mismatches = reader.mismatches(name)
        if mismatches:
            parser_ok = False
            notes.extend(mismatches)
    counts = reader.counts()
    gate_failures: list[str] = []
    if parser_ok and ctx.options.get("allow_no_tests") is not True:
        gate = no_tests_gate(reader.tests, reader.tests - reader.only_skipped)
        if gate is not None:
            gate_failures.append(gate)
            notes.append(f"{gate} according to {name}; {ALLOW_NO_TESTS_HINT}")
    return sink.result(summary={"counts": counts}, parser_ok=parser_ok, notes=notes,
                       gate_failures=gate_failures)


class PytestParser(BaseParser):
    """pytest via its JUnit XML (``--junitxml {run_dir}/junit.xml``)."""

    name = "pytest"
    OPTIONS = JUNIT_OPTIONS

    def parse(self, ctx: ParseContext) -> ParseResult:
        return guarded(self.name, self._parse, ctx)

    def _parse(self, ctx: ParseContext) -> ParseResult:
        # pytest ran with the ckdn plugin under `ckdn run`: its record comes from
        # pytest's own hooks and beats any JUnit file (imported only then).
        from ckdn.parsers.pytest_evidence import EVIDENCE_FILE, evidence_result

        evidence = Path(ctx.run_dir, EVIDENCE_FILE)
        if evidence.is_file():
            return evidence_result(ctx, evidence)
        result = read_junit(ctx)
        assert result is not None  # missing_ok is False
        return result
