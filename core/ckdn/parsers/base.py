"""The parser protocol in one module: what a parser is given, what it hands back, its guard.

A parser reports facts and never decides a status (:func:`ckdn.reconcile.reconcile` does),
so a confused parser says ``parser_ok=False``; ``ckdn run`` imports this on every run.
"""

from __future__ import annotations

import abc
import os

from ckdn._lite import Record, record
from ckdn.documents.textcap import Snippet, cut, snippet
from ckdn.parsers._loglines import count_lines, log_lines, numbered_lines

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
    from pathlib import Path
    from typing import Any, ClassVar, Protocol, runtime_checkable

__all__ = [
    "ArtifactError",
    "BaseParser",
    "Finding",
    "FindingSink",
    "GenericParser",
    "Option",
    "OptionError",
    "ParseContext",
    "ParseResult",
    "Parser",
    "Snippet",
    "cap_line",
    "crash_result",
    "guarded",
    "option_names",
]

_set = object.__setattr__  # how a frozen record's __init__ stores a field

#: Width cap for one line a parser keeps (snippet line, message). The digest
#: applies its own caps again, counting on from this cut; this only keeps a
#: parser's memory bounded.
LINE_CAP = 500


class OptionError(ValueError):
    """A parser option in ``ckdn.toml`` is unknown or has the wrong type.

    ``key`` is the option name; config turns this into a one-line ConfigError
    naming the file and the ``[check.NAME]`` table.
    """

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


class ArtifactError(ValueError):
    """An artifact path would resolve outside the run directory."""


@record
class Finding(Record):
    """One piece of failure evidence.

    ``id`` is stable across runs (a test node id, ``path:line:rule``...);
    ``location`` is ``path[:line[:col]]``, relative to the check's cwd, 1-based.
    ``detail`` is the snippet; ``detail_omitted`` counts the lines left out of it
    (taken from a :class:`Snippet`, as ``ctx.snippet()`` makes, when not given).
    """

    __slots__ = ("detail", "detail_omitted", "id", "kind", "location", "message")
    id: str
    kind: str
    message: str
    location: str | None
    detail: tuple[str, ...]
    detail_omitted: int

    def __init__(self, id: str, kind: str, message: str,  # noqa: PLR0917 - positional API
                 location: str | None = None, detail: tuple[str, ...] = (),
                 detail_omitted: int | None = None) -> None:
        # One Finding per finding a report holds: field by field, the quickest way.
        _set(self, "id", id)
        _set(self, "kind", kind)
        _set(self, "message", message)
        _set(self, "location", location)
        _set(self, "detail", detail)
        if detail_omitted is None:
            detail_omitted = detail.omitted if isinstance(detail, Snippet) else 0
        _set(self, "detail_omitted", detail_omitted)


@record(frozen=False)
class ParseResult(Record):
    """Facts a parser extracted from one run.

    ``findings_total`` is set by parsers that keep only the first ``ctx.top``
    findings while counting the rest (:class:`FindingSink`); ``None`` means
    ``len(findings)``. ``evidence_expected`` is the parser's promise that a
    nonzero exit code always comes with findings (false only for ``generic``),
    and ``wants_log_tail`` asks for the log tail even on a plain ``fail``;
    ``tail_omits`` names the log lines the findings already say (each starts with one
    of these prefixes, blanks stripped: mypy's JSON records), left out of the tail;
    ``unrun`` (with ``parser_ok`` false) says part of what the run stands for never ran
    (a shard merge missing a shard or a planned test): ``error`` at any exit code.
    The list and dict fields default to new empty ones (``None`` asks for that too).
    """

    __slots__ = ("evidence_expected", "findings", "findings_total", "gate_failures", "notes",
                 "parser_ok", "summary", "tail_omits", "unrun", "wants_log_tail")
    findings: list[Finding]
    summary: dict[str, Any]
    parser_ok: bool
    notes: list[str]
    gate_failures: list[str]
    findings_total: int | None
    evidence_expected: bool
    wants_log_tail: bool
    tail_omits: tuple[str, ...]
    unrun: bool

    def __init__(  # noqa: PLR0917 - positional, as when it was a dataclass
            self, findings: list[Finding] | None = None, summary: dict[str, Any] | None = None,
            parser_ok: bool = True, notes: list[str] | None = None,
            gate_failures: list[str] | None = None, findings_total: int | None = None,
            evidence_expected: bool = True, wants_log_tail: bool = False, *,
            tail_omits: tuple[str, ...] = (), unrun: bool = False) -> None:
        self.findings = [] if findings is None else findings
        self.summary = {} if summary is None else summary
        self.parser_ok = parser_ok
        self.notes = [] if notes is None else notes
        self.gate_failures = [] if gate_failures is None else gate_failures
        self.findings_total = findings_total
        self.evidence_expected = evidence_expected
        self.wants_log_tail = wants_log_tail
        self.tail_omits = tail_omits
        self.unrun = unrun

    @property
    def total(self) -> int:
        """How many findings the run produced, including those not kept."""
        return len(self.findings) if self.findings_total is None else self.findings_total


