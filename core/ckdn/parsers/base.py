"""The parser protocol: what a parser is given, and the facts it hands back.

A parser reports facts (findings, summary counts, notes, gate failures, whether
it could read its evidence); it never decides a status. :func:`ckdn.reconcile.reconcile`
is the only place a status is decided, so a parser that is confused must say so
with ``parser_ok=False`` rather than by returning no findings.

Everything here is stdlib-only and cheap to import: ``ckdn run`` imports this
module on every run.
"""

from __future__ import annotations

import os

from ckdn._lite.record import Record, record
from ckdn.documents.textcap import Snippet, cut, snippet

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
    from pathlib import Path
    from typing import Any, ClassVar

    from ckdn.parsers._protocol import Parser
    from ckdn.parsers._sink import FindingSink

__all__ = [
    "ArtifactError",
    "BaseParser",
    "Finding",
    "FindingSink",
    "Option",
    "OptionError",
    "ParseContext",
    "ParseResult",
    "Parser",
    "Snippet",
    "cap_line",
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
    of these prefixes, blanks stripped: mypy's JSON records), left out of the tail.
    The list and dict fields default to new empty ones (``None`` asks for that too).
    """

    __slots__ = ("evidence_expected", "findings", "findings_total", "gate_failures", "notes",
                 "parser_ok", "summary", "tail_omits", "wants_log_tail")
    findings: list[Finding]
    summary: dict[str, Any]
    parser_ok: bool
    notes: list[str]
    gate_failures: list[str]
    findings_total: int | None
    evidence_expected: bool
    wants_log_tail: bool
    tail_omits: tuple[str, ...]

    def __init__(  # noqa: PLR0917 - positional, as when it was a dataclass
            self, findings: list[Finding] | None = None, summary: dict[str, Any] | None = None,
            parser_ok: bool = True, notes: list[str] | None = None,
            gate_failures: list[str] | None = None, findings_total: int | None = None,
            evidence_expected: bool = True, wants_log_tail: bool = False, *,
            tail_omits: tuple[str, ...] = ()) -> None:
        self.findings = [] if findings is None else findings
        self.summary = {} if summary is None else summary
        self.parser_ok = parser_ok
        self.notes = [] if notes is None else notes
        self.gate_failures = [] if gate_failures is None else gate_failures
        self.findings_total = findings_total
        self.evidence_expected = evidence_expected
        self.wants_log_tail = wants_log_tail
        self.tail_omits = tail_omits

    @property
    def total(self) -> int:
        """How many findings the run produced, including those not kept."""
        return len(self.findings) if self.findings_total is None else self.findings_total


#: ``(path, cwd) -> shown path``, as :meth:`ParseContext.location` last worked them out.
_LOCATED: dict[tuple[str, str], str] = {}


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
        from ckdn.parsers._sink import FindingSink

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
        from pathlib import Path  # lazy: the generic parser reads no artifact

        raw = str(self.options.get(option, default)).replace("{run_dir}", self.run_dir)
        candidate = Path(self.run_dir, raw)  # an absolute raw replaces run_dir
        root = Path(self.run_dir).resolve()
        resolved = candidate.resolve()
        if resolved != root and root not in resolved.parents:
            raise ArtifactError(f"artifact {option}={raw!r} resolves outside the run directory")
        return resolved

    def location(self, path: str | os.PathLike[str], line: int | None = None,
                 col: int | None = None) -> str:
        """``path[:line[:col]]`` relative to cwd with forward slashes; line/col 1-based.
        (Called twice per finding of a 100,000-finding report: its paths are remembered.)"""
        key = (os.fspath(path), self.cwd)
        text = _LOCATED.get(key)
        if text is None:
            from ckdn.parsers._locations import shown_path  # lazy: only a finding needs it

            text = shown_path(*key)
            if len(_LOCATED) >= 4096:  # bounded: a report naming a new file per finding
                _LOCATED.clear()
            _LOCATED[key] = text
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
        from ckdn.parsers._loglines import log_lines  # lazy: not every parser reads the log

        return log_lines(self.log_path)

    def log_spans(self) -> Iterator[tuple[int, int, str]]:
        """``(start, end, line)``: :meth:`log_lines` with each line's span of bytes in the log."""
        from ckdn.parsers._loglines import numbered_lines  # lazy, as log_lines

        return numbered_lines(self.log_path)


def cap_line(line: str, width: int = LINE_CAP) -> str:
    """Cut ``line`` to ``width`` characters, counted (:func:`ckdn.documents.textcap.cut`)."""
    return cut(line, width)


if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """``Parser`` and ``FindingSink`` are imported when first asked for (PEP 562): a
        Protocol needs :mod:`typing`, which ``ckdn run`` does not load otherwise, and the
        generic parser, on every green run's path, keeps no findings."""
        if name == "Parser":
            from ckdn.parsers._protocol import Parser as found
        elif name == "FindingSink":
            from ckdn.parsers._sink import FindingSink as found  # type: ignore[assignment]
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = found
        return found


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
            from ckdn.parsers._packagename import first_bad_name  # lazy: one option needs it

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


def _finite(value: float) -> bool:
    import math  # lazy: a shared library that only a float option needs

    return math.isfinite(value)


def _tname(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a float", str: "a string",
            list: "an array", dict: "a table"}.get(type(value), type(value).__name__)


class BaseParser:
    """Convenience base: declares options in ``OPTIONS``, validates them, guards the parse.

    Subclasses set ``name`` and ``OPTIONS`` and implement :meth:`read`; :meth:`parse`
    runs it under the crash guard (:mod:`ckdn.parsers.guard`), written here once
    for every parser that derives from this base, so an exception nobody foresaw is
    loud facts, never a traceback, whoever calls the parser. A subclass that
    overrides ``parse`` itself keeps working (ckdn guards every parser it runs).
    """

    name: ClassVar[str] = ""
    OPTIONS: ClassVar[Mapping[str, Option]] = {}

    def validate_options(self, options: Mapping[str, Any]) -> None:
        for key, value in options.items():
            spec = self.OPTIONS.get(key)
            if spec is None:
                raise OptionError(key, f"parser '{self.name}' takes no option '{key}'"
                                  + _known(self.OPTIONS))
            spec.check(key, value)

    def parse(self, ctx: ParseContext) -> ParseResult:
        """:meth:`read` under the crash guard: what ckdn calls."""
        from ckdn.parsers.guard import guarded  # here: the guard module imports this one

        return guarded(self.name, self.read, ctx)

    def read(self, ctx: ParseContext) -> ParseResult:
        """This run's evidence as facts: what a subclass implements."""
        raise NotImplementedError(f"parser '{self.name}' ({type(self).__name__}) defines "
                                  "neither read(ctx) nor parse(ctx)")


def _known(options: Mapping[str, Option]) -> str:
    if not options:
        return " (it takes none)"
    return " (it takes: " + ", ".join(sorted(options)) + ")"


def option_names(parser: object) -> Sequence[str]:
    """Names of the options a parser declares, for did-you-mean suggestions."""
    from collections.abc import Mapping  # lazy: only a refused option needs it

    options = getattr(parser, "OPTIONS", None)
    return sorted(options) if isinstance(options, Mapping) else []
