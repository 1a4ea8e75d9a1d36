"""JUnit XML from any producer, its variant sniffed and named (pytest xunit1/xunit2,
Surefire/Failsafe, jest-junit, go-junit-report, ruff, mypy, bandit, ckdn's own export),
every suite's declared totals checked against the testcases it holds."""

from __future__ import annotations

from ckdn.imports._model import Imported, ImportRefused, Tally, declared_mismatch, place
from ckdn.parsers.base import Finding, ParseContext, cap_line
from ckdn.parsers.readers import MAX_DEPTH, XmlError, XmlReader

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable

    from ckdn.parsers.base import FindingSink

__all__ = ["CHECK_CASE", "EXPORT_ROOT", "read_junit"]

#: The root ``name`` ckdn's export writes: its testcases carry a finding's fields exactly.
EXPORT_ROOT = "ckdn"
#: The ``classname`` of the testcase ckdn's export writes for the check itself.
CHECK_CASE = "ckdn.check"
#: The element a file of several top-level suites is read inside.
FRAGMENT = "ckdn-fragment"
#: Characters of a failure's text kept for its snippet.
_TEXT_KEPT = 8192
_OUTCOMES = ("failure", "error", "skipped")
#: Surefire's rerun elements: a flaky pass (flaky*) or a failure that stayed (rerun*).
_RERUNS = ("flakyFailure", "flakyError", "rerunFailure", "rerunError")
#: What a testcase may hold besides its outcome; anything else is a variant ckdn does not read.
_CASE_PARTS = frozenset(("system-out", "system-err", "properties", "property", "stackTrace",
                         "skipped", "failure", "error", *_RERUNS))
_ELEMENT_COUNT = {"failure": "failures", "error": "errors", "skipped": "skipped"}
#: Producers that count every failure in ``errors`` (their variants say so).
_ERRORS_COUNT_FAILURES = frozenset(("mocha", "eslint"))
_SUITE_PARTS = frozenset(("testsuite", "testcase", "properties", "property", "system-out",
                          "system-err"))


class _Suite:
    """An open suite: its declared totals, and the reader's element counts when it opened
    (what it holds is the counts at its end less these)."""

    __slots__ = ("declared", "name", "start")

    def __init__(self, attrs: dict[str, str], seen: dict[str, int]) -> None:
        self.name = cap_line(attrs.get("name", ""), 200)
        declared: dict[str, object] = {
            key: attrs[key] for key in ("tests", "failures", "errors", "skipped") if key in attrs}
        if "skipped" not in declared and "skips" in attrs:  # mypy writes ``skips``
            declared["skipped"] = attrs["skips"]
        self.declared = declared
        self.start = dict(seen)


