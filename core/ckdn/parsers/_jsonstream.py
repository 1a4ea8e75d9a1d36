"""Reading a JSON report in bounded memory: its structure walked, its values one at a time."""

from __future__ import annotations

import io
import json
import os
import re

from ckdn.parsers.base import ArtifactError, ParseContext

# ``json.load`` turns a report into objects all at once: a 500 MB SARIF log costs
# 3.6 GB, and a report that is one 1 GiB string costs three times that. A parser
# needs far less: the items of a few arrays, one at a time, and a few small
# values. So :class:`JsonStream` walks the document's structure itself (objects,
# arrays and the separators between their members) over a bounded buffer of the
# file's text, and hands every value a parser asks for to ``json``'s own C
# decoder, which decodes it from the buffer. A parser says what it wants where:
#
# * :meth:`~JsonStream.items` decodes an array's items one by one;
# * :meth:`~JsonStream.members` yields an object's keys, the parser then reading
#   each member's value in any of these ways (one it leaves alone is skipped);
# * :meth:`~JsonStream.value` decodes one value whole;
# * :meth:`~JsonStream.skip` steps over one value of any size without keeping it.
#
# Nothing decoded is larger than ``cap`` characters of JSON text (:data:`VALUE_CAP`):
# a larger value is refused with :class:`TooLarge` before it is decoded, so the
# parser says so (``parser_ok=False``) instead of loading it. Memory is the buffer
# plus one value; time is linear in the file (a value is decoded once, a skipped
# string is scanned with ``str.find``). What ``json.loads`` refuses, this refuses
# too (``ValueError``), except inside a skipped string longer than the buffer,
# which is only checked for its end and for control characters.

try:
    from _json import scanstring  # json's own C string scanner
except ImportError:  # pragma: no cover - an interpreter without json's C accelerator
    from json.decoder import (  # type: ignore[attr-defined,no-redef]
        py_scanstring as scanstring,
    )

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from typing import IO, Any

__all__ = ["CHUNK", "MAX_DEPTH", "VALUE_CAP", "JsonStream", "NameSet", "TooLarge", "find_report",
           "kind_of", "unreadable"]

#: The largest value decoded, in characters of its JSON text. Decoded, a value takes
#: several times its text (a list of small numbers about nine times), so 2 Mi
#: characters keep a parser well inside 64 MiB; no real report has an item near it.
VALUE_CAP = 2 * 1024 * 1024
#: Characters read from the file at a time.
CHUNK = 1 << 20
#: How deep the walk descends into values too large to decode at once.
MAX_DEPTH = 64

_WS = re.compile(r"[ \t\n\r]*")
_COMMA = re.compile(r"[ \t\n\r]*,[ \t\n\r]*")
#: A property name and its colon as documents write them (no escape, no control character),
#: read by one match; any other name goes the general way (:meth:`JsonStream._key`).
_PLAIN_NAME = re.compile(r'[ \t\n\r]*"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*')
_CONTROL = re.compile(r"[\x00-\x1f]")
#: The separator of an array of objects indented by two (ruff's, ``json.dumps(indent=2)``'s),
#: and how far it takes the reader: :data:`_COMMA`'s match there, without the regex.
_PRETTY_COMMA = ",\n  {"
_PRETTY_SKIP = len(_PRETTY_COMMA) - 1
#: How close to the buffer's end a decoding error must be to mean "the value goes on".
_NEAR_END = 8
#: An array's items are read on past this many characters left in the buffer (at most a
#: chunk's), so an item is seldom cut at the buffer's end: a decode that fails there costs
#: a count of the buffer's newlines (``JSONDecodeError``'s line number), twice an item,
#: a tenth of a 100,000-finding ruff report.
_READ_AHEAD = 1 << 16


class TooLarge(ValueError):
    """One value of the document is larger than the reader decodes (``cap`` characters)."""

    def __init__(self, cap: int, position: int, what: str = "value") -> None:
        super().__init__(f"a single JSON {what} of more than {cap:,} characters (at character "
                         f"{position:,}), too large to read")
        self.position = position


