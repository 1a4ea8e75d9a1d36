"""Reading coverage.py's reports: totals checked against themselves, and the uncovered files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from ckdn.parsers._jsonstream import JsonStream, TooLarge
from ckdn.parsers._xml import XmlError, XmlReader, is_namespaced
from ckdn.parsers.base import ParseContext, cap_line
from ckdn.parsers.gates import MISSING_LINES_PREVIEW, FileTally, WorstFiles

__all__ = ["DEFAULT_JSON", "DEFAULT_XML", "Totals", "Unusable", "read_json", "read_xml"]

# Both readers return the same :class:`Totals` for the same measurement: the
# Cobertura XML is streamed (its per-line elements re-counted against its declared
# totals and rate), and so is the JSON report, file by file (its per-file summaries
# added up against its totals, and each file's line and branch lists against its
# summary; what a file entry holds beyond those, such as ``contexts`` or
# ``functions``, is stepped over unread).
# Every file that is not fully covered goes through a :class:`~ckdn.parsers.gates.FileTally`
# into a bounded :class:`~ckdn.parsers.gates.WorstFiles`. A report that disagrees
# with itself raises :class:`Unusable`, whose message is the parser's note.

DEFAULT_XML = "coverage.xml"
DEFAULT_JSON = "coverage.json"
#: The longest ``<source>`` path read (a path, not a document).
_SOURCE_MAX = 4096
#: The longest file name kept for the worst-covered list (the digest shows 300).
_NAME_MAX = 1024
#: The most JSON text of one file entry's line and branch lists: decoded into sets and
#: sorted, they cost about twenty times that, and 1 Mi characters are over 100,000 lines.
_ENTRY_MAX = 1024 * 1024
#: The lists of a file entry the reader needs; the rest is skipped.
_ENTRY_KEYS = ("summary", "executed_lines", "missing_lines", "executed_branches",
               "missing_branches")


@dataclass(frozen=True, slots=True)
class Totals:
    """The counts a coverage total is made of, and the precision the report shows."""

    lines_valid: int
    lines_covered: int
    branches_valid: int
    branches_covered: int
    files: int
    precision: int | None = None
    #: The files that are not fully covered (the worst kept), from the same report.
    worst: WorstFiles | None = field(default=None, compare=False)

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


class Unusable(ValueError):
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

    def __init__(self, ctx: ParseContext) -> None:
        super().__init__()
        self.cwd = PurePath(ctx.cwd)
        self.preview = _preview(ctx)
        self.worst = WorstFiles(ctx.top)
        self.declared: dict[str, int] = {}
        self.line_rate = ""
        self.files = 0
        self.lines = 0
        self.covered = 0
        self.branches = 0
        self.branches_covered = 0
        self.in_method = 0
        self.sources: list[str] = []  # the first two: one is all ``_shown`` needs to know
        self.source_count = 0
        self.text: list[str] = []
        self.tally: FileTally | None = None

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
            if not self.in_method:
                self._line(attrs)
        elif tag == "class":
            self.files += 1
            self.tally = FileTally(cap_line(self._shown(attrs.get("filename", "")), _NAME_MAX),
                                   self.preview)
        elif tag == "method":
            self.in_method += 1
        elif tag == "source":
            self.text = []
            self.capture_text(True)

    def _line(self, attrs: dict[str, str]) -> None:
        self.lines += 1
        hits = attrs.get("hits", "0")
        if hits != "0" and not hits.isdigit():
            raise XmlError(f"<line> with non-numeric hits={hits!r} at {self.position()}")
        hit = hits != "0"
        self.covered += hit
        tally = self.tally
        if tally is not None:
            tally.line(_int(attrs, "number", f"<line> at {self.position()}"), hit)
        if attrs.get("branch") == "true":
            taken, total = _condition(attrs.get("condition-coverage", ""))
            self.branches += total
            self.branches_covered += taken
            if tally is not None:
                missed = [dest for dest in attrs.get("missing-branches", "").split(",") if dest]
                tally.branch(int(attrs["number"]), total, taken, missed, hit)

    def on_text(self, data: str) -> None:
        if sum(map(len, self.text)) < _SOURCE_MAX:
            self.text.append(data)

    def on_end(self, tag: str) -> None:
        if tag == "method":
            self.in_method -= 1
        elif tag == "class" and self.tally is not None:
            self.worst.add(self.tally)
            self.tally = None
        elif tag == "source":
            self.capture_text(False)
            self.source_count += 1
            if len(self.sources) < 2:
                self.sources.append("".join(self.text).strip())

    def _shown(self, filename: str) -> str:
        """A file as the reader knows it: under the one ``<source>``, relative to the cwd.

        coverage.py names a file relative to its source directory; with several
        sources the name alone is all the report says.
        """
        if self.source_count != 1 or not self.sources[0]:
            return filename
        path = PurePath(self.sources[0], filename)
        try:
            return path.relative_to(self.cwd).as_posix()
        except ValueError:
            return path.as_posix()


def _condition(text: str) -> tuple[int, int]:
    """``"50% (1/2)"`` -> (1, 2)."""
    _, _, ratio = text.partition("(")
    taken, _, total = ratio.rstrip(")").partition("/")
    if not (taken.isdigit() and total.isdigit()):
        raise XmlError(f"unrecognised condition-coverage {text!r}")
    return int(taken), int(total)


def read_xml(path: Path, name: str, ctx: ParseContext) -> Totals:
    """Totals from coverage.py's Cobertura XML, cross-checked against its own lines."""
    reader = _CoberturaReader(ctx)
    try:
        reader.read(path)
    except XmlError as exc:
        raise Unusable(f"{name} is not readable coverage XML: {exc}") from None
    except OSError as exc:
        raise Unusable(f"{name} could not be read: {exc.strerror or exc}") from None
    declared = reader.declared
    counted = {"lines-valid": reader.lines, "lines-covered": reader.covered,
               "branches-valid": reader.branches, "branches-covered": reader.branches_covered}
    wrong = [f"{key}={declared[key]} but its <line> elements give {counted[key]}"
             for key in counted if declared[key] != counted[key]]
    if wrong:
        raise Unusable(f"{name} declares " + "; ".join(wrong))
    expected_rate = _rate(reader.covered, reader.lines)
    if reader.line_rate and reader.line_rate != expected_rate:
        raise Unusable(f"{name} declares line-rate={reader.line_rate} but its counts give "
                        f"{expected_rate}")
    return Totals(reader.lines, reader.covered, reader.branches, reader.branches_covered,
                  reader.files, worst=reader.worst)


