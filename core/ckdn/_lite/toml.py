"""Plain TOML, the kind nearly every ``ckdn.toml`` is made of, read without :mod:`tomllib`."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

__all__ = ["read_plain"]

# Importing ``tomllib`` also imports ``typing``, ``string`` and ``datetime`` and
# compiles its regular expressions: a fifth of what ``ckdn run`` cost on a trivial
# check. A ``ckdn.toml`` is plain: ``[table]`` headers and one-line ``key = value``
# pairs whose values are strings, integers, decimals, booleans, and one-line arrays
# and inline tables of those. :func:`read_plain` reads exactly that and returns
# None for anything else (a multi-line or escaped string, a dotted or quoted key on
# the left of ``=``, a date, an exponent, ``inf``, hex, an underscore in a number, a
# key or table defined twice, a malformed line...). The caller then hands the text
# to tomllib, whose answer, a value or an error, is the one that counts.
#
# So what is read here is what tomllib reads, and every error message about a
# config file is tomllib's: the stand-in for :func:`tomllib.loads`, with tomllib as
# its fallback; tests/core/lite/test_toml.py holds the two readers to each other on
# generated documents.

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_DIGITS = frozenset("0123456789")
_WS = " \t"
#: Where a bare value (number, boolean) ends.
_VALUE_END = frozenset(" \t,]}#")


class _NotPlain(Exception):
    """The text is outside the plain subset (or not TOML at all): tomllib decides."""


def read_plain(text: str) -> dict[str, Any] | None:
    """The document tomllib would return for ``text``, or None when ``text`` is not plain."""
    try:
        return _Reader().document(text)
    except _NotPlain:
        return None


class _Reader:
    def __init__(self) -> None:
        self.root: dict[str, Any] = {}
        self.headers: set[tuple[str, ...]] = set()  # tables declared by a [header]
        self.inline: set[int] = set()  # ids of inline tables, which no header may extend

    def document(self, text: str) -> dict[str, Any]:
        table = self.root
        lines = text.split("\n")
        last = len(lines) - 1
        for number, line in enumerate(lines):
            if number < last and line.endswith("\r"):
                line = line[:-1]  # CRLF; a lone CR stays, and is refused below
            if not line.isprintable() and not line.replace("\t", "").isprintable():
                raise _NotPlain  # control characters: TOML allows none outside CRLF and tab
            i = _skip_ws(line, 0)
            if i == len(line) or line[i] == "#":
                continue
            if line[i] == "[":
                table, i = self.header(line, i)
            else:
                i = self.pair(line, i, table)
            _line_end(line, i)
        return self.root

    def header(self, line: str, i: int) -> tuple[dict[str, Any], int]:
        if line.startswith("[[", i):
            raise _NotPlain  # an array of tables
        path: list[str] = []
        i += 1
        while True:
            key, i = _key(line, _skip_ws(line, i), quoted=True)
            path.append(key)
            i = _skip_ws(line, i)
            if i < len(line) and line[i] == ".":
                i += 1
                continue
            if i < len(line) and line[i] == "]":
                break
            raise _NotPlain
        declared = tuple(path)
        if declared in self.headers:
            raise _NotPlain
        self.headers.add(declared)
        table = self.root
        for key in path:
            child = table.setdefault(key, {})
            if not isinstance(child, dict) or id(child) in self.inline:
                raise _NotPlain
            table = child
        return table, i + 1

    def pair(self, line: str, i: int, table: dict[str, Any]) -> int:
        key, i = _key(line, i, quoted=False)
        i = _skip_ws(line, i)
        if i == len(line) or line[i] != "=":
            raise _NotPlain
        value, i = self.value(line, _skip_ws(line, i + 1), nested=True)
        if key in table:
            raise _NotPlain
        table[key] = value
        return i

    def value(self, line: str, i: int, *, nested: bool) -> tuple[Any, int]:
        """One value; ``nested`` allows an array or inline table (of scalars) here."""
        if i == len(line):
            raise _NotPlain
        first = line[i]
        if first in "\"'":
            return _string(line, i)
        if first == "[" and nested:
            return self.array(line, i + 1)
        if first == "{" and nested:
            return self.inline_table(line, i + 1)
        end = i
        while end < len(line) and line[end] not in _VALUE_END:
            end += 1
        return _scalar(line[i:end]), end

    def array(self, line: str, i: int) -> tuple[list[Any], int]:
        items: list[Any] = []
        while True:
            i = _skip_ws(line, i)
            if i < len(line) and line[i] == "]":
                return items, i + 1
            item, i = self.value(line, i, nested=False)
            items.append(item)
            i = _skip_ws(line, i)
            if i < len(line) and line[i] == ",":
                i += 1
            elif i < len(line) and line[i] == "]":
                return items, i + 1
            else:
                raise _NotPlain  # the array goes on past this line, or is malformed

    def inline_table(self, line: str, i: int) -> tuple[dict[str, Any], int]:
        table: dict[str, Any] = {}
        self.inline.add(id(table))
        i = _skip_ws(line, i)
        if i < len(line) and line[i] == "}":
            return table, i + 1
        while True:
            key, i = _key(line, i, quoted=False)
            i = _skip_ws(line, i)
            if i == len(line) or line[i] != "=" or key in table:
                raise _NotPlain
            table[key], i = self.value(line, _skip_ws(line, i + 1), nested=False)
            i = _skip_ws(line, i)
            if i < len(line) and line[i] == ",":
                i = _skip_ws(line, i + 1)  # a comma before "}" is an error for tomllib
            elif i < len(line) and line[i] == "}":
                return table, i + 1
            else:
                raise _NotPlain


def _skip_ws(line: str, i: int) -> int:
    while i < len(line) and line[i] in _WS:
        i += 1
    return i


def _line_end(line: str, i: int) -> None:
    i = _skip_ws(line, i)
    if i < len(line) and line[i] != "#":
        raise _NotPlain


def _key(line: str, i: int, *, quoted: bool) -> tuple[str, int]:
    """A bare key, or with ``quoted`` also a quoted one without escapes."""
    if quoted and i < len(line) and line[i] in "\"'":
        return _string(line, i)
    end = i
    while end < len(line) and line[end] in _BARE:
        end += 1
    if end == i:
        raise _NotPlain
    return line[i:end], end


def _string(line: str, i: int) -> tuple[str, int]:
    """A one-line basic string without escapes, or a one-line literal string."""
    quote = line[i]
    if line.startswith(quote * 3, i):
        raise _NotPlain  # multi-line
    end = line.find(quote, i + 1)
    if end < 0:
        raise _NotPlain
    text = line[i + 1:end]
    if quote == '"' and "\\" in text:
        raise _NotPlain  # escapes
    return text, end + 1


def _scalar(word: str) -> bool | int | float:
    """``true``, ``false``, a decimal integer, or a decimal with a fraction and no exponent."""
    if word == "true":
        return True
    if word == "false":
        return False
    body = word[1:] if word[:1] in ("+", "-") else word
    whole, dot, fraction = body.partition(".")
    if (not whole or not _DIGITS.issuperset(whole) or (len(whole) > 1 and whole[0] == "0")
            or (dot and (not fraction or not _DIGITS.issuperset(fraction)))):
        raise _NotPlain
    try:
        return float(word) if dot else int(word)
    except ValueError:  # more digits than int() converts
        raise _NotPlain from None
