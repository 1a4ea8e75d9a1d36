"""The ``coverage`` parser: coverage.py's total, its ``fail_under`` gate, and test findings.

It reads coverage.py's native JSON report (``coverage_json``, used when present)
and its Cobertura XML (``coverage_xml``), plus JUnit XML (``junit``) when the
command wrote it, which gives exactly the ``pytest`` parser's test findings.

The gate compares the total the way coverage.py does (``should_fail_under`` in
``coverage/results.py``, reproduced in :mod:`ckdn.parsers.gates`): the total is
``100 * (covered lines + covered branches) / (lines + branches)``, 100 when there
is nothing to measure; it is
rounded to the report precision (at least as many decimals as ``fail_under``
itself has) before the comparison, and ``fail_under = 100`` needs exactly 100.
So ckdn and ``coverage report --fail-under`` never disagree at the boundary.
The precision is the ``precision`` option when set, else what the JSON report
shows (its ``percent_covered_display``), else coverage.py's default 0.

Guards: each report is checked against itself (the XML's per-line elements
against its declared totals and rate; the JSON's per-file summaries against its
totals and its percentage against the counts) and, when both are there, against
each other. A disagreement, an unreadable or unrecognised report, or no coverage
report at all is ``parser_ok=False`` with a note.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ckdn.parsers._xml import XmlError, XmlReader, is_namespaced
from ckdn.parsers.base import (
    ArtifactError,
    BaseParser,
    Option,
    ParseContext,
    ParseResult,
)
from ckdn.parsers.gates import display_covered, fail_under_message, should_fail_under
from ckdn.parsers.guard import guarded
from ckdn.parsers.junit import JUNIT_OPTIONS, read_junit

__all__ = ["CoverageParser", "Totals"]

DEFAULT_XML = "coverage.xml"
DEFAULT_JSON = "coverage.json"


@dataclass(frozen=True, slots=True)
class Totals:
    """The counts a coverage total is made of, and the precision the report shows."""

    lines_valid: int
    lines_covered: int
    branches_valid: int
    branches_covered: int
    files: int
    precision: int | None = None

    @property
    def percent(self) -> float:
        """coverage.py's ``Numbers.pc_covered``, computed the same way to the last bit."""
        numerator = self.lines_covered + self.branches_covered
        denominator = self.lines_valid + self.branches_valid
        if denominator > 0:
            return (100.0 * numerator) / denominator
        return 100.0

    def counts(self) -> tuple[int, int, int, int]:
        return (self.lines_valid, self.lines_covered, self.branches_valid,
                self.branches_covered)


class _Unusable(ValueError):
    """A coverage report that cannot be trusted; the message is the note."""


def _rate(hit: int, num: int) -> str:
    # coverage.py's xmlreport.rate(): the line-rate attribute it writes.
    if num in (0, hit):
        return "1"
    if hit == 0:
        return "0"
    return f"{min(max(hit / num, 0.0001), 0.9999):.4g}"


def _int(attrs: dict[str, str], key: str, where: str) -> int:
    raw = attrs.get(key)
    if raw is None or not raw.isdigit():
        raise XmlError(f"{where} has no numeric {key} attribute (found {raw!r})")
    return int(raw)


class _CoberturaReader(XmlReader):
    """Streams coverage.py's Cobertura XML, re-counting lines and branches per file."""

    def __init__(self) -> None:
        super().__init__()
        self.declared: dict[str, int] = {}
        self.line_rate = ""
        self.files = 0
        self.lines = 0
        self.covered = 0
        self.branches = 0
        self.branches_covered = 0
        self.in_method = 0

    def on_root(self, tag: str, attrs: dict[str, str]) -> None:
        if is_namespaced(tag, attrs):
            raise XmlError(f"namespaced root element <{tag}> is not coverage.py's XML")
        if tag != "coverage":
            raise XmlError(f"unrecognised root element <{tag}> (expected <coverage>)")
        for key in ("lines-valid", "lines-covered", "branches-valid", "branches-covered"):
            self.declared[key] = _int(attrs, key, "<coverage>")
        self.line_rate = attrs.get("line-rate", "")

    def on_start(self, tag: str, attrs: dict[str, str]) -> None:
        if tag == "line":
            if self.in_method:
                return
            self.lines += 1
            hits = attrs.get("hits", "0")
            if hits != "0":
                if not hits.isdigit():
                    raise XmlError(f"<line> with non-numeric hits={hits!r} at {self.position()}")
                self.covered += 1
            if attrs.get("branch") == "true":
                taken, total = _condition(attrs.get("condition-coverage", ""))
                self.branches += total
                self.branches_covered += taken
        elif tag == "class":
            self.files += 1
        elif tag == "method":
            self.in_method += 1

    def on_end(self, tag: str) -> None:
        if tag == "method":
            self.in_method -= 1