def _json_int(obj: dict[str, Any], key: str, where: str, default: int | None = None) -> int:
    value = obj.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise Unusable(f"{where} has no count {key} (found {value!r})")
    return value


def read_json(path: Path, name: str, ctx: ParseContext) -> Totals:
    """Totals from coverage.py's JSON report, cross-checked against its per-file summaries."""
    try:
        with JsonStream.open(path, cap=_ENTRY_MAX) as reader:
            return _JsonReport(name, ctx).read(reader)
    except Unusable:
        raise
    except OSError as exc:
        raise Unusable(f"{name} could not be read: {exc.strerror or exc}") from None
    except TooLarge as exc:
        raise Unusable(f"{name} holds {exc}: refused unread, so the report counts for "
                       "nothing") from None
    except (ValueError, RecursionError) as exc:
        raise Unusable(f"{name} is not readable JSON: {exc}") from None


class _JsonReport:
    """coverage.py's JSON report, streamed: ``files`` entry by entry, the rest whole.

    coverage.py writes ``totals`` after ``files``, so each file is added up as it
    comes and checked against the totals at the end; the first file that disagrees
    with itself is remembered (the rest are stepped over) and reported after the
    document's own shape and totals, in the order a whole-document check would.
    """

    def __init__(self, name: str, ctx: ParseContext) -> None:
        self.name = name
        self.preview = _preview(ctx)
        self.worst = WorstFiles(ctx.top)
        self.summed = [0, 0, 0, 0]
        self.files = 0
        self.problem: str | None = None

    def read(self, reader: JsonStream) -> Totals:
        name = self.name
        meta: Any = None
        totals: Any = None
        files_seen = False
        if reader.peek() == "{":
            for key in reader.members():
                if key == "meta":
                    meta = reader.value()
                elif key == "totals":
                    totals = reader.value()
                elif key == "files" and reader.peek() == "{":
                    files_seen = True
                    for file_name in reader.members():
                        self._file(reader, file_name)
        reader.finish()
        if not isinstance(totals, dict) or not files_seen:
            raise Unusable(f"{name} is not coverage.py's JSON report (no totals/files objects)")
        fmt = meta.get("format") if isinstance(meta, dict) else None
        if fmt is not None and fmt not in (2, 3):
            raise Unusable(f"{name} has JSON report format {fmt!r}; this ckdn reads formats 2-3")
        where = f"{name} totals"
        result = Totals(
            lines_valid=_json_int(totals, "num_statements", where),
            lines_covered=_json_int(totals, "covered_lines", where),
            branches_valid=_json_int(totals, "num_branches", where, 0),
            branches_covered=_json_int(totals, "covered_branches", where, 0),
            files=self.files,
            precision=_display_precision(totals.get("percent_covered_display"), where),
        )
        declared = totals.get("percent_covered")
        if declared is not None and declared != result.percent:
            raise Unusable(f"{where} declare percent_covered={declared!r} but the counts give "
                           f"{result.percent!r}")
        if self.problem is not None:
            raise Unusable(self.problem)
        if tuple(self.summed) != result.counts():
            raise Unusable(f"{where} (statements, covered, branches, covered branches) = "
                           f"{result.counts()} but its files add up to {tuple(self.summed)}")
        return Totals(*result.counts(), files=result.files, precision=result.precision,
                      worst=self.worst)

    def _file(self, reader: JsonStream, file_name: str) -> None:
        """One entry of ``files``: its summary and line lists, the rest stepped over."""
        self.files += 1
        if self.problem is not None:
            return  # already unusable: the rest is only counted
        shown = cap_line(file_name, _NAME_MAX)
        where = f"{self.name}: file {shown!r}"
        entry: dict[str, Any] = {}
        if reader.peek() == "{":
            start = reader.position
            for key in reader.members():
                if key in _ENTRY_KEYS:
                    entry[key] = reader.value()
                    if reader.position - start > _ENTRY_MAX:
                        raise TooLarge(_ENTRY_MAX, start, f"file entry ({shown})")
        summary = entry.get("summary")
        try:
            if not isinstance(summary, dict):
                raise Unusable(f"{where} has no summary")
            counts = [_json_int(summary, key, where, 0)
                      for key in ("num_statements", "covered_lines", "num_branches",
                                  "covered_branches")]
            self.summed = [a + b for a, b in zip(self.summed, counts, strict=True)]
            self.worst.add(_json_file(entry, shown, counts, where, self.preview))
        except Unusable as exc:
            self.problem = str(exc)