class _Reader(XmlReader):
    plain_names = False  # Surefire declares its schema with an ``xsi:`` attribute

    def __init__(self, ctx: ParseContext, sink: FindingSink) -> None:
        super().__init__()
        self.ctx = ctx
        self.sink = sink
        self.tally = Tally()
        self.root = ""
        self.root_name = ""
        self.suites: list[_Suite] = []
        self.suite_total = 0
        self.nested = False
        self.producer_hints: set[str] = set()
        self.case: dict[str, str] | None = None
        self.outcome: tuple[str, dict[str, str]] | None = None
        self.in_property = False
        self.text: list[str] = []
        self.text_size = 0
        self.capturing = False
        self.mismatch: str | None = None
        self.counts = {"tests": 0, "passed": 0, "failures": 0, "errors": 0, "skipped": 0,
                       "flaky": 0}
        self.file_line = False
        self.open_suites = 0
        #: elements read so far (testcases, failures, errors, skipped), for suites' totals
        self.seen = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        self.reruns_total = 0
        self.partial = False
        self.root_attrs: dict[str, str] = {}
        self.first_suite = ""
        self.check_error: str | None = None
        self.check_failed: str | None = None

    def handlers(self) -> tuple[Callable[[str, dict[str, str]], None], Callable[[str], None]]:
        """A passed testcase (nearly every element of a big file) costs one call an event:
        it opens and closes here, counted in ``passed`` and folded into the counts before
        any other event is handled (the root's end is one, so nothing stays unfolded)."""
        if self.plain_names:
            return super().handlers()
        on_start, on_end, too_deep = self.on_start, self.on_end, self.too_deep
        depth, passed = 1, 0

        def start(tag: str, attrs: dict[str, str]) -> None:
            nonlocal depth, passed
            depth += 1
            if depth > MAX_DEPTH:
                too_deep()
            if tag == "testcase" and self.case is None:  # on_start's own branch, inline
                self.case = attrs  # (``outcome`` is None outside a testcase)
                if "file" in attrs or "line" in attrs:
                    self.file_line = True
                return
            if passed:
                self._passed(passed)
                passed = 0
            on_start(tag, attrs)

        def end(tag: str) -> None:
            nonlocal depth, passed
            depth -= 1
            if tag == "testcase" and self.outcome is None:
                case = self.case
                if case and case.get("name"):  # what _close_case counts of a passed case
                    self.case = None
                    passed += 1
                    return
            if passed:
                self._passed(passed)
                passed = 0
            on_end(tag)

        return start, end

    def _passed(self, count: int) -> None:
        """``count`` passed testcases with a name: read, attached, counted."""
        seen, counts, tally = self.seen, self.counts, self.tally
        seen["tests"] += count
        counts["tests"] += count
        counts["passed"] += count
        tally.read += count
        tally.attached += count

    def on_root(self, tag: str, attrs: dict[str, str]) -> None:
        if tag not in ("testsuites", "testsuite", FRAGMENT):
            raise ImportRefused(f"the root element is <{cap_line(tag, 40)}>, not <testsuites> "
                                "or <testsuite>: not JUnit XML")
        self.root = tag
        self.root_name = attrs.get("name", "")
        self.root_attrs = attrs if tag == "testsuites" else {}
        for key, value in attrs.items():
            if key.endswith("noNamespaceSchemaLocation") and "surefire" in value:
                self.producer_hints.add("surefire")
            if key.endswith("noNamespaceSchemaLocation") and "failsafe" in value:
                self.producer_hints.add("failsafe")
        if tag == "testsuites":
            self.suites.append(_Suite(attrs, self.seen))

    def on_start(self, tag: str, attrs: dict[str, str]) -> None:
        if self.case is not None:
            self._case_part(tag, attrs)
        elif tag == "testcase":
            self.case = attrs
            self.outcome = None
            if "file" in attrs or "line" in attrs:
                self.file_line = True
        elif tag == "testsuite":
            self.open_suites += 1
            self.nested = self.nested or self.open_suites > 1
            self.suite_total += 1
            suite = _Suite(attrs, self.seen)
            self.first_suite = self.first_suite or suite.name
            self.suites.append(suite)
            if "schemaLocation" in "".join(attrs) and "surefire" in "".join(attrs.values()):
                self.producer_hints.add("surefire")
            if suite.name == "pytest":
                self.producer_hints.add("pytest")
            elif suite.name == "Mocha Tests":  # mocha's xunit reporter
                self.producer_hints.add("mocha")
            elif attrs.get("package") == "org.eslint":  # eslint's junit formatter
                self.producer_hints.add("eslint")
            elif "disabled" in attrs and "hostname" in attrs and not self.root_attrs:
                self.producer_hints.add("node-test")
        elif tag in ("testsuites", FRAGMENT) and not self.suite_total:
            return  # the root, seen again by on_start
        elif tag == "property":
            name = attrs.get("name", "")
            if name == "go.version":
                self.producer_hints.add("go-junit-report")
        elif tag not in _SUITE_PARTS:
            raise ImportRefused(f"an element <{cap_line(tag, 40)}> at {self.position()} that "
                                "no JUnit variant ckdn reads holds there")

    def _case_part(self, tag: str, attrs: dict[str, str]) -> None:
        if tag not in _CASE_PARTS:
            raise ImportRefused(f"an element <{cap_line(tag, 40)}> inside a <testcase> at "
                                f"{self.position()}: not a JUnit variant ckdn reads")
        if tag in _RERUNS:
            self.producer_hints.add("surefire")
            self.reruns_total += 1
            if tag.startswith("flaky") and self.outcome is None:
                self.outcome = ("flaky", attrs)
            return
        if tag in _OUTCOMES:
            previous = self.outcome[0] if self.outcome is not None else None
            if previous in (None, "flaky") or (previous == "failure" and tag == "error"):
                self.outcome = (tag, attrs)
            self.seen[_ELEMENT_COUNT[tag]] += 1
            if tag in ("failure", "error") and not self.text:
                self.capturing = True
                self.capture_text(True)

    def on_text(self, data: str) -> None:
        if self.text_size < _TEXT_KEPT:
            self.text.append(data[:_TEXT_KEPT - self.text_size])
            self.text_size += len(self.text[-1])

    def on_end(self, tag: str) -> None:
        if tag == "testcase" and self.case is not None:
            self._close_case(self.case)
            self.case = self.outcome = None
        elif tag in ("failure", "error") and self.capturing:
            self.capturing = False
            self.capture_text(False)
        elif tag == "testsuite" or (tag == "testsuites" and self.root == "testsuites"):
            self.open_suites -= tag == "testsuite"
            suite = self.suites.pop()
            if self.mismatch is None:
                what = f"<{tag}> {suite.name!r}" if suite.name else f"<{tag}>"
                seen, start = self.seen, suite.start
                declared = suite.declared
                counts = {key: seen[key] - start[key] for key in seen}
                if self.producer_hints & _ERRORS_COUNT_FAILURES:
                    # mocha and eslint write every failure into ``errors`` (mocha declares
                    # failures="0" beside it): compared as they mean it
                    declared = {k: v for k, v in declared.items() if k != "failures"}
                    counts = {**counts, "errors": counts["failures"] + counts["errors"]}
                if "surefire" in self.producer_hints and self.reruns_total:
                    # Surefire's totals after a rerun round count that round alone (the
                    # reruns' tests); its failures and errors still say how many stayed red
                    declared = {k: v for k, v in declared.items() if k in ("failures", "errors")}
                    self.partial = True
                self.mismatch = declared_mismatch(what, declared, counts)

    def _close_case(self, case: dict[str, str]) -> None:
        self.seen["tests"] += 1
        counts, tally = self.counts, self.tally
        counts["tests"] += 1
        if self.outcome is None:  # the usual testcase: passed, nothing inside it
            counts["passed"] += 1
            if case.get("name"):
                tally.read += 1
                tally.attached += 1
            else:
                tally.leave("no_name")
            return
        kind, attrs = self.outcome
        text, self.text, self.text_size = "".join(self.text), [], 0
        name = case.get("name", "")
        if kind == "flaky":
            counts["flaky"] += 1
            kind = "passed"
        if kind == "passed":
            counts["passed"] += 1
        elif kind == "skipped":
            counts["skipped"] += 1
        else:
            counts["failures" if kind == "failure" else "errors"] += 1
        if not name:
            self.tally.leave("no_name")
        else:
            self.tally.attach()
        if kind not in ("failure", "error"):
            return
        if self.root_name == EXPORT_ROOT:
            self._exported(case, attrs)
            return
        if not self.sink.wants():
            self.sink.total += 1
            return
        classname = case.get("classname", "")
        case_id = f"{classname}::{name}" if classname and name else (name or classname or "?")
        location, _why = place(self.ctx, case.get("file"), case.get("line"))
        lines = text.strip().splitlines()
        message = attrs.get("message") or (lines or [""])[0] or attrs.get("type", "") or kind
        # the detail only of a finding the digest may show (findings.jsonl keeps none)
        detail = self.ctx.snippet(lines) if lines and self.sink.keeps() else ()
        self.sink.add(Finding(cap_line(case_id, 500), f"test_{kind}", cap_line(message, 2000),
                              location, detail))

    def _exported(self, case: dict[str, str], attrs: dict[str, str]) -> None:
        """ckdn's own export: the finding's fields as it wrote them, exactly."""
        if case.get("classname") == CHECK_CASE:
            if self.outcome is not None and self.outcome[0] == "error":
                self.check_error = attrs.get("message", "") or "error"
            else:
                self.check_failed = attrs.get("message", "") or "fail"
            return
        self.sink.add(Finding(case.get("name", "?"), attrs.get("type", "?"),
                              attrs.get("message", ""), case.get("file") or None))


