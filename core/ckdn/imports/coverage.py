"""Coverage files: Cobertura XML (its two DTDs told apart: coverage-04 declares line counts,
coverage-03 only rates) and lcov tracefiles, each file's lines counted and checked
against the totals the file declares. Coverage has no failures: what is read is figures."""

from __future__ import annotations

from ckdn.imports._model import Imported, ImportRefused, Tally, declared_mismatch, place
from ckdn.parsers.base import ParseContext, ParseResult, cap_line
from ckdn.parsers.readers import XmlError, XmlReader

__all__ = ["read_cobertura", "read_lcov"]

#: How far a declared rate may sit from the one read (Cobertura rounds to 4 digits or so).
_RATE_SLACK = 0.00051
#: Uncovered files named in the summary.
_TOP_FILES = 10


class _Figures:
    def __init__(self, ctx: ParseContext) -> None:
        self.ctx, self.tally = ctx, Tally()
        self.valid = self.covered = 0
        self.files = 0
        self.uncovered: list[tuple[int, str]] = []
        self.uncovered_files = 0

    def file_done(self, name: str, valid: int, covered: int) -> None:
        self.files += 1
        self.valid += valid
        self.covered += covered
        _location, why = place(self.ctx, name)
        self.tally.count(why)
        missing = valid - covered
        if missing:
            self.uncovered_files += 1
            self.uncovered.append((missing, cap_line(name, 300)))
            self.uncovered.sort(key=lambda pair: (-pair[0], pair[1]))
            del self.uncovered[_TOP_FILES:]

    def result(self) -> ParseResult:
        percent = round(100.0 * self.covered / self.valid, 2) if self.valid else 100.0
        summary = {"overall": {"line_percent": percent, "lines_valid": self.valid,
                               "lines_covered": self.covered},
                   "files": self.files, "uncovered_files_total": self.uncovered_files,
                   "top_uncovered_files": [{"path": name, "missing_lines": missing}
                                           for missing, name in self.uncovered]}
        return ParseResult(summary=summary)


class _Cobertura(XmlReader):
    bare_doctype = True  # ``<!DOCTYPE coverage SYSTEM ".../coverage-04.dtd">``: the DTD named

    def __init__(self, ctx: ParseContext) -> None:
        super().__init__()
        self.figures = _Figures(ctx)
        self.declared: dict[str, str] = {}
        self.klass: str | None = None
        self.lines: set[int] = set()
        self.hit: set[int] = set()
        self.in_method = 0
        self.version = ""

    def on_root(self, tag: str, attrs: dict[str, str]) -> None:
        if tag != "coverage":
            raise ImportRefused(f"the root element is <{cap_line(tag, 40)}>, not <coverage>: "
                                "not Cobertura XML")
        self.declared = attrs
        self.version = cap_line(attrs.get("version", ""), 40)

    def on_start(self, tag: str, attrs: dict[str, str]) -> None:
        if tag == "class":
            self.klass = attrs.get("filename", "")
            self.lines, self.hit = set(), set()
        elif tag == "method":
            self.in_method += 1
        elif tag == "line" and self.klass is not None and not self.in_method:
            number = attrs.get("number", "")
            if not number.isdigit():
                raise ImportRefused(f"a <line> without a line number at {self.position()}")
            self.lines.add(int(number))
            hits = attrs.get("hits", "0")
            if hits not in ("0", "") and hits.lstrip("-") != "0":
                self.hit.add(int(number))

    def on_end(self, tag: str) -> None:
        if tag == "method":
            self.in_method -= 1
        elif tag == "class" and self.klass is not None:
            self.figures.file_done(self.klass, len(self.lines), len(self.hit))
            self.klass = None


def read_cobertura(ctx: ParseContext, path: str) -> Imported:
    reader = _Cobertura(ctx)
    try:
        reader.read(path)
    except XmlError as exc:
        raise ImportRefused(f"not readable as Cobertura XML: {exc}") from None
    figures, declared = reader.figures, reader.declared
    named = reader.doctype[1] if reader.doctype is not None else ""
    dtd = ("coverage-04" if "lines-valid" in declared or "coverage-04" in named
           else "coverage-03")
    mismatch = declared_mismatch("<coverage>", {"lines-valid": declared.get("lines-valid"),
                                                "lines-covered": declared.get("lines-covered")}
                                 if dtd == "coverage-04" else {},
                                 {"lines-valid": figures.valid,
                                  "lines-covered": figures.covered})
    rate = declared.get("line-rate")
    if mismatch is None and rate is not None and figures.valid:
        try:
            declared_rate = float(rate)
        except ValueError:
            declared_rate = -1.0
        if abs(declared_rate - figures.covered / figures.valid) > _RATE_SLACK:
            mismatch = (f"<coverage> declares line-rate={cap_line(rate, 20)} but "
                        f"{figures.covered}/{figures.valid} lines were read covered")
    return Imported(format="cobertura", variant=dtd, producer="unknown", result=figures.result(),
                    cases=figures.files, tally=figures.tally, mismatch=mismatch)


_LCOV_KEYS = frozenset(("TN", "SF", "VER", "FN", "FNDA", "FNF", "FNH", "FNL", "FNA", "BRDA",
                        "BRF", "BRH", "DA", "LF", "LH"))
_LINE_CAP = 64 * 1024


def read_lcov(ctx: ParseContext, path: str) -> Imported:
    """An lcov tracefile (geninfo's format: ``SF:`` ... ``end_of_record`` per file)."""
    figures = _Figures(ctx)
    mismatch: str | None = None
    source: str | None = None
    lines: dict[int, bool] = {}
    declared: dict[str, object] = {}
    test_names: set[str] = set()
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, raw in enumerate(iter(lambda: handle.readline(_LINE_CAP), ""), 1):
                line = raw.strip()
                if not line:
                    continue
                if line == "end_of_record":
                    if source is None:
                        raise ImportRefused(f"line {number}: end_of_record without SF:")
                    covered = sum(lines.values())
                    if mismatch is None:
                        mismatch = declared_mismatch(f"the record of {cap_line(source, 200)!r}",
                                                     declared, {"LF": len(lines), "LH": covered})
                    figures.file_done(source, len(lines), covered)
                    source, lines, declared = None, {}, {}
                    continue
                key, _, value = line.partition(":")
                if key not in _LCOV_KEYS:
                    raise ImportRefused(f"line {number} is not lcov: {cap_line(line, 80)!r}")
                if key == "TN" and value and len(test_names) < 20:
                    test_names.add(cap_line(value, 80))
                elif key == "SF":
                    source = value
                elif key == "DA":
                    if source is None:
                        raise ImportRefused(f"line {number}: DA: before any SF:")
                    where, _, hits = value.partition(",")
                    count = hits.split(",", 1)[0]
                    if not where.isdigit() or not count.lstrip("-").isdigit():
                        raise ImportRefused(f"line {number}: DA:{cap_line(value, 40)} is not "
                                            "line,hits")
                    lines[int(where)] = lines.get(int(where), False) or int(count) > 0
                elif key in ("LF", "LH"):
                    declared[key] = value
    except OSError as exc:
        raise ImportRefused(f"not readable: {exc.strerror or exc}") from None
    if source is not None:
        mismatch = mismatch or f"the record of {cap_line(source, 200)!r} has no end_of_record"
    return Imported(format="lcov", variant="lcov", producer="unknown", result=figures.result(),
                    cases=figures.files, tally=figures.tally, mismatch=mismatch)