#: ``(path, cwd) -> shown path``: a report names each file many times (relpath per finding
#: was a third of re-reading 100,000 ruff diagnostics); bounded, cleared when full.
_LOCATED: dict[tuple[str, str], str] = {}


def shown_path(text: str, cwd: str) -> str:
    """``text`` relative to ``cwd`` with forward slashes (absolute when outside it)."""
    shown = _LOCATED.get((text, cwd))
    if shown is not None:
        return shown
    shown = text
    if os.path.isabs(text):
        absolute = os.path.normpath(text)
        try:
            shown = os.path.relpath(absolute, cwd)
        except ValueError:  # another drive on Windows
            shown = absolute
        if shown.startswith(".." + os.sep) and not os.path.exists(os.path.join(cwd, shown)):
            shown = absolute
    shown = shown.replace(os.sep, "/").removeprefix("./")
    if len(_LOCATED) >= 4096:  # bounded: a report naming a new file per finding
        _LOCATED.clear()
    _LOCATED[text, cwd] = shown
    return shown


@record
class ParseContext(Record):
    """What a parser may look at: the run directory, the log, its options.

    ``run_dir`` and ``cwd`` are absolute path strings (a :class:`~pathlib.Path` given
    is kept as its string: ``ckdn run`` does not import :mod:`pathlib`). Artifacts are
    read only from inside ``run_dir`` (see :meth:`artifact`, which returns a ``Path``).
    ``options`` defaults to a new empty dict.
    """

    __slots__ = ("check", "cwd", "max_snippet_lines", "options", "rc", "run_dir", "tap", "top")
    check: str
    run_dir: str
    cwd: str
    rc: int
    options: Mapping[str, Any]
    top: int
    max_snippet_lines: int
    tap: Callable[[Finding], object] | None

    def __init__(  # noqa: PLR0917 - positional, as when it was a dataclass
            self, check: str, run_dir: str | os.PathLike[str], cwd: str | os.PathLike[str],
            rc: int, options: Mapping[str, Any] | None = None, top: int = 20,
            max_snippet_lines: int = 12, tap: Callable[[Finding], object] | None = None
    ) -> None:
        self._assign(check, os.fspath(run_dir), os.fspath(cwd), rc,
                     {} if options is None else options, top, max_snippet_lines, tap)

    def sink(self) -> FindingSink:
        """The sink of the run's findings: keeps ``top``, hands every one to ``tap``."""
        return FindingSink(self.top, self.tap)

    @property
    def log_path(self) -> str:
        return os.path.join(self.run_dir, "full.log")

    def artifact(self, option: str, default: str) -> Path:
        """The path of an artifact named by ``option`` (or ``default``), inside the run dir.

        ``{run_dir}`` in the option value is substituted; a relative value is taken
        from the run dir. A path that resolves outside the run dir (absolute
        elsewhere, ``..``, a symlink that escapes) raises :class:`ArtifactError`,
        which the caller turns into ``parser_ok=False``: reports are read only from
        inside the run directory.
        """
        # Imported here: pathlib costs every green run (generic reads no artifact), and the
        # method must return a Path, the type every parser that reads an artifact uses.
        from pathlib import Path

        raw = str(self.options.get(option, default)).replace("{run_dir}", self.run_dir)
        candidate = Path(self.run_dir, raw)  # an absolute raw replaces run_dir
        root = Path(self.run_dir).resolve()
        resolved = candidate.resolve()
        if resolved != root and root not in resolved.parents:
            raise ArtifactError(f"artifact {option}={raw!r} resolves outside the run directory")
        return resolved

    def location(self, path: str | os.PathLike[str], line: int | None = None,
                 col: int | None = None) -> str:
        """``path[:line[:col]]`` relative to cwd with forward slashes; line/col 1-based."""
        text = shown_path(os.fspath(path), self.cwd)
        if line is not None and line >= 1:
            text += f":{line}"
            if col is not None and col >= 1:
                text += f":{col}"
        return text

    def snippet(self, lines: Iterable[str]) -> Snippet:
        """At most ``max_snippet_lines`` lines, each cut; the lines left out are counted
        (``Snippet.omitted``, shown by the digest as ``... [+N more lines]``)."""
        return snippet(lines, self.max_snippet_lines, LINE_CAP)

    def log_lines(self) -> Iterator[str]:
        """The log, line by line, decoded leniently, streamed in bounded memory: a line past
        64 KiB is cut there, a counted :class:`~ckdn.documents.textcap.Cut` (``_loglines``)."""
        return log_lines(self.log_path)

    def log_spans(self) -> Iterator[tuple[int, int, str]]:
        """``(start, end, line)``: :meth:`log_lines` with each line's span of bytes in the log."""
        return numbered_lines(self.log_path)