def _condition(text: str) -> tuple[int, int]:
    """``"50% (1/2)"`` -> (1, 2)."""
    _, _, ratio = text.partition("(")
    taken, _, total = ratio.rstrip(")").partition("/")
    if not (taken.isdigit() and total.isdigit()):
        raise XmlError(f"unrecognised condition-coverage {text!r}")
    return int(taken), int(total)


def read_xml(path: Path, name: str) -> Totals:
    """Totals from coverage.py's Cobertura XML, cross-checked against its own lines."""
    reader = _CoberturaReader()
    try:
        reader.read(path)
    except XmlError as exc:
        raise _Unusable(f"{name} is not readable coverage XML: {exc}") from None
    except OSError as exc:
        raise _Unusable(f"{name} could not be read: {exc.strerror or exc}") from None
    declared = reader.declared
    counted = {"lines-valid": reader.lines, "lines-covered": reader.covered,
               "branches-valid": reader.branches, "branches-covered": reader.branches_covered}
    wrong = [f"{key}={declared[key]} but its <line> elements give {counted[key]}"
             for key in counted if declared[key] != counted[key]]
    if wrong:
        raise _Unusable(f"{name} declares " + "; ".join(wrong))
    expected_rate = _rate(reader.covered, reader.lines)
    if reader.line_rate and reader.line_rate != expected_rate:
        raise _Unusable(f"{name} declares line-rate={reader.line_rate} but its counts give "
                        f"{expected_rate}")
    return Totals(reader.lines, reader.covered, reader.branches, reader.branches_covered,
                  reader.files)


def _json_int(obj: dict[str, Any], key: str, where: str, default: int | None = None) -> int:
    value = obj.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _Unusable(f"{where} has no count {key} (found {value!r})")
    return value