class JsonStream:
    """A pull reader over one JSON document in a text file, in bounded memory."""

    __slots__ = ("_base", "_buf", "_chunk", "_decode", "_depth", "_eof", "_handle", "_pos",
                 "_scan", "cap")

    def __init__(self, handle: IO[str], *, cap: int = VALUE_CAP, chunk: int = CHUNK,
                 parse_constant: Callable[[str], Any] | None = None) -> None:
        """``parse_constant``, as ``json.loads`` takes it, may refuse NaN and Infinity."""
        self._handle = handle
        self._chunk = chunk
        self.cap = cap
        self._buf = ""
        self._pos = 0  # in the buffer
        self._base = 0  # the document position of the buffer's first character
        self._eof = False
        self._depth = 0
        decoder = json.JSONDecoder(parse_constant=parse_constant)
        self._decode = decoder.raw_decode
        #: the C scanner raw_decode wraps: the items loop calls it straight (one Python frame
        #: less an item); it raises StopIteration where raw_decode raises JSONDecodeError
        self._scan: Callable[[str, int], tuple[Any, int]] = (
            decoder.scan_once)  # type: ignore[attr-defined]

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, cap: int = VALUE_CAP) -> JsonStream:
        """A reader over the file at ``path``, in the encoding ``json.load`` would detect
        (UTF-8, with or without a BOM, or UTF-16/32); :meth:`close` it, or use ``with``."""
        raw = open(path, "rb")  # noqa: SIM115 - the reader closes it
        try:
            head = raw.read(4)
            raw.seek(0)
            handle = io.TextIOWrapper(raw, encoding=json.detect_encoding(head),
                                      errors="surrogatepass", newline="")
        except BaseException:
            raw.close()
            raise
        return cls(handle, cap=cap)

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> JsonStream:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- the buffer ------------------------------------------------------------------------

    @property
    def position(self) -> int:
        """Characters of the document read past."""
        return self._base + self._pos

    def _more(self) -> bool:
        """Drop what was read past, append the next chunk; False at the end of the file."""
        if self._eof:
            return False
        if self._pos:
            self._buf = self._buf[self._pos:]
            self._base += self._pos
            self._pos = 0
        more = self._handle.read(self._chunk)
        if not more:
            self._eof = True
            return False
        self._buf += more
        return True

    def peek(self) -> str:
        """The next character that is not whitespace (``""`` at the end of the document)."""
        while True:
            end = _WS.match(self._buf, self._pos).end()  # type: ignore[union-attr]
            self._pos = end
            if end < len(self._buf):
                return self._buf[end]
            if not self._more():
                return ""

    def _error(self, message: str) -> ValueError:
        return ValueError(f"{message} at character {self.position:,}")

    # -- values ----------------------------------------------------------------------------

    def value(self) -> Any:
        """The next value, decoded; :class:`TooLarge` when its text passes ``cap``."""
        first = self.peek()
        if not first:
            raise self._error("expecting a value, found the end of the document")
        number = first in "-0123456789"
        while True:
            start = self._pos
            try:
                value, end = self._decode(self._buf, start)
            except json.JSONDecodeError as exc:
                if not self._incomplete(exc):
                    raise self._fail(exc) from None
                self._grow(start)
                continue
            except RecursionError:
                raise self._error("JSON nested too deeply") from None
            if number and len(self._buf) - end <= 2 and not self._eof:
                self._grow(start)  # "12" may be "123", "1." may be "1.5": read on
                continue
            if end - start > self.cap:
                raise TooLarge(self.cap, self._base + start)
            self._pos = end
            return value

    def _incomplete(self, exc: json.JSONDecodeError) -> bool:
        """Whether a decoding error may only mean that the value runs past the buffer."""
        if self._eof:
            return False
        return exc.pos >= len(self._buf) - _NEAR_END or exc.msg.startswith("Unterminated string")

    def _fail(self, exc: json.JSONDecodeError) -> ValueError:
        return ValueError(f"{exc.msg} at character {self._base + exc.pos:,}")

    def _grow(self, start: int) -> None:
        """Read on for the value at ``start``, refusing it once it passes the cap."""
        if len(self._buf) - start > self.cap + _NEAR_END:  # the window looks a little past
            raise TooLarge(self.cap, self._base + start)
        self._pos = start
        if not self._more():
            return  # the next decode reports the document's end as its error

    def skip(self) -> None:
        """Step over the next value, whatever its size, keeping none of it."""
        first = self.peek()
        if first == '"':
            self._skip_string()
        elif first in ("[", "{"):
            try:  # the usual case: the whole value is in the buffer, decoded in C
                _, end = self._decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                if not self._incomplete(exc):
                    raise self._fail(exc) from None
            except RecursionError:
                pass  # walked below, where the depth is checked
            else:
                self._pos = end
                return
            close = "]" if first == "[" else "}"
            if not self._open(first, "a value"):
                return
            while True:
                if close == "}":  # a property name, skipped as any string (no cap)
                    if self.peek() != '"':
                        raise self._error("expecting a property name in double quotes")
                    self._skip_string()
                    if self.peek() != ":":
                        raise self._error("expecting ':' after a property name")
                    self._pos += 1
                self.skip()
                if not self._next(close):
                    return
        else:
            self.value()

    def _skip_string(self) -> None:
        while True:
            start = self._pos
            try:
                _, end = scanstring(self._buf, start + 1, True)
            except json.JSONDecodeError as exc:
                if not self._incomplete(exc):
                    raise self._fail(exc) from None
            else:
                self._pos = end
                return
            if len(self._buf) - start > self.cap:
                break
            if not self._more():
                raise self._error("Unterminated string")
        # Longer than the cap: find the closing quote, chunk by chunk, holding none of it.
        scan = self._pos + 1
        while True:
            buf = self._buf
            quote = buf.find('"', scan)
            if quote < 0:
                if _CONTROL.search(buf, scan):
                    raise self._error("Invalid control character in a string")
                keep = len(buf)
                while keep > scan and buf[keep - 1] == "\\":
                    keep -= 1  # a run of backslashes may escape the next chunk's quote
                self._pos = keep
                if not self._more():
                    raise self._error("Unterminated string")
                scan = 0
                continue
            if _CONTROL.search(buf, scan, quote):
                raise self._error("Invalid control character in a string")
            slashes = quote
            while slashes > scan and buf[slashes - 1] == "\\":
                slashes -= 1
            if (quote - slashes) % 2 == 0:
                self._pos = quote + 1
                return
            scan = quote + 1

    # -- containers ------------------------------------------------------------------------

    def _open(self, bracket: str, what: str) -> bool:
        """Step into ``bracket``; False when the container is empty (and stepped over)."""
        found = self.peek()
        if found != bracket:
            shown = repr(found) if found else "the end of the document"
            raise self._error(f"expected {what}, found {shown}")
        if self._depth >= MAX_DEPTH:
            raise self._error(f"JSON nested deeper than {MAX_DEPTH} levels")
        self._pos += 1
        if self.peek() == ("]" if bracket == "[" else "}"):
            self._pos += 1
            return False
        self._depth += 1
        return True

    def _next(self, close: str) -> bool:
        """After a member: True at ``,`` (another follows), False at ``close`` (the end)."""
        found = self.peek()
        self._pos += 1
        if found == ",":
            return True
        if found == close:
            self._depth -= 1
            return False
        self._pos -= 1
        raise self._error(f"expected ',' or {close!r}, found "
                          + (repr(found) if found else "the end of the document"))

    def elements(self) -> Iterator[None]:
        """Step through an array: once per item, which the caller reads (or it is skipped)."""
        if not self._open("[", "an array"):
            return
        while True:
            self.peek()  # a caller's own peek must not look like reading the item
            mark = self.position
            yield
            if self.position == mark:
                self.skip()
            if not self._next("]"):
                return

    def items(self) -> Iterator[Any]:
        """An array's items, each decoded (:meth:`value`)."""
        if not self._open("[", "an array"):
            return
        decode, cap, comma = self._scan, self.cap, _COMMA.match
        ahead = min(self._chunk, _READ_AHEAD)
        start = _WS.match(self._buf, self._pos).end()  # type: ignore[union-attr]
        while True:
            # The usual item, inline (the loop of a million-item report): an object or a
            # string wholly in the buffer, then a comma. Anything else: the general way.
            buf = self._buf
            if len(buf) - start < ahead and not self._eof:
                self._pos = start
                self._more()  # drops what was read: the item then starts the buffer
                buf, start = self._buf, self._pos
            if start < len(buf) and buf[start] in '{"':
                try:
                    value, end = decode(buf, start)
                except (StopIteration, json.JSONDecodeError, RecursionError):
                    self._pos = start
                    value = self.value()
                else:
                    if end - start > cap:
                        raise TooLarge(cap, self._base + start)
                    self._pos = end
            else:
                self._pos = start
                value = self.value()
            yield value
            if self._buf.startswith(_PRETTY_COMMA, self._pos):  # ruff's layout, no regex
                self._pos = start = self._pos + _PRETTY_SKIP
                continue
            found = comma(self._buf, self._pos)
            if found is not None:
                self._pos = start = found.end()
                continue
            if not self._next("]"):
                return
            start = self._pos

    def members(self) -> Iterator[str]:
        """Step through an object: its keys, each member's value read by the caller (or skipped)."""
        if not self._open("{", "an object"):
            return
        plain, comma, cap, scan = _PLAIN_NAME.match, _COMMA.match, self.cap, self._scan
        while True:
            # The usual member, inline: a plain name, its colon and its value's first
            # character in the buffer (a million-member object reads at C speed).
            found = plain(self._buf, self._pos)
            if (found is not None and found.end() < len(self._buf)
                    and found.end(1) - found.start(1) + 2 <= cap):
                key = found.group(1)
                self._pos = found.end()
            else:
                if self.peek() != '"':
                    raise self._error("expecting a property name in double quotes")
                key = self._key()
                if self.peek() != ":":
                    raise self._error("expecting ':' after a property name")
                self._pos += 1
                self.peek()  # a caller's own peek must not look like reading the value
            mark = self.position
            yield key
            if self.position == mark:  # not read: a scalar wholly in the buffer is decoded in
                buf, start = self._buf, self._pos  # C; a container, :meth:`skip` (one decode)
                end = -1
                if start < len(buf) and buf[start] not in "[{":
                    try:
                        end = scan(buf, start)[1]
                    except (StopIteration, ValueError, RecursionError):
                        end = -1  # not a whole value in the buffer: skip finds out how
                if start < end <= start + cap and (end < len(buf) - 2 or self._eof):
                    self._pos = end
                else:
                    self.skip()
            found = comma(self._buf, self._pos)
            if found is not None and found.end() < len(self._buf):
                self._pos = found.end()
                continue
            if not self._next("}"):
                return

    def _key(self) -> str:
        while True:
            start = self._pos
            try:
                key, end = scanstring(self._buf, start + 1, True)
            except json.JSONDecodeError as exc:
                if not self._incomplete(exc):
                    raise self._fail(exc) from None
                if len(self._buf) - start > self.cap:
                    raise TooLarge(self.cap, self._base + start, "property name") from None
                self._pos = start
                if not self._more():
                    raise self._error("Unterminated string") from None
                continue
            if end - start > self.cap:
                raise TooLarge(self.cap, self._base + start, "property name")
            self._pos = end
            key_text: str = key
            return key_text

    def finish(self) -> None:
        """The document ends here: only whitespace may follow."""
        found = self.peek()
        if found:
            raise self._error(f"unexpected data after the JSON document: {found!r}")


# -- finding and reading a JSON report in the run dir --------------------------------------

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
