"""PEM private key blocks: the one rule that spans lines.

A block is ``-----BEGIN ... PRIVATE KEY-----``, its body lines (base64, the
``Proc-Type:``/``DEK-Info:`` headers, blank lines) and ``-----END ... PRIVATE
KEY-----``. Tools print keys with a prefix on every line (pytest's ``E   ``, a
logger's stamp), so a body line may carry the BEGIN line's prefix. What is
redacted:

* BEGIN to END on one line (a key printed as a ``repr``, ``\\n`` escaped);
* else BEGIN to the end of its line, then the body lines after it, through the
  END line's marker, or up to the last body line when the END never comes (the
  log was cut, the key printed in part): a stray BEGIN takes no ordinary line;
* an END with no BEGIN before it (a log tail that starts inside the key) takes
  the body lines just above it;
* a text that starts inside a block (its BEGIN above the text shown: an evidence
  window, a log tail) takes its body lines from the start: the reader says so
  with the block's prefix, from :func:`open_after` fed every line before the text
  or :func:`open_before` looking back from where the text starts.

Only lines are looked at, never a window of characters, so the same log gives
the same spans whether it is read whole or a line range at a time: a stream
carries the one fact a range can end inside (an open block and its prefix).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import IO, Any, AnyStr

__all__ = ["ANCHOR", "LOOK_BACK", "open_after", "open_before", "pem_spans"]

ANCHOR = "PRIVATE KEY"
_HEADERS = ("Proc-Type:", "DEK-Info:", "Comment:", "Version:")
_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="


class _Marks:
    """The markers as ``str`` or as ``bytes``: a log range is searched as it was read."""

    __slots__ = ("anchor", "base64", "begin", "dashes", "end", "headers", "newline")

    def __init__(self, kind: type[str] | type[bytes]) -> None:
        def cast(text: str) -> Any:
            return text if kind is str else text.encode()

        self.anchor, self.begin, self.end = cast(ANCHOR), cast("-----BEGIN"), cast("-----END")
        self.dashes, self.newline = cast("-----"), cast("\n")
        self.headers = tuple(cast(header) for header in _HEADERS)
        self.base64 = cast(_BASE64)


_STR, _BYTES = _Marks(str), _Marks(bytes)
#: Bytes above a text searched for the BEGIN of a block it starts inside: a key's body
#: (a 16384-bit RSA key is 12 KiB of base64) always fits.
LOOK_BACK = 1 << 16


def open_after(line: str, open_prefix: str | None) -> str | None:
    """The prefix of a block still open after ``line``, given the one open before it
    (None: none is): a forward reader feeds every line it passes."""
    if open_prefix is None and ANCHOR not in line:
        return None
    return pem_spans(line + "\n", open_prefix)[1]


def open_before(handle: IO[bytes], offset: int) -> str | None:
    """The prefix of a block open where the line at ``offset`` of a seekable binary file
    starts (None: none is), read from the nearest line above holding ``PRIVATE KEY``
    within :data:`LOOK_BACK` bytes: a backward reader's way to :func:`open_after`'s
    answer without reading the file from its start."""
    if offset <= 0:
        return None
    start = max(0, offset - LOOK_BACK)
    handle.seek(start)
    above = handle.read(offset - start)
    found = above.rfind(_BYTES.anchor)
    if found < 0:
        return None
    line_start = above.rfind(_BYTES.newline, 0, found) + 1
    if line_start == 0 and start > 0:
        return None  # the anchor's line starts beyond the look-back: no key is that long
    prefix = pem_spans(above[line_start:])[1]
    return None if prefix is None else prefix.decode("utf-8", "replace")


def pem_spans(text: AnyStr, open_prefix: AnyStr | None = None
              ) -> tuple[list[tuple[int, int]], AnyStr | None]:
    """The spans of ``text`` (``str``, or ``bytes`` as a log is read) to redact, and the
    prefix of a block still open at its end.

    ``open_prefix`` is that value from the text before (a stream's previous range):
    ``text`` then starts inside a block, on a line boundary.
    """
    marks = _STR if isinstance(text, str) else _BYTES
    spans: list[tuple[int, int]] = []
    pos = 0
    if open_prefix is not None:
        end, still_open = _walk(text, 0, open_prefix, marks)
        if end > 0:
            spans.append((0, end))
        if still_open:
            return spans, open_prefix
        pos = end
    size = len(text)
    while True:
        found = text.find(marks.anchor, pos)
        if found < 0:
            return spans, None
        line_start = text.rfind(marks.newline, 0, found) + 1
        line_end = text.find(marks.newline, found)
        if line_end < 0:
            line_end = size
        begin = text.rfind(marks.begin, max(pos, line_start), found)
        end_mark = text.rfind(marks.end, max(pos, line_start), found)
        if begin >= 0 and end_mark < begin:
            closing = _closing(text, found, line_end, marks)
            if closing >= 0:  # BEGIN and END on one line
                spans.append((begin, closing))
                pos = closing
                continue
            prefix = text[line_start:begin]
            end, still_open = _walk(text, line_end + 1, prefix, marks)
            spans.append((begin, max(end, line_end)))
            if still_open:
                return spans, prefix
            pos = max(end, line_end)
            continue
        if end_mark >= 0:  # an END whose BEGIN is not in this text
            stop = _marker_end(text, found, line_end, marks)
            prefix = text[line_start:end_mark]
            spans.append((_walk_back(text, line_start, prefix, marks), stop))
            pos = stop
            continue
        pos = found + len(marks.anchor)


def _closing(text: Any, after: int, line_end: int, marks: _Marks) -> int:
    """The end of a ``-----END ... PRIVATE KEY-----`` on the same line, or -1."""
    end_mark = text.find(marks.end, after, line_end)
    if end_mark < 0:
        return -1
    anchor = text.find(marks.anchor, end_mark, line_end)
    if anchor < 0:
        return -1
    return _marker_end(text, anchor, line_end, marks)


def _marker_end(text: Any, anchor: int, line_end: int, marks: _Marks) -> int:
    """Just past the dashes that close the marker whose ``PRIVATE KEY`` is at ``anchor``."""
    dashes = text.find(marks.dashes, anchor, line_end)
    return line_end if dashes < 0 else dashes + len(marks.dashes)


def _lines(text: Any, start: int, marks: _Marks) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each line from ``start`` on (end excludes the newline)."""
    size = len(text)
    while start < size:
        end = text.find(marks.newline, start)
        if end < 0:
            end = size
        yield start, end
        start = end + 1


def _walk(text: Any, start: int, prefix: Any, marks: _Marks) -> tuple[int, bool]:
    """The end of the body lines from ``start`` (through an END line's marker), and
    whether the text ended with the block still open."""
    last = start - 1 if start > 0 else 0
    for line_start, line_end in _lines(text, start, marks):
        content = _content(text[line_start:line_end], prefix)
        if marks.end in content and marks.anchor in content:
            anchor = text.find(marks.anchor, line_start, line_end)
            return _marker_end(text, anchor, line_end, marks), False
        if not _is_body(content, marks):
            return last, False
        last = line_end
    return len(text), True


def _walk_back(text: Any, line_start: int, prefix: Any, marks: _Marks) -> int:
    """The start of the body lines just above the line at ``line_start`` (the END line)."""
    first = line_start
    while first > 0:
        previous = text.rfind(marks.newline, 0, first - 1) + 1
        if not _is_body(_content(text[previous:first - 1], prefix), marks):
            break
        first = previous
    return first


def _content(line: Any, prefix: Any) -> Any:
    if prefix and line.startswith(prefix):
        line = line[len(prefix):]
    return line.strip()


def _is_body(content: Any, marks: _Marks) -> bool:
    if not content:
        return True
    if isinstance(content, str):
        return _BODY.issuperset(content) or content.startswith(_HEADERS)
    return not content.translate(None, marks.base64) or content.startswith(marks.headers)


_BODY = frozenset(_BASE64)