def cap_line(line: str, width: int = LINE_CAP) -> str:
    """Cut ``line`` to ``width`` characters, counted (:func:`ckdn.documents.textcap.cut`)."""
    return cut(line, width)


class FindingSink:
    """Keeps the first ``keep`` findings and counts all of them (constant memory, true total).

    ``tap`` (the context's, :meth:`ParseContext.sink`) is handed every finding as it is
    added; a tap with ``positions`` (a set) and ``take(position, finding)`` picks those
    alone, and the others are counted without being built (:meth:`wants`).
    """

    __slots__ = ("_picks", "keep", "kept", "tap", "total")

    def __init__(self, keep: int, tap: Callable[[Finding], object] | None = None) -> None:
        self.keep = keep
        self.kept: list[Finding] = []
        self.total = 0
        self.tap = tap
        self._picks: Any = getattr(tap, "positions", None)

    def add(self, finding: Finding) -> None:
        self.total += 1
        if self.tap is not None:
            if self._picks is None:
                self.tap(finding)
            elif self.total - 1 in self._picks:
                self.tap.take(self.total - 1, finding)  # type: ignore[attr-defined]
        if len(self.kept) < self.keep:
            self.kept.append(finding)

    def keeps(self) -> bool:
        """Whether the next finding is kept (the digest may show it: worth its detail)."""
        return len(self.kept) < self.keep or self._picks is not None

    def wants(self) -> bool:
        """Whether the next finding is looked at (kept, tapped or picked): a parser builds it
        only then, and else counts it (``total += 1``)."""
        if len(self.kept) < self.keep:
            return True
        return self.tap is not None and (self._picks is None or self.total in self._picks)

    def located(self) -> Callable[[str, int, int, str, str, str, int | None], object] | None:
        """The tap's ``located(path, row, col, code, kind, message, cell)``, once this sink
        keeps no more and picks none: a finding whose id is ``path:row:col:code`` and
        location ``path:row:col`` (with a notebook ``cell``: id ``path:cellN:row:col:code``,
        0 for a row or column not known, and location ``path``) handed over as its fields,
        never built (the parser counts it, ``total += 1``); None when the tap takes only
        findings."""
        if self.tap is None or self._picks is not None or len(self.kept) < self.keep:
            return None
        offer = getattr(self.tap, "located", None)
        taken: Any = offer() if callable(offer) else None
        return taken if callable(taken) else None

    def located_file(self) -> Callable[[str, str, Sequence[tuple[int, int, str, str, int | None]]],
                                        object] | None:
        """:meth:`located`, one file's findings at a time: the tap's ``located_file(path,
        kind, [(row, col, code, message, cell), ...])`` (the parser counts them, ``total +=
        len``), or None when the tap offers none (then :meth:`located`, finding by finding)."""
        if self.located() is None:
            return None
        offer = getattr(self.tap, "located_file", None)
        taken: Any = offer() if callable(offer) else None
        return taken if callable(taken) else None

    def result(self, **kwargs: Any) -> ParseResult:
        """A ParseResult carrying the kept findings and the true total."""
        return ParseResult(findings=self.kept, findings_total=self.total, **kwargs)


def crash_result(parser: str, exc: BaseException) -> ParseResult:
    """The facts when parser ``parser`` broke on this run's evidence: loud, never clean."""
    return ParseResult(parser_ok=False, notes=[cap_line(
        f"parser '{parser}' crashed on this run's evidence: {type(exc).__name__}: {exc}")])


def guarded(parser: str, parse: Callable[[ParseContext], ParseResult],
            ctx: ParseContext) -> ParseResult:
    """``parse(ctx)``, or :func:`crash_result` when it raises: the one place the never-raise
    policy is written (only :class:`Exception`: Ctrl-C and SystemExit still stop the run)."""
    try:
        return parse(ctx)
    except Exception as exc:  # the policy: a loud note and parser_ok=False, never silent
        return crash_result(parser, exc)


