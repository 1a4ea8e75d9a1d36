"""Reading ``full.log`` line by line in bounded memory: a line longer than the width is cut."""

from __future__ import annotations

import codecs

from ckdn.documents.textcap import Cut
from ckdn.evidence_files import open_log

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["LINE_BYTES", "count_lines", "log_lines", "numbered_lines", "open_log"]

# A tool can print one line of any length (a gigabyte of minified output, a
# progress bar that never prints a newline), and ``for line in handle`` would hold
# all of it, three times over once decoded and stripped. So the log is read in
# 1 MiB blocks, split into lines by ``bytes.split`` (the loop in C); of a line
# longer than :data:`LINE_BYTES` only the first bytes are kept, decoded, and the
# rest is counted as characters while it is read, block by block, and dropped. A
# cut line is a :class:`~ckdn.documents.textcap.Cut` (its ``body`` the kept start,
# ``omitted`` the characters after it), so whatever a parser quotes of it counts
# the cut.
#
# Why 64 KiB: what a parser needs of a line is its start (where every pattern is
# anchored) and, for a few, its end (mypy's ``  [code]``, pre-commit's
# ``Passed``), so the width must exceed any line a tool really prints: diagnostics
# run to a few hundred characters, a message quoting a huge type to a few
# kilobytes, and the longest line of any recorded fixture log is 2,693 bytes
# (ty's SARIF on stdout). A line this wide costs at most 256 KiB as a string, and
# every pattern a parser runs on it is linear, so the width bounds memory and does
# not change the cost per byte. The digest shows at most 500 characters of any line anyway.
#
# The log is opened without following a symlink and only when it is a regular
# file (a check can replace its own ``full.log``); a missing log has no lines.

#: The most bytes of one line a parser is given (so at most this many characters).
LINE_BYTES = 64 * 1024
#: The block the log is read in.
_BLOCK = 1 << 20


def count_lines(path: str) -> int:
    """The number of lines in the log, as :func:`log_lines` would yield them (a last line
    without a newline counts), read in blocks and never decoded; 0 for a missing log."""
    try:
        handle = open_log(path)
    except FileNotFoundError:
        return 0
    lines = 0
    last = b"\n"
    with handle:
        while block := handle.read(_BLOCK):
            lines += block.count(b"\n")
            last = block[-1:]
    return lines + (last != b"\n")


def log_lines(path: str, width: int = LINE_BYTES) -> Iterator[str]:
    """The log's lines without their line endings, each cut to ``width`` bytes of UTF-8.

    Decoded leniently (an invalid byte becomes U+FFFD); a cut line is a ``Cut``.
    """
    for part in _blocks(path, width):
        if isinstance(part, tuple):
            yield part[0]
        elif max(map(len, part)) <= width:  # the usual block: a tight loop
            for raw in part:
                yield raw.decode("utf-8", "replace").rstrip("\r")
        else:
            for raw in part:
                yield _line(raw, width)


def numbered_lines(path: str, width: int = LINE_BYTES) -> Iterator[tuple[int, int, str]]:
    """``(start, end, line)`` for every line, as :func:`log_lines`: ``start`` the byte
    offset of its first byte, ``end`` of the byte after its newline (the log's size for a
    last line without one)."""
    offset = 0
    for part in _blocks(path, width):
        if isinstance(part, tuple):
            yield offset, offset + part[1], part[0]
            offset += part[1]
            continue
        for raw in part:
            end = offset + len(raw) + 1
            yield offset, end, _line(raw, width)
            offset = end


def _line(raw: bytes, width: int) -> str:
    if len(raw) > width:
        return _cut(raw[:width], raw[width:])
    return raw.decode("utf-8", "replace").rstrip("\r")


def _blocks(path: str, width: int) -> Iterator[list[bytes] | tuple[str, int]]:
    """The log's lines, block by block: split by the C loop, a line past a block streamed.

    Each part is a list of whole lines (their bytes, without the newline), or, for
    a line running past the block it starts in (whose rest was read and counted,
    never held) and for a last line without a newline, ``(the line, its length in
    bytes with its newline)``.
    """
    try:
        handle = open_log(path)
    except FileNotFoundError:
        return
    with handle:
        read = handle.read
        rest = b""
        while block := read(_BLOCK):
            if rest:
                block = rest + block  # ``rest`` is at most ``width`` bytes: a bounded copy
            while True:
                pieces = block.split(b"\n")
                rest = pieces.pop()
                if pieces:
                    yield pieces
                if len(rest) <= width:
                    break
                line, block, length = _long_line(rest, read, width)
                rest = b""
                yield line, length
                if not block:
                    break
        if rest:  # the last line, without a newline
            yield _line(rest, width), len(rest)


def _long_line(head: bytes, read: Callable[[int], bytes], width: int) -> tuple[str, bytes, int]:
    """``(the cut line, the bytes after its newline, its length with the newline)``.

    ``head`` holds the line's first bytes and no newline; the rest is read in
    blocks and only counted.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    body = decoder.decode(head[:width])
    counter = _Counter(decoder)
    counter.add(head[width:])
    length = len(head)
    while block := read(_BLOCK):
        newline = block.find(b"\n")
        if newline >= 0:
            counter.add(block[:newline])
            length += newline + 1
            return _finish(body, counter), block[newline + 1:], length
        counter.add(block)
        length += len(block)
    return _finish(body, counter), b"", length


def _cut(head: bytes, tail: bytes) -> str:
    """A line held whole in a block, longer than the width: its head kept, ``tail`` counted."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    body = decoder.decode(head)
    counter = _Counter(decoder)
    counter.add(tail)
    return _finish(body, counter)


def _finish(body: str, counter: _Counter) -> str:
    omitted = counter.close()
    return Cut(body, omitted) if omitted else body.rstrip("\r")


class _Counter:
    """Counts the characters of a cut line's rest, fed in pieces.

    Carriage returns at the very end are the line ending (as ``rstrip("\\r")`` treats
    them on a line that is not cut), so they count only once more text follows.
    """

    __slots__ = ("count", "decoder", "held_cr")

    def __init__(self, decoder: codecs.IncrementalDecoder) -> None:
        self.decoder = decoder
        self.count = 0
        self.held_cr = 0

    def add(self, piece: bytes) -> None:
        stripped = piece.rstrip(b"\r")
        crs = len(piece) - len(stripped)
        if stripped:
            if self.held_cr:  # they were text after all: decode them in their place
                stripped = b"\r" * self.held_cr + stripped
                self.held_cr = 0
            if stripped.isascii() and not self.decoder.getstate()[0]:
                self.count += len(stripped)  # the usual case: one byte, one character
            else:
                self.count += len(self.decoder.decode(stripped))
        self.held_cr += crs

    def close(self) -> int:
        return self.count + len(self.decoder.decode(b"", final=True))