def _json_file(entry: dict[str, Any], file: str, counts: list[int], where: str,
               preview: int) -> FileTally:
    """One file of the JSON report, fed to a tally in line order, checked against its summary."""
    executed, missing = _json_lines(entry, "executed_lines", where), \
        _json_lines(entry, "missing_lines", where)
    taken, missed = _json_arcs(entry, "executed_branches", where), \
        _json_arcs(entry, "missing_branches", where)
    # coverage.py counts the untaken exits of a `# pragma: no branch` line as covered
    # without listing them: the summary's covered branches are all but the missed ones.
    unlisted = counts[3] - len(taken)
    if (len(executed) + len(missing), len(executed)) != (counts[0], counts[1]) \
            or unlisted < 0 or counts[2] - len(missed) != counts[3]:
        raise Unusable(f"{where} lists {len(executed)} executed and {len(missing)} missing "
                        f"lines, {len(taken)} taken and {len(missed)} missed branches, but its "
                        f"summary counts (statements, covered, branches, covered branches) = "
                        f"{tuple(counts)}")
    exits: dict[int, tuple[int, list[str]]] = {}
    for source, _ in taken:
        count, dests = exits.get(source, (0, []))
        exits[source] = (count + 1, dests)
    for source, dest in missed:
        count, dests = exits.get(source, (0, []))
        exits[source] = (count, [*dests, str(dest) if dest > 0 else "exit"])
    hit = set(executed)
    tally = FileTally(file, preview)
    for number in sorted(hit.union(missing)):
        tally.line(number, number in hit)
        if number in exits:
            count, dests = exits[number]
            tally.branch(number, count + len(dests), count, dests, number in hit)
    tally.unlisted_branches(unlisted)
    return tally


def _json_lines(entry: dict[str, Any], key: str, where: str) -> list[int]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in value):
        raise Unusable(f"{where} has a malformed {key} (not a list of line numbers)")
    return value


def _json_arcs(entry: dict[str, Any], key: str, where: str) -> list[tuple[int, int]]:
    value = entry.get(key, [])
    arcs: list[tuple[int, int]] = []
    if isinstance(value, list):
        for arc in value:
            if not (isinstance(arc, list) and len(arc) == 2 and all(
                    isinstance(n, int) and not isinstance(n, bool) for n in arc)):
                break
            arcs.append((arc[0], arc[1]))
        else:
            return arcs
    raise Unusable(f"{where} has a malformed {key} (not a list of [from, to] pairs)")


def _preview(ctx: ParseContext) -> int:
    value = ctx.options.get("missing_lines_preview", MISSING_LINES_PREVIEW)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else MISSING_LINES_PREVIEW


def _display_precision(display: object, where: str) -> int | None:
    if display is None:
        return None
    if not isinstance(display, str):
        raise Unusable(f"{where} have a non-text percent_covered_display {display!r}")
    _, dot, decimals = display.partition(".")
    return len(decimals) if dot else 0
