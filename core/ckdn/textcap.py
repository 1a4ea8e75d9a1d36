"""The text policy of every string a digest carries: clean, single-line, width-capped.

ANSI escape sequences are stripped; other control characters (all C0 but tab,
and DEL) and lone surrogates become U+FFFD, so no character costs more than four
encoded bytes and a reader never receives terminal control codes. Together with
the width caps below, that is what makes the digest's byte bound provable from
the numbers alone.

Every cut is counted where it happened, never silent: a capped string ends in
``... [+N chars]``, N being the characters the reader does not see.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "ARTIFACT_WIDTH",
    "CHECK_WIDTH",
    "ID_WIDTH",
    "KIND_WIDTH",
    "LINE_WIDTH",
    "MESSAGE_WIDTH",
    "RUN_DIR_WIDTH",
    "as_text",
    "cap",
    "clean_cap",
    "clean_line",
    "cut",
    "escapes_length",
    "hold_back_escape",
    "replace_unsafe",
    "strip_ansi",
    "unsurrogate",
]

# Width caps, in characters (after cleaning). No cleaned character encodes to more
# than 4 bytes, which is what makes the byte bound provable from these numbers.
MESSAGE_WIDTH = 500  # finding message, note, status_reason
LINE_WIDTH = 300  # snippet line, log tail line, gate failure, summary string
ID_WIDTH = 300  # finding id and location, summary key
KIND_WIDTH = 100
CHECK_WIDTH = 200
RUN_DIR_WIDTH = 1024
ARTIFACT_WIDTH = 255

_REPLACEMENT = "\ufffd"
_ESC_WINDOW = 4096  # longer than any sequence _ansi() matches

# The patterns are compiled on first use: a passing run cleans a few short ASCII
# strings and needs none of them, and compiling them costs more than that run's
# whole digest.


@functools.cache
def _ansi() -> re.Pattern[str]:
    """ANSI escapes: CSI (colours, cursor), OSC (titles, hyperlinks), two-character ESC
    sequences. Lengths are bounded so a streamed line, which can only hold back a
    window of text at a chunk boundary, strips exactly what a whole line would."""
    return re.compile(r"\x1b(?:\[[0-?]{0,256}[ -/]{0,16}[@-~]|\][^\x07\x1b]{0,2048}(?:\x07|\x1b\\)"
                      r"|[@-Z\\^_])")


@functools.cache
def _ansi_prefix() -> re.Pattern[str]:
    """A suffix that may be the start of an escape sequence cut by a chunk boundary."""
    return re.compile(r"\x1b(?:\[[0-?]{0,256}[ -/]{0,16}|\][^\x07\x1b]{0,2048}\x1b?)?\Z")


@functools.cache
def _unsafe() -> re.Pattern[str]:
    return re.compile("[\x00-\x08\x0a-\x1f\x7f\ud800-\udfff]")


@functools.cache
def _cap_mark() -> re.Pattern[str]:
    return re.compile(r"\.\.\. \[\+(\d{1,18}) chars\]\Z")


def clean_cap(text: str, width: int) -> str:
    """Strip ANSI sequences, cap to ``width``, then replace unsafe characters.

    Replacing keeps the length, so it runs on the capped text only: a 100 MB
    message costs one scan for escapes, not a replacement per control character.
    """
    return replace_unsafe(cap(strip_ansi(text), width))


def clean_line(value: object, width: int) -> str:
    """``value`` as one clean, capped line: the form of every single-line digest string."""
    return clean_cap(_one_line(as_text(value)), width)


def _one_line(text: str) -> str:
    parts = text.splitlines()
    if len(parts) <= 1:
        return parts[0] if parts else ""
    return " ".join(stripped for part in parts if (stripped := part.strip()))


def cap(text: str, width: int) -> str:
    """Cut ``text`` to ``width`` characters with a counted ``... [+N chars]`` marker.

    A marker already at the end (a parser capped the line first) is merged, so the
    count stays the number of characters the reader does not see.
    """
    if len(text) <= width:
        return text
    body, prior = text, 0
    if text.endswith(" chars]"):
        mark = _cap_mark().search(text, len(text) - 40)
        if mark:
            body, prior = text[: mark.start()], int(mark.group(1))
    if len(body) <= width:
        return text
    return f"{body[:width]}... [+{len(body) - width + prior} chars]"


def cut(text: str, width: int) -> str:
    """Like :func:`cap`, but an existing marker is just text.

    For raw tool output (a log line): a marker there was printed by the tool, not
    left by an earlier cap, so it must not change the count.
    """
    if len(text) <= width:
        return text
    return f"{text[:width]}... [+{len(text) - width} chars]"


def strip_ansi(text: str) -> str:
    """``text`` without its ANSI escape sequences."""
    return _ansi().sub("", text) if "\x1b" in text else text


def replace_unsafe(text: str) -> str:
    """Control characters and lone surrogates replaced by U+FFFD; the length is kept."""
    if text.isascii() and text.isprintable():  # the usual case, without a regex
        return text
    return _unsafe().sub(_REPLACEMENT, text)


def escapes_length(text: str) -> int:
    """How many characters :func:`strip_ansi` would remove from ``text``."""
    if "\x1b" not in text:
        return 0
    return sum(match.end() - match.start() for match in _ansi().finditer(text))


def hold_back_escape(text: str) -> tuple[str, str]:
    """Split ``text`` into ``(complete, carry)``, ``carry`` a possibly cut escape at its end.

    Text decoded from one chunk of a stream may end inside an escape sequence; the
    caller prepends ``carry`` to the next chunk's text, so the sequence is stripped
    whole rather than shown in part.
    """
    if "\x1b" in text[-_ESC_WINDOW:]:
        partial = _ansi_prefix().search(text, max(0, len(text) - _ESC_WINDOW))
        if partial:
            return text[: partial.start()], text[partial.start():]
    return text, ""


def as_text(value: object) -> str:
    """Any value a parser handed over, as text (``None`` is empty, bytes decode leniently)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def unsurrogate(text: str) -> str:
    """Valid UTF-8 for text that may carry ``surrogateescape`` bytes (argv, paths)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape" if _escaped_only(text) else "replace"
                           ).decode("utf-8", "replace")
    return text


def _escaped_only(text: str) -> bool:
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in text)