def _variant(reader: _Reader) -> tuple[str, str]:
    """(variant, producer) from what the file showed."""
    hints, name = reader.producer_hints, reader.root_name
    if name == EXPORT_ROOT:
        return "ckdn", "ckdn"
    if "surefire" in hints or "failsafe" in hints:
        return ("failsafe" if "failsafe" in hints else "surefire"), "maven-surefire"
    if "pytest" in hints:
        return ("pytest-xunit1" if reader.file_line else "pytest-xunit2"), "pytest"
    if "go-junit-report" in hints:
        return "go-junit-report", "go-junit-report"
    for hint, variant, producer in (("mocha", "mocha-xunit", "mocha"),
                                    ("eslint", "eslint-junit", "eslint"),
                                    ("node-test", "node-test", "node --test")):
        if hint in hints:
            return variant, producer
    if "jest" in name.lower():
        return "jest-junit", "jest-junit"
    if name in ("ruff", "mypy", "bandit"):
        return "junit", name
    suite = reader.first_suite
    if suite in ("mypy", "bandit", "ruff"):
        return "junit", suite
    return "junit", name or suite or "unknown"


def read_junit(ctx: ParseContext, path: str) -> Imported:
    """The JUnit file at ``path`` (inside the run dir) read whole, or refused."""
    reader = _Reader(ctx, ctx.sink())
    try:
        try:
            reader.read(path)
        except XmlError as exc:
            if "junk after document element" not in str(exc):
                raise
            reader = _Reader(ctx, ctx.sink())  # several top-level suites: no root element
            reader.read(path, fragment=FRAGMENT)
            reader.producer_hints.add("fragment")
    except XmlError as exc:
        raise ImportRefused(f"not readable as JUnit XML: {exc}") from None
    variant, producer = _variant(reader)
    if "fragment" in reader.producer_hints:
        variant += "+no-root"
    if reader.nested:
        variant += "+nested"
    counts = {key: value for key, value in reader.counts.items() if value or key == "tests"}
    result = reader.sink.result(summary={"counts": counts, "suites": reader.suite_total})
    if reader.partial:
        result.notes.append(f"Surefire reran failing tests ({reader.reruns_total} rerun(s)); "
                            "its declared tests and skipped count the last round alone, so only "
                            "its failures and errors were checked")
    if reader.check_failed and not result.total:
        result.gate_failures.append(cap_line(reader.check_failed))
    if reader.check_error:
        result.parser_ok = False
        result.notes.append(cap_line(f"the exported run was not green: {reader.check_error}"))
    return Imported(format="junit", variant=variant, producer=producer, result=result,
                    cases=reader.counts["tests"], tally=reader.tally, mismatch=reader.mismatch)