def contradicted(ctx: ParseContext, result: ParseResult) -> None:
    """The log contradicts the report: a clean result at exit 0 beside a log line saying
    something failed (``9 failed, 5 passed``, ``Found 3 errors``, a formatter's ``would
    reformat``) or a tool's usage line is not trusted (``parse_mismatch``), never a pass."""
    if ctx.rc != 0 or not result.parser_ok or result.total or result.gate_failures:
        return
    # lazy: base is on every `ckdn run` path (tests/core/test_startup.py pins it), and the
    # generic parser, which reads no evidence, never asks the log this
    from ckdn.parsers._logsays import failure_line

    found = failure_line(ctx.log_path)
    if found is None:
        return
    number, line = found
    result.parser_ok = False
    result.notes.append(cap_line(
        f"the log contradicts the report: line {number} says {cut(line.strip(), 200)!r};"
        " a clean report beside it is not trusted"))


if not TYPE_CHECKING:
    class Protocol(metaclass=abc.ABCMeta):  # noqa: B024 - the run-time stand-in of typing's
        """``typing.Protocol`` at run time, without :mod:`typing` (``ckdn run`` never loads
        it): ``isinstance`` holds for any object whose class has every public member."""

        @classmethod
        def __subclasshook__(cls, other: type) -> bool:
            names = [name for name in vars(cls) if not name.startswith("_")]
            found = all(any(name in vars(base) for base in other.__mro__) for name in names)
            return True if found else NotImplemented

    def runtime_checkable(cls: type) -> type:
        """Every run-time protocol here is checkable already (:meth:`Protocol.__subclasshook__`)."""
        return cls


@runtime_checkable
class Parser(Protocol):
    """A parser: a name and a ``parse`` that turns a finished run into facts.

    Optionally ``validate_options(options)``, raising :class:`OptionError` for an option
    it does not take (without it any option is accepted); :class:`BaseParser` gives both.
    """

    @property
    def name(self) -> str: ...

    def parse(self, ctx: ParseContext) -> ParseResult: ...


@record
class Option(Record):
    """Declares one parser option: its kind and bounds.

    ``kind`` is ``"str"``, ``"bool"``, ``"int"``, ``"number"`` (int or float,
    finite), ``"str_list"`` or ``"bool_or_names"`` (true, false, or a list of
    package names as PEP 508 spells them); ``choices`` limits string values (and
    every item of a ``str_list``).
    """

    __slots__ = ("choices", "help", "kind", "maximum", "minimum")
    kind: str
    minimum: float | None
    maximum: float | None
    choices: tuple[str, ...]
    help: str

    def __init__(self, kind: str, minimum: float | None = None, maximum: float | None = None,
                 choices: tuple[str, ...] = (), help: str = "") -> None:
        self._assign(kind, minimum, maximum, choices, help)

    def check(self, key: str, value: Any) -> None:
        """Raise OptionError unless ``value`` fits this option."""
        kind = self.kind
        if kind == "str":
            if not isinstance(value, str):
                raise OptionError(key, f"option '{key}' must be a string, not {_tname(value)}")
            self._check_choice(key, value)
        elif kind == "bool":
            if not isinstance(value, bool):
                raise OptionError(key, f"option '{key}' must be true or false, not {_tname(value)}")
        elif kind in ("int", "number"):
            ok = isinstance(value, int) or (kind == "number" and isinstance(value, float))
            if isinstance(value, bool) or not ok:
                want = "an integer" if kind == "int" else "a number"
                raise OptionError(key, f"option '{key}' must be {want}, not {_tname(value)}")
            if isinstance(value, float) and not _finite(value):
                raise OptionError(key, f"option '{key}' must be a finite number, not {value}")
            if self.minimum is not None and value < self.minimum:
                raise OptionError(key, f"option '{key}' must be >= {self.minimum:g}, not {value}")
            if self.maximum is not None and value > self.maximum:
                raise OptionError(key, f"option '{key}' must be <= {self.maximum:g}, not {value}")
        elif kind == "str_list":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise OptionError(key, f"option '{key}' must be a list of strings")
            for item in value:
                self._check_choice(key, item)
        elif kind == "bool_or_names":
            bad = None if isinstance(value, bool) else first_bad_name(value)
            if bad is not None:
                raise OptionError(key, f"option '{key}' must be true, false or a list of "
                                  f"package names, not {_tname(value)}{bad}")
        else:  # pragma: no cover - a parser declared an option kind that does not exist
            raise OptionError(key, f"option '{key}' has unknown kind {kind!r}")

    def _check_choice(self, key: str, value: str) -> None:
        if self.choices and value not in self.choices:
            allowed = ", ".join(repr(c) for c in self.choices)
            raise OptionError(key, f"option '{key}' must be one of {allowed}, not {value!r}")


