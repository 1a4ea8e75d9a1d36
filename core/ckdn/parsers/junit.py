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

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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

#: ``path:line: rest`` - a traceback entry's location line in pytest's failure
#: text (long style ends with ``path:line: ExcType``; short style ``path:line: in f``).
_LOCATION = re.compile(r"((?:[A-Za-z]:)?[^:\s][^:]*):(\d+):(?: |$)")
#: ``E     File "path", line N`` - where a SyntaxError in collected code points.
_E_FILE = re.compile(r'E\s+File "([^"]+)", line (\d+)')
#: ANSI escape sequences, raw or as pytest's visible ``#x1B`` escape of them.
_ANSI = re.compile(r"(?:\x1b|#x1B)\[[0-?]*[ -/]*[@-~]")
#: A partial line longer than this is kept cut; every kept line is capped anyway.
_CARRY_CAP = 4096

_FAILED = 1
_ERRORED = 2
_SKIPPED = 4
_XFAILED = 8


def _clean(text: str) -> str:
    return _ANSI.sub("", text)


def _first_line(text: str) -> str:
    line, _, _ = text.strip().partition("\n")
    return cap_line(_clean(line.rstrip()))


class _FailureText:
    """Scans one failure/error text as it streams in, keeping only what a digest shows.

    Keeps the ``E   ...`` lines (at most ``limit``, counting the rest), the last
    traceback location line (the crash location) and the last line number the
    traceback reports inside the test's own file.
    """

    __slots__ = ("carry", "crash", "e_extra", "e_lines", "last_e", "limit", "test_file",
                 "test_line")

    def __init__(self, test_file: str | None, limit: int) -> None:
        self.test_file = test_file
        self.limit = limit
        self.carry = ""
        self.e_lines: list[str] = []
        self.e_extra = 0
        self.last_e = ""
        self.crash: str | None = None
        self.test_line: int | None = None

    def feed(self, data: str) -> None:
        lines = (self.carry + data).split("\n")
        carry = lines.pop()
        self.carry = carry if len(carry) <= _CARRY_CAP else carry[:_CARRY_CAP]
        for line in lines:
            self._line(line)

    def close(self) -> None:
        if self.carry:
            self._line(self.carry)
            self.carry = ""

    def _line(self, line: str) -> None:
        if line[:2] == "E " or line == "E":
            line = line.rstrip()
            self.last_e = line
            if self.test_file is not None and line.startswith("E     File "):
                found = _E_FILE.match(line)
                if found is not None and _same_file(found.group(1), self.test_file):
                    self.test_line = int(found.group(2))
            if len(self.e_lines) < self.limit:
                self.e_lines.append(cap_line(_clean(line)))
            else:
                self.e_extra += 1
            return
        if not line or line[0].isspace():
            return
        match = _LOCATION.match(line)
        if match is None:
            return
        self.crash = line.rstrip()
        if self.test_file is not None and _same_file(match.group(1), self.test_file):
            self.test_line = int(match.group(2))

    def detail(self, max_lines: int) -> tuple[str, ...]:
        """E lines then the crash location line, at most ``max_lines`` in all."""
        if max_lines <= 0:
            return ()
        lines = list(self.e_lines)
        extra = self.e_extra
        room = max_lines - (1 if self.crash else 0)
        if len(lines) + extra > room:
            keep = max(room - 1, 0)
            extra += len(lines) - keep
            lines = lines[:keep]
            lines.append(f"... [+{extra} more lines]")
        if self.crash:
            lines.append(cap_line(_clean(self.crash)))
        return tuple(lines[:max_lines])


def _same_file(path: str, test_file: str) -> bool:
    path = path.replace("\\", "/")
    return path == test_file or path.endswith("/" + test_file)


def _looks_like_class(part: str) -> bool:
    return part[:1].isupper()


def node_id(classname: str, name: str, file: str | None, cwd: Path | None = None
            ) -> tuple[str, str | None]:
    """The pytest node id of a JUnit testcase, and the test's file (``None`` if unknown).

    pytest writes ``classname`` as the dotted module path plus class names and
    ``name`` as the function name with its parameters. ``xunit1`` also gives the
    ``file``; ``xunit2`` does not, so the module/class boundary is the last run
    of capitalised parts (class names) unless ``cwd`` holds a file that says
    otherwise. A collection error has an empty ``classname`` and the dotted
    module path as ``name``.
    """
    parts = classname.split(".") if classname else []
    if not parts:
        path = file or _module_path(name.split("."), cwd, collector=True)
        return path, path
    if file is None and classname == "pytest" and name == "internal":
        return "pytest::internal", None
    if file is not None:
        module = file.removesuffix(".py").replace("\\", "/").split("/")
        classes = _after(parts, module)
        if classes is None:
            classes = _trailing_classes(parts)
        return "::".join([file, *classes, name]), file
    split = _split(parts, cwd)
    path = _module_path(parts[:split], cwd, collector=False)
    return "::".join([path, *parts[split:], name]), path


def _after(parts: list[str], module: list[str]) -> list[str] | None:
    size = len(module)
    for start in range(len(parts) - size + 1):
        if parts[start:start + size] == module:
            return parts[start + size:]
    return None


def _trailing_classes(parts: list[str]) -> list[str]:
    split = len(parts)
    while split > 1 and _looks_like_class(parts[split - 1]):
        split -= 1
    return parts[split:]


def _split(parts: list[str], cwd: Path | None) -> int:
    """How many leading ``parts`` name the module (the rest are classes).

    Only findings that are kept get an id, so this looks at the disk at most
    ``top`` times a run.
    """
    guess = len(parts) - len(_trailing_classes(parts))
    if cwd is None or (cwd / ("/".join(parts[:guess]) + ".py")).is_file():
        return guess
    for size in range(len(parts), 0, -1):
        if (cwd / ("/".join(parts[:size]) + ".py")).is_file():
            return size
    return guess


def _module_path(parts: list[str], cwd: Path | None, *, collector: bool) -> str:
    path = "/".join(parts)
    if collector and cwd is not None and not (cwd / (path + ".py")).is_file() \
            and (cwd / path).is_dir():
        return path
    return path + ".py"


class _Pending:
    """A ``<failure>``/``<error>`` element being read."""

    __slots__ = ("base_id", "kind", "location", "message", "text")

    def __init__(self, kind: str, base_id: str, message: str, location: tuple[str, int | None]
                 | None, text: _FailureText) -> None:
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
        text = _FailureText(test_file, max(self.ctx.max_snippet_lines, 0))
        self.pending = _Pending(kind, base_id, raw_message, location, text)
        self.capture_text(True)

    def _close(self) -> None:
        pending = self.pending
        assert pending is not None
        self.pending = None
        self.capture_text(False)
        text = pending.text
        text.close()
        message = _first_line(pending.message)
        if message == "collection failure" and text.last_e:
            message = cap_line(f"{message}: {_clean(text.last_e[1:].strip())}")
        elif not message:
            message = cap_line(_clean(text.last_e[1:].strip())) if text.last_e else (
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
        ran = reader.tests - reader.only_skipped
        if ran == 0:
            gate = "no tests ran" if reader.tests == 0 else \
                f"no tests ran: all {reader.tests} test(s) skipped"
            gate_failures.append(gate)
            notes.append(f"{gate} according to {name}; set allow_no_tests = true if this "
                         "check may legitimately run none")
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
