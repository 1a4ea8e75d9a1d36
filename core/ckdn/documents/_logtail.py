"""The end of ``full.log``, read so the cost is the tail and never the log."""

from __future__ import annotations

import codecs
import os

from ckdn.documents.textcap import (
    LINE_WIDTH,
    escapes_length,
    hold_back_escape,
    inert_prefix,
    marked,
    strip_ansi,
)
from ckdn.evidence_files import open_log
from ckdn.redact import open_block_before

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import IO

    from ckdn.redact import Redaction

# A digest that shows a log tail must stay cheap for a 2 GB log or a 100 MB single
# line, so the log is read backwards from its end in bounded chunks, and a huge
# line is streamed: only its first ``width`` characters are kept, the rest counted.


_CHUNK_MIN = 1 << 14
_CHUNK_MAX = 1 << 20
#: A log tail up to this many bytes is read at once rather than streamed per line.
_TAIL_IN_MEMORY = 1 << 22


def read_log_tail(log_path: str | os.PathLike[str], lines: int,
                  width: int = LINE_WIDTH, redaction: Redaction | None = None) -> list[str]:
    """The last ``lines`` lines of a log, cleaned and width-capped.

    Reads backwards from the end in bounded chunks, so the cost is the tail, never
    the log: memory stays constant for a 2 GB log or a 100 MB single line. Each line
    is decoded as UTF-8 with ``errors="replace"``, loses its ANSI sequences, and
    keeps its first ``width`` characters plus a ``... [+N chars]`` marker counting
    the rest. A missing log has no tail.

    A tail of at most :data:`_TAIL_IN_MEMORY` bytes is read in one go; a larger one
    (a huge line) is streamed line by line, with the same result.

    With a ``redaction``, each line's first ``width`` characters and a margin are kept
    (ANSI stripped) and the lines redacted together before they are cut: a secret the
    width cut or a chunk edge splits is read whole, and a key block across lines is
    found, also one whose BEGIN is above the tail (:func:`ckdn.redact.open_block_before`).
    """
    if lines <= 0:
        return []
    try:
        handle = open_log(log_path)
    except FileNotFoundError:
        return []
    with handle:
        end = handle.seek(0, os.SEEK_END)
        spans = _last_line_spans(handle, end, lines)
        if not spans:
            return []
        keep = width if redaction is None or not redaction.enabled else width + redaction.margin
        first = spans[0][0]
        # a tail that starts inside a key block (its BEGIN above, its END below or never)
        open_block = open_block_before(handle, first) if keep != width else None
        if spans[-1][1] - first > _TAIL_IN_MEMORY:
            heads = [_tail_line(handle, start, stop, keep) for start, stop in spans]
        else:
            handle.seek(first)
            blob = handle.read(spans[-1][1] - first)
            heads = [_short_line(blob[start - first:stop - first], keep)
                     for start, stop in spans]
    if keep != width:
        from ckdn.documents.redacting import redacted_pieces  # here: only to redact a tail

        heads = redacted_pieces(redaction, heads, width, open_block)
    return [_shown(head, omitted, width) for head, omitted in heads]


def _shown(head: str, omitted: int, width: int) -> str:
    """A line's kept head (ANSI stripped) shown in ``width``: inert, cut, counted."""
    shown, taken = inert_prefix(head, width)
    return marked(shown, omitted + len(head) - taken)


def _short_line(raw: bytes, keep: int) -> tuple[str, int]:
    """A line's first ``keep`` characters, ANSI stripped, and how many more it has."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]  # CRLF line ending
    text = strip_ansi(raw.decode("utf-8", "replace"))
    return text[:keep], max(0, len(text) - keep)


def _last_line_spans(handle: IO[bytes], end: int, lines: int) -> list[tuple[int, int]]:
    """Byte spans ``[start, stop)`` of the last ``lines`` lines, oldest first."""
    if end == 0:
        return []
    handle.seek(end - 1)
    if handle.read(1) == b"\n":
        end -= 1  # a final newline ends the last line; it does not start another
    spans: list[tuple[int, int]] = []
    stop = pos = end
    chunk_size = _CHUNK_MIN
    while pos > 0 and len(spans) < lines:
        start = max(0, pos - chunk_size)
        handle.seek(start)
        chunk = handle.read(pos - start)
        cut_at = len(chunk)
        while len(spans) < lines:
            newline = chunk.rfind(b"\n", 0, cut_at)
            if newline < 0:
                break
            spans.append((start + newline + 1, stop))
            stop, cut_at = start + newline, newline
        pos = start
        chunk_size = min(chunk_size * 2, _CHUNK_MAX)
    if len(spans) < lines:
        spans.append((0, stop))
    spans.reverse()
    return spans


def _tail_line(handle: IO[bytes], start: int, stop: int, keep: int) -> tuple[str, int]:
    """One huge line, streamed: its first ``keep`` characters (ANSI stripped) kept, the
    rest only counted (without escape sequences, as :func:`strip_ansi` would leave it)."""
    handle.seek(start)
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    head: list[str] = []
    have = extra = 0
    carry = ""
    remaining = stop - start
    size = _CHUNK_MIN  # small first: the kept head needs only ``keep`` characters
    while True:
        chunk = handle.read(min(size, remaining)) if remaining > 0 else b""
        remaining = remaining - len(chunk) if chunk else 0
        size = min(size * 2, _CHUNK_MAX)
        final = remaining == 0
        if final and chunk.endswith(b"\r"):
            chunk = chunk[:-1]  # CRLF line ending
        if (have >= keep and not carry and not final and chunk.isascii()
                and b"\x1b" not in chunk and not decoder.getstate()[0]):
            extra += len(chunk)  # past the kept head: ASCII without escapes counts 1:1
            continue
        text = carry + decoder.decode(chunk, final=final)
        carry = ""
        if not final:
            text, carry = hold_back_escape(text)
        if have >= keep:  # only counting now
            extra += len(text) - escapes_length(text)
        else:
            text = strip_ansi(text)
            taken = text[:keep - have]
            head.append(taken)
            have += len(taken)
            extra += len(text) - len(taken)
        if final:
            return "".join(head), extra
