"""Finding and reading a tool's JSON report in the run dir: the steps every JSON parser shares."""

from __future__ import annotations

from ckdn.parsers._jsonstream import JsonStream, TooLarge
from ckdn.parsers.base import ArtifactError, ParseContext

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

__all__ = ["JsonStream", "NameSet", "TooLarge", "find_report", "kind_of", "unreadable"]

# bandit, pylint, pip-audit, ruff and SARIF producers all write one JSON file whose
# absence or damage has the same causes (the flag that writes it is missing, the
# tool stopped before writing, the file is cut short, a value in it is too large
# to read), so the notes that explain them are written once here. Reports are
# streamed (:class:`~ckdn.parsers._jsonstream.JsonStream`), never loaded whole:
# what the document must contain, and how it is walked, stays with each parser.

#: What a :class:`NameSet` may hold, counted as characters plus an overhead per name.
NAMES_BUDGET = 8 * 1024 * 1024
_PER_NAME = 100
#: The type ``json.load`` gives a value, by its first character (numbers are decoded).
_KINDS = {"[": "list", "{": "dict", '"': "str", "t": "bool", "f": "bool", "n": "NoneType"}


def find_report(ctx: ParseContext, *, default: str, label: str, needs: str,
                log_tail: Callable[[], str], why: str = "",
                empty: str | None = None) -> tuple[str, Path] | str:
    """``(file name, path)`` of the report named by the ``report`` option, or why there is none.

    ``label`` names the report in notes ("bandit report"), ``needs`` is what the
    command must do to write it ("include -f json -o {run_dir}/"), ``why`` explains
    the exit code, ``log_tail`` quotes the log's last words (read only on the error
    path), and ``empty``, when given, is how an empty file is explained (the tool
    stopped before writing) instead of as unreadable JSON. Open the path with
    :meth:`JsonStream.open`; turn what reading it raises into a note with
    :func:`unreadable`.
    """
    try:
        path = ctx.artifact("report", default)
    except ArtifactError as exc:
        return str(exc)
    if not path.is_file():
        return (f"{label} {path.name} not found in the run dir (exit code {ctx.rc}{why}); "
                f"the command must {needs}{path.name}{log_tail()}")
    if empty is not None and path.stat().st_size == 0:
        return f"{label} {path.name} is empty (exit code {ctx.rc}{why}): {empty}{log_tail()}"
    return path.name, path


def unreadable(label: str, name: str, exc: Exception, log_tail: Callable[[], str], *,
               expected: str = "readable JSON") -> str:
    """The note for a report that could not be read to its end: it counts for nothing."""
    if isinstance(exc, TooLarge):
        return (f"{label} {name} holds {exc}: refused unread, so the report counts for "
                "nothing (a real report has no value near that size)")
    return f"{label} {name} is not {expected}: {type(exc).__name__}: {exc}{log_tail()}"


def kind_of(reader: JsonStream) -> str:
    """The Python type name ``json.load`` would give the next value, without reading it
    (a number, short by nature, is decoded to tell ``int`` from ``float``)."""
    first = reader.peek()
    if first in _KINDS:
        return _KINDS[first]
    return type(reader.value()).__name__ if first else "nothing"


class NameSet:
    """Distinct names (file names, package pins) a report lists, kept up to a budget.

    A report may list millions; past :data:`NAMES_BUDGET` the rest are only counted
    and ``complete`` turns false, so a parser knows its set comparison is no longer
    exact and falls back to counts.
    """

    __slots__ = ("complete", "count", "names", "room")

    def __init__(self, budget: int = NAMES_BUDGET) -> None:
        self.names: set[object] = set()
        self.count = 0
        self.room = budget
        self.complete = True

    def add(self, name: object) -> None:
        self.count += 1
        if name in self.names:
            return
        cost = len(str(name)) + _PER_NAME
        if cost > self.room:
            self.complete = False
            return
        self.room -= cost
        self.names.add(name)

    def __contains__(self, name: object) -> bool:
        return name in self.names