def read_json(path: Path, name: str) -> Totals:
    """Totals from coverage.py's JSON report, cross-checked against its per-file summaries."""
    import json

    try:
        with open(path, "rb") as handle:
            data = json.load(handle)
    except OSError as exc:
        raise _Unusable(f"{name} could not be read: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:
        raise _Unusable(f"{name} is not readable JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("totals"), dict) \
            or not isinstance(data.get("files"), dict):
        raise _Unusable(f"{name} is not coverage.py's JSON report (no totals/files objects)")
    meta = data.get("meta")
    fmt = meta.get("format") if isinstance(meta, dict) else None
    if fmt is not None and fmt not in (2, 3):
        raise _Unusable(f"{name} has JSON report format {fmt!r}; this ckdn reads formats 2-3")
    totals: dict[str, Any] = data["totals"]
    where = f"{name} totals"
    result = Totals(
        lines_valid=_json_int(totals, "num_statements", where),
        lines_covered=_json_int(totals, "covered_lines", where),
        branches_valid=_json_int(totals, "num_branches", where, 0),
        branches_covered=_json_int(totals, "covered_branches", where, 0),
        files=len(data["files"]),
        precision=_display_precision(totals.get("percent_covered_display"), where),
    )
    declared = totals.get("percent_covered")
    if declared is not None and declared != result.percent:
        raise _Unusable(f"{where} declare percent_covered={declared!r} but the counts give "
                        f"{result.percent!r}")
    summed = [0, 0, 0, 0]
    for file_name, entry in data["files"].items():
        summary = entry.get("summary") if isinstance(entry, dict) else None
        if not isinstance(summary, dict):
            raise _Unusable(f"{name}: file {file_name!r} has no summary")
        for index, key in enumerate(("num_statements", "covered_lines", "num_branches",
                                     "covered_branches")):
            summed[index] += _json_int(summary, key, f"{name}: file {file_name!r}", 0)
    if tuple(summed) != result.counts():
        raise _Unusable(f"{where} (statements, covered, branches, covered branches) = "
                        f"{result.counts()} but its files add up to {tuple(summed)}")
    return result


def _display_precision(display: object, where: str) -> int | None:
    if display is None:
        return None
    if not isinstance(display, str):
        raise _Unusable(f"{where} have a non-text percent_covered_display {display!r}")
    _, dot, decimals = display.partition(".")
    return len(decimals) if dot else 0


class CoverageParser(BaseParser):
    """coverage.py reports (``--cov-report=xml:{run_dir}/coverage.xml``), plus JUnit if present."""

    name = "coverage"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        **JUNIT_OPTIONS,
        "coverage_xml": Option("str", help="Cobertura XML in the run dir (default coverage.xml)"),
        "coverage_json": Option("str", help="coverage.py JSON in the run dir "
                                            "(default coverage.json; used when present)"),
        "fail_under": Option("number", minimum=0, maximum=100,
                             help="minimum total, compared as coverage.py does"),
        "precision": Option("int", minimum=0,
                            help="decimals the total is rounded to before fail_under "
                                 "(default: the JSON report's, else 0)"),
    }

    def parse(self, ctx: ParseContext) -> ParseResult:
        return guarded(self.name, self._parse, ctx)

    def _parse(self, ctx: ParseContext) -> ParseResult:
        result = read_junit(ctx, missing_ok=True) or ParseResult()
        summary: dict[str, Any] = dict(result.summary)
        counts: dict[str, Any] = dict(summary.get("counts", {}))
        totals = self._totals(ctx, result)
        if totals is not None:
            total = totals.percent
            precision = self._precision(ctx, totals)
            counts.update(lines_valid=totals.lines_valid, lines_covered=totals.lines_covered,
                          branches_valid=totals.branches_valid,
                          branches_covered=totals.branches_covered)
            summary["coverage"] = {"percent": total,
                                   "display": display_covered(total, precision),
                                   "precision": precision}
            fail_under = ctx.options.get("fail_under")
            if isinstance(fail_under, int | float) and not isinstance(fail_under, bool) \
                    and should_fail_under(total, float(fail_under), precision):
                result.gate_failures.append(fail_under_message(total, float(fail_under), precision))
            if totals.files == 0:
                result.gate_failures.append("coverage measured no files")
                result.notes.append("the coverage report lists no measured file: nothing "
                                    "was verified (check --cov / [run] source)")
        summary.pop("counts", None)
        result.summary = {"counts": counts, **summary}
        return result

    def _totals(self, ctx: ParseContext, result: ParseResult) -> Totals | None:
        """The totals of the JSON report (preferred) and/or the XML, checked to agree."""
        found: list[tuple[str, Totals]] = []
        names: list[str] = []
        for option, default, reader in (("coverage_json", DEFAULT_JSON, read_json),
                                        ("coverage_xml", DEFAULT_XML, read_xml)):
            name = str(ctx.options.get(option, default))
            names.append(name)
            try:
                path = ctx.artifact(option, default)
            except ArtifactError as exc:
                result.parser_ok = False
                result.notes.append(str(exc))
                continue
            if not path.exists():
                continue
            try:
                found.append((name, reader(path, name)))
            except _Unusable as exc:
                result.parser_ok = False
                result.notes.append(str(exc))
        if not found:
            if result.parser_ok:
                result.parser_ok = False
                result.notes.append(
                    f"no coverage report in the run directory (looked for {' and '.join(names)}; "
                    f"exit code {ctx.rc}); the command must write one: "
                    f"--cov-report=xml:{{run_dir}}/{Path(names[1]).name}")
            return None
        primary_name, primary = found[0]
        for other_name, other in found[1:]:
            if other.counts() != primary.counts():
                result.parser_ok = False
                result.notes.append(
                    f"{primary_name} and {other_name} disagree: (statements, covered, branches, "
                    f"covered branches) = {primary.counts()} vs {other.counts()}")
        return primary

    @staticmethod
    def _precision(ctx: ParseContext, totals: Totals) -> int:
        option = ctx.options.get("precision")
        if isinstance(option, int) and not isinstance(option, bool) and option >= 0:
            return option
        return totals.precision if totals.precision is not None else 0