_INF = float("inf")


def _finite(value: float) -> bool:
    return -_INF < value < _INF  # math.isfinite without loading math; NaN compares false


def first_bad_name(value: Any) -> str | None:
    """``None`` for a list of package names as PEP 508 allows them; else why not (``""`` for
    a non-list): a typo like ``"requests>=2"`` is refused when the config loads."""
    if not isinstance(value, list):
        return ""
    for item in value:
        if not (isinstance(item, str) and _is_package_name(item)):
            return f" ({cut(repr(item), 60)} is not a package name)"
    return None


def _is_package_name(name: str) -> bool:
    """PEP 508's ``[A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9]``, case-blind, without :mod:`re`."""
    return (name.isascii() and name[:1].isalnum() and name[-1:].isalnum()
            and all(c.isalnum() or c in "._-" for c in name))


def _tname(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a float", str: "a string",
            list: "an array", dict: "a table"}.get(type(value), type(value).__name__)


class BaseParser:
    """Convenience base: declares options in ``OPTIONS``, validates them, guards the parse.

    Subclasses set ``name`` and ``OPTIONS`` and implement :meth:`read`; :meth:`parse`
    runs it under the crash guard (:func:`guarded`), written here once
    for every parser that derives from this base, so an exception nobody foresaw is
    loud facts, never a traceback, whoever calls the parser. A subclass that
    overrides ``parse`` itself keeps working (ckdn guards every parser it runs).
    """

    name: ClassVar[str] = ""
    OPTIONS: ClassVar[Mapping[str, Option]] = {}
    #: Whether a clean result at exit 0 is held against what the log says
    #: (:func:`contradicted`); only a parser that reads no evidence at all turns it off.
    CHECKS_LOG: ClassVar[bool] = True

    def validate_options(self, options: Mapping[str, Any]) -> None:
        for key, value in options.items():
            spec = self.OPTIONS.get(key)
            if spec is None:
                raise OptionError(key, f"parser '{self.name}' takes no option '{key}'"
                                  + _known(self.OPTIONS))
            spec.check(key, value)

    def parse(self, ctx: ParseContext) -> ParseResult:
        """:meth:`checked_read` under the crash guard: what ckdn calls."""
        return guarded(self.name, self.checked_read, ctx)

    def checked_read(self, ctx: ParseContext) -> ParseResult:
        """:meth:`read`, held against what the log says (:func:`contradicted`)."""
        result = self.read(ctx)
        if self.CHECKS_LOG:
            contradicted(ctx, result)
        return result

    def read(self, ctx: ParseContext) -> ParseResult:
        """This run's evidence as facts: what a subclass implements."""
        raise NotImplementedError(f"parser '{self.name}' ({type(self).__name__}) defines "
                                  "neither read(ctx) nor parse(ctx)")


class GenericParser(BaseParser):
    """The ``generic`` parser: exit code only (:mod:`ckdn.parsers.generic` names it too).

    It lives here, not in a module of its own, because it is the default parser and this
    module is on every run's path: a module more costs an import (about 0.3 M instructions).
    It promises no findings, so a nonzero exit code with nothing extracted is a plain
    ``fail`` (not ``error``), and it always asks for the log tail: without findings, the
    tail is the only evidence a reader gets. Its summary holds the log's size in lines
    (``log_lines``, a key consumers of the published parser read): it tells a reader how
    much the tail left out. Counting is one pass over the bytes in 1 MiB blocks, never
    decoded (about 5 ms per 10 MB, cached).
    """

    name = "generic"
    CHECKS_LOG = False  # the exit code is the verdict: what the log says is the user's

    def read(self, ctx: ParseContext) -> ParseResult:
        result = ParseResult(evidence_expected=False, wants_log_tail=True)
        try:
            result.summary = {"log_lines": count_lines(ctx.log_path)}
        except OSError as exc:  # a check replaced its own full.log: the exit code still counts
            result.notes.append(f"full.log not counted: {exc.strerror or exc}")
        return result


def _known(options: Mapping[str, Option]) -> str:
    if not options:
        return " (it takes none)"
    return " (it takes: " + ", ".join(sorted(options)) + ")"


def option_names(parser: object) -> Sequence[str]:
    """Names of the options a parser declares, for did-you-mean suggestions."""
    options: Any = getattr(parser, "OPTIONS", None)
    return sorted(options) if callable(getattr(options, "keys", None)) else []
